package tui

import "testing"

// ctrl+d moves half a screen of lines, not half a screen of rows: rows
// are messages of any height.
func TestHalfPageCountsLines(t *testing.T) {
	m := fixedModel(t, 100, 30)
	press(t, m, "g")
	from := m.cursor
	press(t, m, "ctrl+d")
	half := m.threadHeight() / 2
	lines := 0
	for r := from + 1; r <= m.cursor; r++ {
		lines += len(m.rowLines(r))
	}
	last := len(m.rowLines(m.cursor))
	if lines < half || lines-last >= half {
		t.Fatalf("ctrl+d moved %d rows over %d lines; want the fewest rows reaching %d lines", m.cursor-from, lines, half)
	}
	down := m.cursor
	press(t, m, "ctrl+u")
	if m.cursor >= down || m.cursor < from {
		t.Errorf("ctrl+u went from row %d to %d (ctrl+d started at %d)", down, m.cursor, from)
	}
}
