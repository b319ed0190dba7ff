package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
	"weft/ops/thread"
	"weft/themes"
	"weft/tui/raw"
	"weft/tui/rows"
)

// lineKey names a rendered row: what it shows, at which width, in which
// state. Stored messages and synthetic items never change, so a row's
// lines can be kept for as long as its key is the same.
type lineKey struct {
	// sid is the session: items of different sessions share IDs.
	sid    string
	kind   rows.Kind
	id     model.ItemID
	op     string
	width  int
	open   bool
	loaded bool
	raw    bool // in the raw view: the width leaves room for the lanes
	// version is the session's: tags and markers change with it while
	// the items stay the same.
	version uint64
}

func (m *Model) threadHeight() int {
	return max(m.height-3, 1) // timeline strip, status bar and help line
}

// rowLines renders a row (cached).
func (m *Model) rowLines(r int) []string {
	rw := m.rowAt(r)
	width := max(m.width-2, 10) // the gutter takes two cells
	if m.raw.on {
		width = max(width-raw.Lanes-1, 10)
	}
	k := lineKey{sid: m.sid, kind: rw.Kind, width: width, raw: m.raw.on, version: m.info.Version}
	var it model.Item
	switch rw.Kind {
	case rows.Item:
		it = m.view.Items[rw.Item]
	case rows.Hidden:
		it = m.view.Markers[rw.Marker].Hidden[rw.Item]
	}
	switch rw.Kind {
	case rows.Item, rows.Hidden:
		k.id = m.view.ID(it)
		k.open = m.open[k.id]
		k.loaded = it.Seq == 0 || m.bodies[it.Seq] != nil
	case rows.Marker, rows.More:
		k.op = m.view.Markers[rw.Marker].OpID
		k.open = m.expanded[k.op]
	}
	if lines, ok := m.lines[k]; ok {
		return lines
	}
	var lines []string
	switch {
	case m.raw.on:
		lines = m.renderRawItem(it, width, k.open)
	case rw.Kind == rows.Item:
		lines = m.renderItem(it, width, k.open, false)
	case rw.Kind == rows.Hidden:
		lines = m.renderItem(it, width, k.open, true)
	case rw.Kind == rows.Marker:
		lines = []string{m.paint().Marker(m.view, &m.view.Markers[rw.Marker], width, k.open)}
	case rw.Kind == rows.More:
		lines = []string{m.paint().More(&m.view.Markers[rw.Marker])}
	}
	if len(m.lines) > 4096 {
		clear(m.lines)
	}
	m.lines[k] = lines
	return lines
}

// paint is how rows are drawn in the theme shown.
func (m *Model) paint() rows.Painter { return rows.Painter{Styles: m.styles, Markdown: m.md} }

// renderItem draws an item of the view shown (dimmed: an original an
// operation hides).
func (m *Model) renderItem(it model.Item, width int, open, dimmed bool) []string {
	x := m.itemOf(it)
	var tags []string
	if x.Loaded {
		tags = m.view.Tags(it)
	}
	return m.paint().Item(x, tags, width, open, dimmed)
}

// itemOf is what a row shows of an item: a synthetic one's, a stored
// message's once its body is loaded.
func (m *Model) itemOf(it model.Item) rows.Entry {
	if it.Seq == 0 {
		return rows.SynthEntry(&m.view.Synth[it.Synth])
	}
	if b := m.bodies[it.Seq]; b != nil {
		return rows.StoredEntry(b)
	}
	return rows.Entry{ID: model.MessageID(it.Seq)} // its body is on its way
}

// scrollToCursor moves the window so the cursor's row is on screen.
func (m *Model) scrollToCursor() {
	if m.rows == nil || m.rows.Len() == 0 || m.height == 0 {
		return
	}
	h := m.threadHeight()
	if m.cursor < m.top {
		m.top, m.skip = m.cursor, 0
		return
	}
	if m.cursor == m.top {
		// A tall row being read keeps its place, within its lines.
		m.skip = min(m.skip, max(len(m.rowLines(m.cursor))-h, 0))
		return
	}
	// Lines from the top row to the end of the cursor's row must fit;
	// if they do not, the screen starts at a whole row (the cursor's,
	// at its start, when it alone is taller than the screen).
	used := -m.skip
	for r := m.cursor; r >= m.top; r-- {
		used += len(m.rowLines(r))
		if used > h {
			m.top, m.skip = min(r+1, m.cursor), 0
			return
		}
	}
}

// View draws the screen. What the thread carries is shown, never
// obeyed: each row shows its text's control characters as pictures, and
// the frame as a whole keeps nothing but the styling the TUI draws with
// (termsafe.Styled), so a text shown unfiltered (a text area's) cannot
// act on the terminal either. The window title is the session's, shown
// the same way.
func (m *Model) View() tea.View {
	v := tea.NewView(termsafe.Styled(m.render()))
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "weft"
	if m.info.Title != "" {
		v.WindowTitle = "weft · " + termsafe.Line(m.info.Title)
	}
	return v
}

func (m *Model) render() string {
	if m.err != nil {
		return m.styles.Status.Error.Render("weft: "+termsafe.Text(m.err.Error())) + "\n"
	}
	if m.empty {
		return m.emptyView()
	}
	if m.view == nil || m.width == 0 {
		return "loading…"
	}
	h := m.threadHeight()
	lines := make([]string, 0, h+3)
	lines = append(lines, m.timelineStrip())
	h++ // the strip is the first line
	if m.rows.Len() == 0 {
		lines = append(lines, m.styles.Thread.Empty.Render("  this session has no messages yet"))
	}
	for r := m.top; r < m.rows.Len() && len(lines) < h; r++ {
		gutter := "  "
		switch {
		case r == m.cursor:
			gutter = m.styles.Thread.Cursor.Render("▌ ")
		case m.isSelected(r):
			gutter = m.styles.Thread.Selected.Render("┃ ")
		}
		rl := m.rowLines(r)
		from := 0
		if r == m.top {
			from = min(m.skip, len(rl)) // a tall row read from its middle
		}
		for i, l := range rl {
			if i < from {
				continue
			}
			g := gutter
			if i > 0 && r == m.cursor {
				g = m.styles.Thread.Cursor.Render("▏ ")
			} else if i > 0 && !m.isSelected(r) {
				g = "  "
			}
			if m.raw.on {
				g += m.raw.extents.Gutter(uint64(r+1), i, i == len(rl)-1, m.styles) + " "
			}
			lines = append(lines, g+m.markLine(r, i, l)) // search hits marked (tui/search)
			if len(lines) == h {
				break
			}
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	if m.search.IsOpen() {
		panel := m.search.View(m.width, m.styles)
		if len(panel) < h {
			lines = append(lines[:h-len(panel)], panel...)
		}
	} else if d := m.dialogs.Front(); d != nil {
		box := strings.Split(d.View(m.width, m.styles), "\n")
		if len(box) < h {
			lines = append(lines[:h-len(box)], box...)
		}
	} else if m.full {
		hl := m.fullHelpView()
		if len(hl) < h {
			lines = append(lines[:h-len(hl)], hl...)
		}
	}
	lines = append(lines, m.statusBar(), m.bottomLine())
	return strings.Join(lines, "\n")
}

// statusBar: session, position, raw → effective tokens, tags, and a
// transient message.
func (m *Model) statusBar() string {
	st := &m.styles.Status
	at := "at "
	if m.raw.on {
		at = "raw: stored " // positions count stored messages here
	}
	parts := []string{
		st.Value.Render(ansi.Truncate(termsafe.Line(m.info.Title), 32, "…")),
		st.Key.Render(at) + st.Value.Render(m.position()),
		st.Key.Render("tokens ") + st.Value.Render(fmt.Sprintf("%s → %s", english.Thousands(m.view.RawTokens), english.Thousands(m.view.Tokens))),
	}
	if shown := m.linesShown(); shown != "" {
		parts[1] += st.Key.Render(" · lines ") + st.Value.Render(shown)
	}
	if m.raw.on {
		parts[2] = st.Key.Render("tokens ") + st.Value.Render(english.Thousands(m.raw.eff.RawTokens))
	} else if m.info.Memory != nil {
		// A policy keeps the thread: what it holds against what is sent.
		parts[2] = st.Key.Render("memory ") + st.Value.Render(fmt.Sprintf("%s → %s tokens, %s", english.Thousands(m.view.RawTokens), english.Thousands(m.view.Tokens), english.Count(m.summaryCount(), "summary")))
	}
	if hit := m.hitStatus(); hit != "" {
		parts[1] += st.Key.Render(" · match ") + st.Value.Render(hit)
	}
	if f := m.filterStatus(); f != "" {
		parts = append(parts, st.Value.Render(f))
	}
	if len(m.info.ActiveTags) > 0 {
		parts = append(parts, st.Key.Render("tags ")+st.Value.Render(termsafe.Line(strings.Join(m.info.ActiveTags, ","))))
	}
	if m.opts.Holder != nil {
		parts = append(parts, m.holderPart())
	}
	if l := m.opts.Listener; l != nil {
		mcp := st.Key.Render("mcp ") + st.Value.Render(l.Addr())
		if n := m.agents; n > 0 {
			mcp += st.Key.Render(" (" + english.Count(n, "agent") + ")")
		}
		parts = append(parts, mcp)
	}
	bar := " " + strings.Join(parts, st.Key.Render("  ·  "))
	return st.Bar.Width(m.width).Render(ansi.Truncate(bar, m.width, "…"))
}

// summaryCount is how many summaries the view shows, counted once a
// view.
func (m *Model) summaryCount() int {
	if m.summaries.of != m.view {
		m.summaries.of, m.summaries.n = m.view, len(thread.Summaries(m.view))
	}
	return m.summaries.n
}

// bottomLine shows a transient message while there is one, else the keys
// that work now.
func (m *Model) bottomLine() string {
	if m.moving != nil {
		return ansi.Truncate(" "+m.moveHint(), m.width, "…")
	}
	if m.status == "" {
		// The help line changes only with the state: drawn once per state.
		k := m.helpKey()
		if k != m.helpCache.key {
			m.helpCache.key, m.helpCache.line = k, m.shortLine()
		}
		return m.helpCache.line
	}
	st := m.styles.Status.Info
	if m.statusErr {
		st = m.styles.Status.Error
	}
	return st.Render(ansi.Truncate(" "+m.status, m.width, "…"))
}

// helpCacheKey is what the short help line depends on.
type helpCacheKey struct {
	width   int
	enabled uint64 // a bit per binding
	mode    uint8
	styles  *themes.Styles
}

func (m *Model) helpKey() helpCacheKey {
	k := helpCacheKey{width: m.width, styles: m.styles}
	for i, b := range m.shortHelp() {
		if m.whyNot(b) == "" {
			k.enabled |= 1 << i
		}
	}
	switch {
	case m.dialogs.Front() != nil || m.search.IsOpen():
		k.mode = 1
	case m.moving != nil:
		k.mode = 2
	case m.raw.on:
		k.mode = 3
	case m.anchor >= 0:
		k.mode = 4
	case m.rows == nil || m.rows.Len() == 0:
		k.mode = 5
	}
	return k
}

// emptyView is a file with no session yet: how to fill it. An agent that
// creates a session over MCP meanwhile opens it here.
func (m *Model) emptyView() string {
	st := m.styles
	cmd := func(c, what string) string {
		return "  " + st.Help.Key.Render(fmt.Sprintf("%-18s", c)) + st.Help.Desc.Render(what)
	}
	lines := []string{
		st.Dialog.Title.Render("No sessions in this file yet."),
		"",
		cmd("weft import FILE", "a Claude Code, ChatGPT, Codex, OpenAI or ShareGPT thread"),
		cmd("weft new TITLE", "an empty session to append to"),
		cmd("weft demo", "weft on a sample thread"),
		"",
	}
	if l := m.opts.Listener; l != nil {
		lines = append(lines, st.Thread.Empty.Render("An agent at "+l.Addr()+" can create one with create_session: it opens here."), "")
	}
	if l := m.opts.Listener; l != nil && l.Notice() != "" {
		lines = append(lines, st.Status.Info.Render(l.Notice()), "")
	}
	lines = append(lines, st.Help.Desc.Render(m.keys.Quit.Help().Key+" quits"))
	return lipgloss.NewStyle().Padding(1, 2).Render(strings.Join(lines, "\n"))
}
