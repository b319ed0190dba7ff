// Package diffview is the diff view (D): the open session's stored
// thread against its effective one, as diff_session renders it, a line
// per message under a header per operation, in a box in front of the
// thread that scrolls. It is a dialog of tui/dialog's kind: the root
// forwards it the keys, and it asks to be closed with esc or q.
package diffview

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/ops/reads"
	"weft/themes"
	"weft/tui/dialog"
)

// Differ reads a session's diff: the Desk the root holds.
type Differ interface {
	DiffSession(ctx context.Context, a reads.DiffSessionArgs) (reads.DiffSessionResult, error)
}

// Loaded is the diff Load read, for the root to open the view on, or
// the one Reload read (Again), for the view open to show.
type Loaded struct {
	Result reads.DiffSessionResult
	Err    error
	Again  bool
}

// Load reads session sid's diff whole, in a command.
func Load(d Differ, sid string) tea.Cmd { return load(d, sid, false) }

// Reload reads session sid's diff again (it was written to), for the
// view open.
func Reload(d Differ, sid string) tea.Cmd { return load(d, sid, true) }

func load(d Differ, sid string, again bool) tea.Cmd {
	return func() tea.Msg {
		res, err := d.DiffSession(context.Background(), reads.DiffSessionArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
		return Loaded{res, err, again}
	}
}

// keyMap is the view's keys.
type keyMap struct {
	Down, Up, PageDown, PageUp key.Binding
	Top, Bottom                key.Binding
	NextHunk, PrevHunk         key.Binding
	Close                      key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Down:     key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("j/k", "scroll")),
		Up:       key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("k", "up")),
		PageDown: key.NewBinding(key.WithKeys("ctrl+d", "pgdown", "space"), key.WithHelp("ctrl+d/u", "page")),
		PageUp:   key.NewBinding(key.WithKeys("ctrl+u", "pgup"), key.WithHelp("ctrl+u", "page up")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g/G", "first/last")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "last")),
		NextHunk: key.NewBinding(key.WithKeys("n"), key.WithHelp("n/N", "next/previous operation")),
		PrevHunk: key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous operation")),
		Close:    key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc/q", "close")),
	}
}

// View is the diff view of one session.
type View struct {
	title  string
	sum    string   // the totals, under the title
	lines  []string // the diff's text, a line each
	top    int      // the first line shown
	height int      // the box's lines, its border included
	keys   keyMap
}

// frame is the lines of the box that are not the diff's: the border,
// the title, the totals and the hint.
const frame = 5

// New opens the view on res, the diff of the session titled title, in
// a box height lines high.
func New(title string, res reads.DiffSessionResult, height int) *View {
	v := &View{title: title, keys: defaultKeys(), height: height}
	v.SetResult(res)
	return v
}

// SetResult shows res, the diff read again, keeping the lines shown
// where it can.
func (v *View) SetResult(res reads.DiffSessionResult) {
	v.sum = fmt.Sprintf("%s → %s tokens · %s of %s kept · %s", english.Thousands(res.StoredTokens), english.Thousands(res.EffectiveTokens),
		english.Thousands(res.KeptMessages), english.Count(res.StoredMessages, "message"), english.Count(len(res.Hunks), "operation")+" changing them")
	// The text's first two lines (--- stored, +++ effective) say what
	// the totals line says.
	lines := strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "--- ") || strings.HasPrefix(lines[0], "+++ ")) {
		lines = lines[1:]
	}
	v.lines = lines
	v.scroll(0)
}

// SetHeight makes the box height lines high (the screen was resized).
func (v *View) SetHeight(height int) {
	v.height = height
	v.scroll(0)
}

// rows is how many of the diff's lines the box shows.
func (v *View) rows() int { return max(v.height-frame, 1) }

// Top is the first line of the diff shown.
func (v *View) Top() int { return v.top }

// scroll moves the first line shown by d, within the diff.
func (v *View) scroll(d int) {
	v.top = max(min(v.top+d, len(v.lines)-v.rows()), 0)
}

// HandleMsg scrolls on the view's keys; esc and q close it.
func (v *View) HandleMsg(msg tea.Msg) dialog.Action {
	if msg, ok := msg.(tea.KeyPressMsg); ok {
		k := v.keys
		switch {
		case key.Matches(msg, k.Close):
			return dialog.ActionClose{}
		case key.Matches(msg, k.Down):
			v.scroll(1)
		case key.Matches(msg, k.Up):
			v.scroll(-1)
		case key.Matches(msg, k.PageDown):
			v.scroll(max(v.rows()/2, 1))
		case key.Matches(msg, k.PageUp):
			v.scroll(-max(v.rows()/2, 1))
		case key.Matches(msg, k.Top):
			v.top = 0
		case key.Matches(msg, k.Bottom):
			v.scroll(len(v.lines))
		case key.Matches(msg, k.NextHunk):
			v.toHeader(1)
		case key.Matches(msg, k.PrevHunk):
			v.toHeader(-1)
		}
	}
	return nil
}

// toHeader puts the next (dir 1) or previous (-1) operation's header
// at the top.
func (v *View) toHeader(dir int) {
	for i := v.top + dir; i >= 0 && i < len(v.lines); i += dir {
		if isHunkHeader(v.lines[i]) && (i == 0 || !isHunkHeader(v.lines[i-1])) {
			v.top = i
			v.scroll(0)
			return
		}
	}
}

func isHunkHeader(line string) bool { return strings.HasPrefix(line, "@@ ") }

// View draws the box for a screen width wide: the title and totals, the
// diff's lines shown, each styled by what it is, and the keys.
func (v *View) View(width int, st *themes.Styles) string {
	w := max(width-4, 20) // the border and the padding
	out := []string{
		st.Dialog.Title.Render(ansi.Truncate("Diff of "+v.title+": stored → effective", w, "…")),
		st.Dialog.Hint.Render(ansi.Truncate(v.sum, w, "…")),
	}
	end := min(v.top+v.rows(), len(v.lines))
	for _, l := range v.lines[v.top:end] {
		out = append(out, Paint(ansi.Truncate(l, w, "…"), st))
	}
	for range v.rows() - (end - v.top) {
		out = append(out, "")
	}
	where := "all"
	if len(v.lines) > v.rows() {
		where = fmt.Sprintf("lines %d–%d of %s", v.top+1, end, english.Thousands(len(v.lines)))
	}
	hint := dialog.Hint(st, where, []key.Binding{v.keys.Close, v.keys.Down, v.keys.PageDown, v.keys.NextHunk, v.keys.Top})
	out = append(out, ansi.Truncate(hint, w, "…"))
	return st.Dialog.Box.Width(width).Render(lipgloss.JoinVertical(lipgloss.Left, out...))
}

// Paint styles a line of a diff by what it is: an operation's header,
// a line of what was said ("-") or of what the model gets ("+"), a run
// of kept messages or a note.
func Paint(line string, st *themes.Styles) string {
	switch {
	case isHunkHeader(line):
		return st.Thread.Marker.Bold(true).Render(line)
	case strings.HasPrefix(line, "-"):
		return st.Dialog.Error.Render(line)
	case strings.HasPrefix(line, "+"):
		return st.Status.Success.Render(line)
	case strings.HasPrefix(line, " ⋯"), strings.HasPrefix(line, "#"):
		return st.Thread.Dimmed.Render(line)
	}
	return st.Thread.Body.Render(line)
}
