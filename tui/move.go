package tui

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/model"
	"weft/ops"
	"weft/tui/dialog"
)

// Moving: J and K move the selection a place at a time, and the thread
// shows it in its new place as it goes (a preview: rows are drawn
// through the move's order, nothing is written); enter makes the whole
// move one resequence operation, esc forgets it, q quits without it.

// move is a resequence being previewed: items first..last moved by
// places (down when by > 0), and where the cursor and the range's anchor
// stood before it, to go back to.
type move struct {
	first, last, by int
	cursor, anchor  int
}

// span is the range of items the move reorders.
func (mv *move) span() (lo, hi int) {
	return min(mv.first, mv.first+mv.by), max(mv.last, mv.last+mv.by)
}

// order is the new order of the span, as resequence_messages takes it:
// position lo+k gets item order[k].
func (mv *move) order() []int {
	var order []int
	if mv.by > 0 {
		for i := mv.last + 1; i <= mv.last+mv.by; i++ {
			order = append(order, i)
		}
		for i := mv.first; i <= mv.last; i++ {
			order = append(order, i)
		}
	} else {
		for i := mv.first; i <= mv.last; i++ {
			order = append(order, i)
		}
		for i := mv.first + mv.by; i < mv.first; i++ {
			order = append(order, i)
		}
	}
	return order
}

// itemAt is the item the preview shows at position i: the order above,
// computed for the one position, so a long move costs nothing per row.
func (mv *move) itemAt(i int) int {
	lo, hi := mv.span()
	if i < lo || i > hi || mv.by == 0 {
		return i
	}
	n := mv.last - mv.first + 1
	if mv.by > 0 {
		if k := i - lo; k < mv.by {
			return mv.last + 1 + k // the items the block passed, moved up
		} else {
			return mv.first + k - mv.by
		}
	}
	if k := i - lo; k < n {
		return mv.first + k
	} else {
		return mv.first + mv.by + k - n
	}
}

// rowAt is what row r shows: the row index's answer, through the move
// being previewed. Markers stay where they stand, as resequence leaves
// them.
func (m *Model) rowAt(r int) row {
	rw := m.rows.At(r)
	if mv := m.moving; mv != nil && rw.kind == rowItem {
		rw.item = mv.itemAt(rw.item)
	}
	return rw
}

func (m *Model) startMove(d int) tea.Cmd {
	if m.moving == nil {
		first, last, cmd := m.needSelection()
		if cmd != nil {
			return cmd
		}
		m.moving = &move{first: first, last: last, cursor: m.cursor, anchor: m.anchor}
	}
	mv := m.moving
	mv.by = min(max(mv.by+d, -mv.first), m.view.Len()-1-mv.last)
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
	if rw.kind != rowItem || rw.item < mv.first || rw.item > mv.last {
		return r
	}
	return m.rows.RowOfItem(rw.item + mv.by)
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
	if mv.by == 0 {
		return nil
	}
	// The order is as long as the range moved: it is built in the
	// command, from a copy of the move, not in Update.
	what := "moved " + moveText(mv)
	return m.edit(what, func(ctx context.Context, t editTarget) error {
		_, err := t.svc.ResequenceMessages(ctx, ops.ResequenceArgs{SessionID: t.sid, NewOrder: mv.order(), EditOptions: t.opts()})
		return err
	})
}

// moveText says what a move does: "item 40 down by 1 place".
func moveText(mv move) string {
	dir := "down"
	if mv.by < 0 {
		dir = "up"
	}
	return fmt.Sprintf("%s %s by %s", rangeText(mv.first, mv.last), dir, english.Count(abs(mv.by), "place"))
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

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// resequenceText labels a resequence's marker by what moved: the fewest
// messages whose moving explains the new order ("moved 1 message by 1
// place" for two swapped), with the places they moved when they all
// moved as far. The marker keeps the previous order; the view has the
// new one.
func resequenceText(v *model.View, mk *model.Marker) string {
	now := make([]int, 0, len(mk.Hidden)) // where each item, in the previous order, is now
	for _, it := range mk.Hidden {
		if i := v.IndexOf(v.ID(it)); i >= 0 {
			now = append(now, i)
		}
	}
	if len(now) == 0 {
		return "moved " + english.Count(len(mk.Hidden), "message")
	}
	// The positions were refilled: sorted, they are where the items stood
	// in the previous order.
	was := slices.Sorted(slices.Values(now))
	keep := longestRising(now)
	moved, dist := 0, -1
	for i, p := range now {
		if keep[i] {
			continue
		}
		moved++
		switch d := abs(p - was[i]); {
		case dist == -1:
			dist = d
		case dist != d:
			dist = 0 // not all as far
		}
	}
	switch {
	case moved == 0:
		return "kept the order of " + english.Count(len(now), "message")
	case dist > 0:
		return fmt.Sprintf("moved %s by %s", english.Count(moved, "message"), english.Count(dist, "place"))
	}
	return fmt.Sprintf("moved %s of %s", english.Thousands(moved), english.Count(len(now), "message"))
}

// longestRising marks a longest strictly rising subsequence of xs (the
// items that kept their order), in O(n log n).
func longestRising(xs []int) []bool {
	tails := []int{} // tails[l]: index of the smallest end of a rising run of length l+1
	prev := make([]int, len(xs))
	for i, x := range xs {
		l := sort.Search(len(tails), func(l int) bool { return xs[tails[l]] >= x })
		if l > 0 {
			prev[i] = tails[l-1]
		} else {
			prev[i] = -1
		}
		if l == len(tails) {
			tails = append(tails, i)
		} else {
			tails[l] = i
		}
	}
	keep := make([]bool, len(xs))
	if len(tails) > 0 {
		for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
			keep[i] = true
		}
	}
	return keep
}
