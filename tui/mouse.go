package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/tui/rows"
)

// The mouse: the wheel scrolls (model.go), a click on a row puts the
// cursor there, and a click on a marker, on a folded message's "… more
// lines (enter)", or on the row the cursor is already on does what enter
// does there. The View asks the terminal for clicks and the wheel
// (tea.MouseModeCellMotion, set on every frame); the rows on the screen
// are found as render lays them out, from the top row down, so a click
// costs what a frame does.

// click answers a left click on the thread.
func (m *Model) click(msg tea.MouseClickMsg) tea.Cmd {
	mouse := msg.Mouse()
	if mouse.Button != tea.MouseLeft || m.view == nil || m.rows == nil || m.rows.Len() == 0 ||
		m.dialogs.Front() != nil || m.search.IsOpen() || m.full || m.moving != nil {
		return nil // a dialog, the help or a move is in front: the thread is not what was clicked
	}
	r, li, ok := m.rowAtScreen(mouse.Y)
	if !ok {
		return nil
	}
	m.placed, m.hit = -1, nil
	again := r == m.cursor
	m.cursor = r
	rw := m.rows.At(r)
	switch {
	case rw.Kind == rows.Marker || rw.Kind == rows.More:
		m.toggle()
	case again || m.foldLine(r, li):
		m.toggle()
	default:
		m.scrollToCursor()
	}
	return m.loadBodies()
}

// rowAtScreen is the row shown on screen line y, and which of its lines
// that is; ok is false off the thread (the timeline strip, the status
// bar, the help line, or under the last row).
func (m *Model) rowAtScreen(y int) (r, line int, ok bool) {
	y-- // the timeline strip is the first line
	if y < 0 || y >= m.threadHeight() {
		return 0, 0, false
	}
	for r = m.top; r < m.rows.Len(); r++ {
		n := len(m.rowLines(r))
		from := 0
		if r == m.top {
			from = min(m.skip, n)
		}
		if y < n-from {
			return r, from + y, true
		}
		y -= n - from
	}
	return 0, 0, false
}

// foldLine reports whether line li of row r is a folded message's hint
// ("… 12 more lines (enter)"), its last line.
func (m *Model) foldLine(r, li int) bool {
	lines := m.rowLines(r)
	return li > 0 && li == len(lines)-1 && strings.HasSuffix(strings.TrimSpace(ansi.Strip(lines[li])), "(enter)")
}
