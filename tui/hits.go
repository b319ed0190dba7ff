package tui

import (
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/model"
	"weft/tui/rows"
	"weft/tui/search"
)

// Search hits are items, not places (tui/search): going to a hit puts
// the cursor on its item and, when the matching line is not among those
// the item shows folded, unfolds it and scrolls to that line; a hit an
// operation hides since the search is shown under its marker.

// hitLine is a hit waiting for its item's body, to scroll to its line.
type hitLine struct {
	id   model.ItemID
	line string
}

// gotoHit goes to search hit k: its item, or, for one an operation now
// hides, the original under that operation's marker.
func (m *Model) gotoHit(k int) tea.Cmd {
	h, id, named := m.search.Hit(k)
	m.search.Place(k, m.filterShows) // the status bar's "match 3/17"
	if !named {
		// A result that named no items: its index is all there is.
		m.jumpTo(h.Index)
		return m.loadBodies()
	}
	if !m.filterShows(h.Index) {
		return m.flash(fmt.Sprintf("%s is not among the items the filter shows (%s clears it)", id, m.keys.Cancel.Help().Key), true)
	}
	if h.Index < 0 {
		return m.revealHidden(id)
	}
	m.cursor = m.rows.RowOfItem(h.Index)
	if !m.onScreen(m.cursor) {
		m.placed = m.cursor
		m.placeThird()
	}
	m.scrollToCursor()
	m.hit = &hitLine{id: id, line: h.Line}
	m.showHit()
	return m.loadBodies()
}

// revealHidden shows a hit's item that an operation hides since the
// search: the operation's marker is expanded and the cursor put on the
// original there.
func (m *Model) revealHidden(id model.ItemID) tea.Cmd {
	seq, ok := id.Seq()
	if !ok {
		return m.flash("that match is no longer in the thread: the operation that made it is off or reverted", true)
	}
	place, _ := m.view.PlaceOfSeq(seq)
	for k := range m.view.Markers {
		mk := &m.view.Markers[k]
		if mk.At != place {
			continue
		}
		i := slices.IndexFunc(mk.Hidden, func(it model.Item) bool { return it.Seq == seq })
		if i < 0 || i >= rows.MaxExpanded {
			continue
		}
		m.expanded[mk.OpID] = true
		m.rows = m.rowIndex()
		m.cursor = m.rows.RowOfMarker(k) + 1 + i
		m.placed = m.cursor
		m.placeThird()
		m.scrollToCursor()
		return tea.Batch(m.loadBodies(), m.flash(fmt.Sprintf("%s is hidden by a %s: shown under its marker", id, mk.OpType), false))
	}
	m.jumpTo(place)
	return tea.Batch(m.loadBodies(), m.flash(fmt.Sprintf("%s is hidden by an operation here", id), false))
}

// showHit scrolls to the line of the hit gone to, once its item's body
// is loaded: unfolding the item when the line is not among those it
// shows folded.
func (m *Model) showHit() {
	h := m.hit
	if h == nil || m.rows == nil || m.rows.Len() == 0 {
		return
	}
	rw := m.rows.At(m.cursor)
	if rw.Kind != rows.Item {
		m.hit = nil
		return
	}
	it := m.view.Items[rw.Item]
	if m.view.ID(it) != h.id {
		m.hit = nil
		return
	}
	if it.Seq > 0 && m.bodies[it.Seq] == nil {
		return // its body is on its way: bodiesLoaded calls again
	}
	m.hit = nil
	lines := m.rowLines(m.cursor)
	li := search.FindLine(lines, h.line)
	if li < 0 && !m.open[h.id] { // folded away: unfold the item
		m.open[h.id] = true
		lines = m.rowLines(m.cursor)
		li = search.FindLine(lines, h.line)
	}
	hgt := m.threadHeight()
	if len(lines) <= hgt || li < 0 {
		m.scrollToCursor()
		return
	}
	// The line a third of the way down, as a jump places its item; no
	// later load moves it again.
	m.top, m.skip = m.cursor, min(max(li-hgt/3, 0), len(lines)-hgt)
	m.placed = -1
}

// nextHit goes to the next (or previous) hit after the cursor in thread
// order, wrapping at the ends. Hits an edit has hidden since the search
// are passed over, and said to be (the search lists them, and enter
// there shows one).
func (m *Model) nextHit(dir int) tea.Cmd {
	hits := m.search.Hits()
	if len(hits) == 0 {
		return m.flash("no search: / searches the thread", true)
	}
	order := make([]int, 0, len(hits)) // hits shown, in thread order
	for k, h := range hits {
		if h.Index >= 0 && m.filterShows(h.Index) {
			order = append(order, k)
		}
	}
	hidden := len(hits) - len(order)
	if len(order) == 0 {
		return m.flash(fmt.Sprintf("the %s now hidden by operations: / lists them", english.Count(hidden, "match is")), true)
	}
	slices.SortFunc(order, func(a, b int) int { return hits[a].Index - hits[b].Index })
	// Where the cursor stands in thread order: on an item, at it; on a
	// marker (or what it shows), just before the item the marker stands
	// before.
	at, onItem := 0, false
	switch rw := m.rows.At(m.cursor); rw.Kind {
	case rows.Item:
		at, onItem = rw.Item, true
	default:
		at = m.view.Markers[rw.Marker].At
	}
	pick := -1
	if dir > 0 {
		for i, k := range order {
			if idx := hits[k].Index; idx > at || idx == at && !onItem {
				pick = i
				break
			}
		}
		if pick < 0 {
			pick = 0
		}
	} else {
		for i := len(order) - 1; i >= 0; i-- {
			if hits[order[i]].Index < at {
				pick = i
				break
			}
		}
		if pick < 0 {
			pick = len(order) - 1
		}
	}
	cmd := m.gotoHit(order[pick])
	say := fmt.Sprintf("match %d/%d", pick+1, len(order))
	if hidden > 0 {
		say += fmt.Sprintf(" (%d hidden by operations since the search, passed over)", hidden)
	}
	return tea.Batch(cmd, m.flash(say, false))
}
