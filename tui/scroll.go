package tui

import (
	"fmt"

	"weft/internal/english"
)

// Reading a tall message: a row taller than the screen (a long message
// unfolded) is read in place, a line at a time. The screen then starts
// m.skip lines into the cursor's row, which stands at the top; the keys
// that move the cursor scroll through the row first and move on to the
// next row only at its end (or its start, going up), so every line can
// be read. Nothing here looks at rows other than the cursor's: a step
// costs the same in a long thread as in a short one.

// tall reports whether the cursor's row is taller than the screen, and
// how many lines it has.
func (m *Model) tall() (bool, int) {
	if m.rows == nil || m.rows.Len() == 0 {
		return false, 0
	}
	n := len(m.rowLines(m.cursor))
	return n > m.threadHeight(), n
}

// scrollWithin scrolls the cursor's tall row by d lines, as far as its
// ends allow, and reports whether it moved.
func (m *Model) scrollWithin(d int) bool {
	tall, n := m.tall()
	if !tall || m.top != m.cursor {
		return false
	}
	skip := min(max(m.skip+d, 0), n-m.threadHeight())
	if skip == m.skip {
		return false
	}
	m.skip = skip
	return true
}

// toRowEnd shows the end of the cursor's row, when it is tall: coming to
// it from below, reading goes on upwards from there.
func (m *Model) toRowEnd() {
	if tall, n := m.tall(); tall {
		m.top, m.skip = m.cursor, n-m.threadHeight()
	}
}

// lineDown is j: a line on in a tall row, else the next row.
func (m *Model) lineDown(d int) {
	if !m.scrollWithin(d) {
		m.move(1)
	}
}

// lineUp is k: a line back in a tall row, else the previous row (at its
// end, if it is tall).
func (m *Model) lineUp(d int) {
	if m.scrollWithin(-d) {
		return
	}
	was := m.cursor
	m.move(-1)
	if m.cursor != was {
		m.toRowEnd()
	}
}

// pageDown is ctrl+d: half a screen on in a tall row, else half a
// screen of rows.
func (m *Model) pageDown() {
	if !m.scrollWithin(max(m.threadHeight()/2, 1)) {
		m.halfPage(1)
	}
}

// pageUp is ctrl+u.
func (m *Model) pageUp() {
	if !m.scrollWithin(-max(m.threadHeight()/2, 1)) {
		m.halfPage(-1)
	}
}

// home is g: the start of a tall row being read, else of the thread.
func (m *Model) home() {
	if tall, _ := m.tall(); tall && m.skip > 0 {
		m.skip = 0
		return
	}
	m.move(-m.rows.Len())
}

// end is G: the end of a tall row being read, else of the thread.
func (m *Model) end() {
	if tall, n := m.tall(); tall && m.top == m.cursor && m.skip < n-m.threadHeight() {
		m.skip = n - m.threadHeight()
		return
	}
	m.move(m.rows.Len())
}

// linesShown says which of a tall cursor row's lines show, for the status
// bar ("lines 11–37/726"), counting the body's lines (the header is line
// 0); "" when the row fits on the screen.
func (m *Model) linesShown() string {
	tall, n := m.tall()
	if !tall || m.top != m.cursor {
		return ""
	}
	from := max(m.skip, 1)
	to := min(m.skip+m.threadHeight()-1, n-1)
	return fmt.Sprintf("%s–%s/%s", english.Thousands(from), english.Thousands(to), english.Thousands(n-1))
}
