package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/ops"
	"weft/tui/dialog"
	"weft/tui/rows"
)

// Moving: J and K move the selection a place at a time, and the thread
// shows it in its new place as it goes (a preview: rows are drawn
// through the move's order, nothing is written); enter makes the whole
// move one resequence operation, esc forgets it, q quits without it.

// move is a resequence being previewed (rows.Move: the rows show the
// items through it), and where the cursor and the range's anchor stood
// before it, to go back to.
type move struct {
	rows.Move
	cursor, anchor int
}

// rowAt is what row r shows: the row index's answer, through the move
// being previewed. Markers stay where they stand, as resequence leaves
// them.
func (m *Model) rowAt(r int) rows.Row {
	rw := m.rows.At(r)
	if mv := m.moving; mv != nil && rw.Kind == rows.Item {
		rw.Item = mv.ItemAt(rw.Item)
	}
	return rw
}

func (m *Model) startMove(d int) tea.Cmd {
	if m.moving == nil {
		first, last, cmd := m.needSelection()
		if cmd != nil {
			return cmd
		}
		m.moving = &move{Move: rows.Move{First: first, Last: last}, cursor: m.cursor, anchor: m.anchor}
	}
	mv := m.moving
	mv.By = min(max(mv.By+d, -mv.First), m.view.Len()-1-mv.Last)
	// The cursor and the range follow the moved items to where the
	// preview shows them.
	m.cursor, m.anchor = m.movedRow(mv.cursor), m.movedRow(mv.anchor)
	m.scrollToCursor()
	return m.loadBodies()
}

// movedRow is the row an item's row r shows on in the preview; other
// rows (markers, no anchor) stay.
func (m *Model) movedRow(r int) int {
	if r < 0 {
		return r
	}
	rw := m.rows.At(r)
	mv := m.moving
	if rw.Kind != rows.Item || rw.Item < mv.First || rw.Item > mv.Last {
		return r
	}
	return m.rows.RowOfItem(rw.Item + mv.By)
}

// cancelMove drops the move: the thread as it was, the cursor and the
// range where they were.
func (m *Model) cancelMove() {
	if mv := m.moving; mv != nil {
		m.cursor, m.anchor = mv.cursor, mv.anchor
		m.moving = nil
		m.scrollToCursor()
	}
}

func (m *Model) confirmMove() tea.Cmd {
	mv := *m.moving
	// The cursor goes back to the moved item's row in the thread as it
	// is, so the reload after the edit follows that item to its place.
	m.cancelMove()
	if mv.By == 0 {
		return nil
	}
	// The order is as long as the range moved: it is built in the
	// command, from a copy of the move, not in Update.
	what := "moved " + moveText(mv)
	return m.edit(what, func(ctx context.Context, t editTarget) error {
		_, err := t.svc.ResequenceMessages(ctx, ops.ResequenceArgs{SessionID: t.sid, NewOrder: mv.Order(), EditOptions: t.opts()})
		return err
	})
}

// moveText says what a move does: "item 40 down by 1 place".
func moveText(mv move) string {
	dir := "down"
	if mv.By < 0 {
		dir = "up"
	}
	return fmt.Sprintf("%s %s by %s", rangeText(mv.First, mv.Last), dir, english.Count(max(mv.By, -mv.By), "place"))
}

// moveKeys is the keys that work while moving, as the hint lists them.
func (m *Model) moveKeys() []key.Binding {
	k := m.keys
	return []key.Binding{k.MoveDown, k.Commit, k.Cancel, k.Quit}
}

// moveHint is the bottom line while moving: what the move does so far,
// then its keys, generated from the key map as every hint is, as many as
// fit the width.
func (m *Model) moveHint() string {
	note, keys := "moving "+moveText(*m.moving), m.moveKeys()
	for len(keys) > 1 && ansi.StringWidth(dialog.Hint(m.styles, note, keys)) > m.width-1 {
		keys = keys[:len(keys)-1]
	}
	return dialog.Hint(m.styles, note, keys)
}
