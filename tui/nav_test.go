package tui

import (
	"testing"

	"weft/tui/rows"
)

// ctrl+d moves half a screen of lines, not half a screen of rows: rows
// are messages of any height.
func TestHalfPageCountsLines(t *testing.T) {
	t.Parallel()
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

// A range selects the items from its first item row to its last, markers
// and originals around them left out, wherever it starts and ends.
func TestSelectionIsTheItemsOfTheRange(t *testing.T) {
	t.Parallel()
	m := fixedModel(t, 100, 30)
	for _, mk := range m.view.Markers {
		m.expanded[mk.OpID] = true // originals under every marker, too
	}
	m.rows = rows.NewIndex(m.view, m.expanded)
	n := m.rows.Len()
	for _, span := range [][2]int{{0, n - 1}, {n - 1, 0}, {0, 0}, {1, 3}, {n / 2, n/2 + 7}, {n - 2, n - 1}} {
		m.anchor, m.cursor = span[0], span[1]
		// The slow way: every row of the range, in order.
		wantFirst, wantLast := -1, -1
		for r := min(span[0], span[1]); r <= max(span[0], span[1]); r++ {
			if rw := m.rows.At(r); rw.Kind == rows.Item {
				if wantFirst < 0 {
					wantFirst = rw.Item
				}
				wantLast = rw.Item
			}
		}
		first, last, ok := m.selection()
		if ok != (wantFirst >= 0) || ok && (first != wantFirst || last != wantLast) {
			t.Errorf("rows %d..%d: items %d..%d (%v), want %d..%d", span[0], span[1], first, last, ok, wantFirst, wantLast)
		}
	}
}
