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
	"weft/internal/termsafe"
	"weft/ops/reads"
	"weft/themes"
	"weft/tui/dialog"
)

// Differ reads a session's diff: the Desk the root holds.
type Differ interface {
	DiffSession(ctx context.Context, a reads.DiffSessionArgs) (reads.DiffSessionResult, error)
}

// loaded is a diff read for the view, or why it could not be.
type loaded struct {
	res reads.DiffSessionResult
	err error
}

// Open puts the diff view of session sid (titled title) in front of the
// thread, in a box as high as height says the thread is, and reads the
// diff in the command it returns.
func Open(o *dialog.Overlay, d Differ, sid, title string, height func() int) tea.Cmd {
	v := &View{sid: sid, title: termsafe.Line(title), height: height, differ: d, keys: defaultKeys(), cur: -1}
	o.Open(v)
	return v.load()
}

// Reload reads the diff again for the view open in o, if one is (the
// session was written to); nil when none is.
func Reload(o *dialog.Overlay) tea.Cmd {
	if v, ok := dialog.Find[*View](o); ok {
		return v.load()
	}
	return nil
}

// load reads the diff whole, in a command, its answer delivered to v.
func (v *View) load() tea.Cmd {
	d, sid := v.differ, v.sid
	return func() tea.Msg {
		res, err := d.DiffSession(context.Background(), reads.DiffSessionArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
		return dialog.For{Dialog: v, Msg: loaded{res, err}}
	}
}

// keyMap is the view's keys.
type keyMap struct {
	Down, Up, PageDown, PageUp key.Binding
	Top, Bottom                key.Binding
	NextHunk, PrevHunk         key.Binding
	Jump                       key.Binding
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
		Jump:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go to it in the thread")),
		Close:    key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc/q", "close")),
	}
}

// View is the diff view of one session.
type View struct {
	sid, title string
	differ     Differ
	height     func() int  // the thread's lines: the box is one less
	sum        string      // the totals, under the title
	lines      []string    // the diff's text, a line each
	at         map[int]int // an operation's header line -> where it stands in the thread
	cur        int         // the current operation's header line (enter goes to it), -1 for none
	failed     string      // why the diff could not be read
	read       bool        // a diff came
	version    uint64      // the session's version the diff shown is of
	top        int         // the first line shown
	keys       keyMap
}

// frame is the lines of the box that are not the diff's: the border,
// the title, the totals and the hint.
const frame = 5

// setResult shows res, the diff read (again), keeping the lines shown
// where it can.
func (v *View) setResult(res reads.DiffSessionResult) {
	v.read, v.failed = true, ""
	v.sum = fmt.Sprintf("%s → %s tokens · %s of %s kept · %s", english.Thousands(res.StoredTokens), english.Thousands(res.EffectiveTokens),
		english.Thousands(res.KeptMessages), english.Count(res.StoredMessages, "message"), english.Count(len(res.Hunks), "operation")+" changing them")
	// The text's first two lines (--- stored, +++ effective) say what
	// the totals line says.
	lines := strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "--- ") || strings.HasPrefix(lines[0], "+++ ")) {
		lines = lines[1:]
	}
	v.lines = lines
	// The operations' headers come in the order of the hunks.
	v.at = map[int]int{}
	k := 0
	for i, l := range lines {
		if k < len(res.Hunks) && l == res.Hunks[k].Header() {
			v.at[i] = res.Hunks[k].At
			k++
		}
	}
	v.scroll(0)
	v.follow()
}

// follow makes the operation at the top of the view the current one:
// the one whose lines the top line is among, else the first shown.
func (v *View) follow() {
	v.cur = -1
	for i := min(v.top, len(v.lines)-1); i >= 0 && v.cur < 0; i-- {
		if _, ok := v.at[i]; ok {
			v.cur = i
		}
	}
	for i := v.top; i < min(v.top+v.rows(), len(v.lines)) && v.cur < 0; i++ {
		if _, ok := v.at[i]; ok {
			v.cur = i
		}
	}
}

// rows is how many of the diff's lines the box shows: the box is a
// line less high than the thread, so the thread's last line shows.
func (v *View) rows() int { return max(v.height()-1-frame, 1) }

// scroll moves the first line shown by d, within the diff.
func (v *View) scroll(d int) {
	v.top = max(min(v.top+d, len(v.lines)-v.rows()), 0)
}

// HandleMsg takes the diff read for it, and scrolls on the view's
// keys; esc and q close it.
func (v *View) HandleMsg(msg tea.Msg) dialog.Action {
	if f, ok := msg.(dialog.For); ok {
		if l, ok := f.Msg.(loaded); ok && l.err != nil {
			v.failed = l.err.Error()
		} else if ok && l.res.SessionID == v.sid && l.res.Version >= v.version {
			// Reads run at once, and their answers come in any order:
			// one of an older version than that shown is passed over.
			v.version = l.res.Version
			v.setResult(l.res)
		}
		return nil
	}
	if msg, ok := msg.(tea.KeyPressMsg); ok {
		k := v.keys
		switch {
		case key.Matches(msg, k.Close):
			return dialog.ActionClose{}
		case key.Matches(msg, k.Jump):
			if at, ok := v.at[v.cur]; ok {
				return dialog.ActionJump{Index: at}
			}
		case key.Matches(msg, k.NextHunk):
			v.toHeader(1)
		case key.Matches(msg, k.PrevHunk):
			v.toHeader(-1)
		case key.Matches(msg, k.Down):
			v.scroll(1)
			v.follow()
		case key.Matches(msg, k.Up):
			v.scroll(-1)
			v.follow()
		case key.Matches(msg, k.PageDown):
			v.scroll(max(v.rows()/2, 1))
			v.follow()
		case key.Matches(msg, k.PageUp):
			v.scroll(-max(v.rows()/2, 1))
			v.follow()
		case key.Matches(msg, k.Top):
			v.top = 0
			v.follow()
		case key.Matches(msg, k.Bottom):
			v.scroll(len(v.lines))
			v.follow()
		}
	}
	return nil
}

// toHeader makes the next (dir 1) or previous (-1) operation the
// current one, its header at the top where the diff goes on far enough.
func (v *View) toHeader(dir int) {
	for i := v.cur + dir; i >= 0 && i < len(v.lines); i += dir {
		if _, ok := v.at[i]; ok {
			v.cur, v.top = i, i
			v.scroll(0)
			return
		}
	}
}

func isHunkHeader(line string) bool { return strings.HasPrefix(line, "@@ ") }

// View draws the box for a screen width wide: the title and totals (or
// why the diff could not be read), the diff's lines shown, each styled
// by what it is, and the keys.
func (v *View) View(width int, st *themes.Styles) string {
	w := max(width-4, 20) // the border and the padding
	second := st.Dialog.Hint.Render(ansi.Truncate(v.sum, w, "…"))
	switch {
	case v.failed != "":
		second = st.Status.Error.Render(ansi.Truncate("the diff could not be read: "+termsafe.Line(v.failed), w, "…"))
	case !v.read:
		second = st.Thread.Empty.Render("reading the diff…")
	}
	out := []string{st.Dialog.Title.Render(ansi.Truncate("Diff of "+v.title+": stored → effective", w, "…")), second}
	// The screen may have shrunk since the view last scrolled.
	top := max(min(v.top, len(v.lines)-v.rows()), 0)
	end := min(top+v.rows(), len(v.lines))
	for i, l := range v.lines[top:end] {
		l = ansi.Truncate(l, w, "…")
		if top+i == v.cur {
			out = append(out, lineStyle(l, st).Reverse(true).Render(l)) // the operation enter goes to
			continue
		}
		out = append(out, Paint(l, st))
	}
	// A short diff gets a short box.
	for range min(v.rows(), max(len(v.lines), 1)) - (end - top) {
		out = append(out, "")
	}
	where := "all"
	if len(v.lines) > v.rows() {
		where = fmt.Sprintf("lines %d–%d of %s", top+1, end, english.Thousands(len(v.lines)))
	}
	hint := dialog.Hint(st, where, []key.Binding{v.keys.Close, v.keys.Jump, v.keys.NextHunk, v.keys.Down, v.keys.PageDown, v.keys.Top})
	out = append(out, ansi.Truncate(hint, w, "…"))
	return st.Dialog.Box.Width(width).Render(lipgloss.JoinVertical(lipgloss.Left, out...))
}

// Paint styles a line of a diff by what it is: an operation's header,
// a line of what was said ("-") or of what the model gets ("+"), a run
// of kept messages or a note.
func Paint(line string, st *themes.Styles) string { return lineStyle(line, st).Render(line) }

func lineStyle(line string, st *themes.Styles) lipgloss.Style {
	switch {
	case isHunkHeader(line):
		return st.Thread.Marker.Bold(true)
	case strings.HasPrefix(line, "-"):
		return st.Dialog.Error
	case strings.HasPrefix(line, "+"):
		return st.Status.Success
	case strings.HasPrefix(line, " ⋯"), strings.HasPrefix(line, "#"):
		return st.Thread.Dimmed
	}
	return st.Thread.Body
}
