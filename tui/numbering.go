package tui

import (
	"weft/internal/english"
	"weft/tui/rows"
)

// Positions count from 0 everywhere the TUI shows one, as the tools'
// indices do (get_message_range, start_idx): the status bar's "at 4/243"
// and a dialog's "Tag items 2–4" name the same items by the same numbers,
// and an operator can pass them to `weft call` as they read them.

// position is the status bar's "index/length": the index of the item
// under the cursor (a marker and the originals under it stand before the
// item at the marker's place), and how many items the thread has.
func (m *Model) position() string {
	n := m.view.Len()
	if m.rows.Len() == 0 || n == 0 {
		return "–/" + english.Thousands(n)
	}
	pos := 0
	switch rw := m.rows.At(m.cursor); rw.Kind { // the place, not what a move shows there
	case rows.Item:
		pos = rw.Item
	default:
		pos = min(m.view.Markers[rw.Marker].At, n-1)
	}
	return english.Thousands(pos) + "/" + english.Thousands(n)
}

// markerItemRow is the row of the item the marker under the cursor
// stands before, the one position names; false when the cursor is not
// on a marker or the marker ends the thread.
func (m *Model) markerItemRow() (int, bool) {
	if m.rows.Len() == 0 {
		return 0, false
	}
	rw := m.rows.At(m.cursor)
	if rw.Kind == rows.Item {
		return 0, false
	}
	at := m.view.Markers[rw.Marker].At
	if at >= m.view.Len() {
		return 0, false
	}
	return m.rows.RowOfItem(at), true
}
