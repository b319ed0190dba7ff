package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/model"
	textsearch "weft/ops/search"
	"weft/tui/dialog"
	"weft/tui/rows"
)

// The filter (F) shows only the items of a role, a tag or an author. The
// items are picked in a command (textsearch.FilterItems), for each view as it
// loads, before the view is shown: the rows are then the picks alone,
// and no key or frame does work proportional to the thread. The
// operations' markers are not rows while a filter is on: the status bar
// counts them, with the items it hides.

// filterState is the filter on, if any.
type filterState struct {
	expr string // as typed; "" when off
	by   textsearch.ItemFilter
	view *model.View    // the view rows were picked from
	rows *rows.Filtered // its picks
	last string         // the latest filter, offered again by F
}

func (f *filterState) on() bool { return f.expr != "" }

// startFilter is F: the dialog, or, with a filter on, clearing it.
func (m *Model) startFilter() tea.Cmd {
	if m.feat.filter.on() {
		return m.clearFilter()
	}
	m.dialogs.Open(dialog.NewFilter(m.styles, m.feat.filter.last))
	return nil
}

// filterReadyMsg is a filter's picks in the view shown when it was set.
type filterReadyMsg struct {
	sid  string
	view *model.View
	expr string
	by   textsearch.ItemFilter
	idx  []int
	err  error
}

// runFilter picks the items of the view shown, in a command.
func (m *Model) runFilter(expr string, by textsearch.ItemFilter) tea.Cmd {
	svc, sid, v := m.svc, m.sid, m.view
	return func() tea.Msg {
		idx, err := svc.FilterItems(v, by)
		return filterReadyMsg{sid: sid, view: v, expr: expr, by: by, idx: idx, err: err}
	}
}

func (msg filterReadyMsg) apply(m *Model) tea.Cmd {
	if msg.sid != m.sid || m.view == nil {
		return nil
	}
	if msg.view != m.view {
		return m.runFilter(msg.expr, msg.by) // the thread changed meanwhile: pick again
	}
	if msg.err != nil {
		return m.flash("filter: "+msg.err.Error(), true)
	}
	m.feat.filter.last = msg.expr
	if len(msg.idx) == 0 {
		return m.flash("nothing in the thread matches "+msg.expr, true)
	}
	at := m.cursorIndex()
	m.feat.filter = filterState{expr: msg.expr, by: msg.by, view: msg.view, rows: rows.NewFiltered(msg.view, msg.idx), last: msg.expr}
	m.anchor = -1
	m.rows = m.rowIndex()
	m.refit(at)
	return tea.Batch(m.loadBodies(), m.flash(fmt.Sprintf("filter %s: %s of %s", msg.expr, english.Count(len(msg.idx), "item"), english.Thousands(m.view.Len())), false))
}

// cursorIndex is the index of the item the cursor is on or stands
// before (a marker's place).
func (m *Model) cursorIndex() int {
	if m.rows == nil || m.rows.Len() == 0 {
		return 0
	}
	switch rw := m.rows.At(m.cursor); rw.Kind {
	case rows.Item:
		return rw.Item
	default:
		return m.view.Markers[rw.Marker].At
	}
}

// refit puts the cursor on item i (or the nearest row shown after it)
// after the rows changed, and the screen around it.
func (m *Model) refit(i int) {
	if m.rows.Len() == 0 {
		m.cursor, m.top, m.skip = 0, 0, 0
		return
	}
	m.cursor = m.rows.RowOfItem(min(i, max(m.view.Len()-1, 0)))
	m.placeThird()
	m.scrollToCursor()
}

// clearFilter shows every item again, the cursor kept on its item.
func (m *Model) clearFilter() tea.Cmd {
	at := m.cursorIndex()
	expr := m.feat.filter.expr
	m.feat.filter = filterState{last: expr}
	m.rows = m.rowIndex()
	m.refit(at)
	return tea.Batch(m.loadBodies(), m.flash("filter "+expr+" cleared", false))
}

// rowIndex is the rows of the view shown: the filter's picks when one is
// on (and picked from this view), else every item and marker.
func (m *Model) rowIndex() rows.Source {
	if f := &m.feat.filter; f.on() && f.view == m.view && f.rows != nil {
		return f.rows
	}
	return rows.NewIndex(m.view, m.expanded)
}

// filteredViewMsg is a view loaded while a filter is on, with its picks.
type filteredViewMsg struct {
	loaded viewLoadedMsg
	idx    []int
	err    error
}

// filterFirst holds a view that loads while a filter is on until the
// filter has picked its items, in a command; nil when the view can be
// shown as it is.
func (m *Model) filterFirst(msg viewLoadedMsg) tea.Cmd {
	f := &m.feat.filter
	if !f.on() || msg.err != nil || msg.view == f.view || msg.info.ID != m.sid || m.raw.on {
		return nil
	}
	svc, by := m.svc, f.by
	return func() tea.Msg {
		idx, err := svc.FilterItems(msg.view, by)
		return filteredViewMsg{loaded: msg, idx: idx, err: err}
	}
}

func (msg filteredViewMsg) apply(m *Model) tea.Cmd {
	f := &m.feat.filter
	if msg.loaded.info.ID != m.sid || !f.on() || (m.view != nil && msg.loaded.info.Version < m.info.Version) {
		return nil // for a session or a filter no longer shown, or older than the view shown
	}
	var say tea.Cmd
	if msg.err != nil || len(msg.idx) == 0 {
		// The edit took the last match away (or the pick failed): the
		// whole thread, said so, rather than an empty screen.
		why := "nothing matches it any more"
		if msg.err != nil {
			why = msg.err.Error()
		}
		say = m.flash(fmt.Sprintf("filter %s cleared: %s", f.expr, why), true)
		*f = filterState{last: f.expr}
	} else {
		f.view, f.rows = msg.loaded.view, rows.NewFiltered(msg.loaded.view, msg.idx)
	}
	return tea.Batch(m.viewLoaded(msg.loaded), say)
}

// filterStatus is the status bar's word on the filter, or "".
func (m *Model) filterStatus() string {
	f := &m.feat.filter
	if !f.on() || f.rows == nil {
		return ""
	}
	s := fmt.Sprintf("filter %s: %s/%s", f.expr, english.Thousands(f.rows.Len()), english.Thousands(m.view.Len()))
	if n := len(m.view.Markers); n > 0 {
		s += " (" + english.Count(n, "marker") + " folded)"
	}
	return s
}

// filterShows reports whether item i is among the rows shown: every item
// without a filter; with one, its picks alone (an item hidden by an
// operation, i < 0, is not).
func (m *Model) filterShows(i int) bool {
	f := &m.feat.filter
	if !f.on() || f.rows == nil {
		return true
	}
	return f.rows.Shows(i)
}
