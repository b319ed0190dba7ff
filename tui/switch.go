package tui

import (
	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
	"weft/tui/rows"
	"weft/tui/search"
)

// openSession switches to another session of the file. Everything kept
// for the one shown belongs to it alone: its stored messages and synthetic
// items have the same IDs as the other's (m1, m2, …), so its rendered
// rows, loaded bodies, unfolded items, expanded markers and search would
// show the wrong thread if they were kept. Answers still on their way for
// it are dropped when they come (they name their session).
func (m *Model) openSession(id string) tea.Cmd {
	m.sid = id
	m.info.Title = ""
	m.view, m.rows, m.anchor, m.moving = nil, nil, -1, nil
	m.cursor, m.top, m.skip, m.placed, m.hit = 0, 0, 0, -1, nil
	m.search = search.Panel{}
	m.raw = rawState{}
	m.timeline = ops.Timeline{}
	m.loading = false // a read for the other session is forgotten, not waited for
	clear(m.expanded)
	clear(m.open)
	clear(m.bodies)
	clear(m.lines)
	m.forgetFeatures(id)
	return m.loadView(id)
}

// anchorItem is the item a range being selected starts on, if any.
func (m *Model) anchorItem() model.ItemID {
	if m.anchor < 0 || m.view == nil || m.anchor >= m.rows.Len() {
		return ""
	}
	if rw := m.rows.At(m.anchor); rw.Kind == rows.Item {
		return m.view.ID(m.view.Items[rw.Item])
	}
	return ""
}

// keepAnchor puts a range's start back on its item after the view
// changed under it (an agent's edit above it moves its row); a range
// whose start went into an operation is dropped, not moved elsewhere.
func (m *Model) keepAnchor(id model.ItemID) {
	if m.anchor < 0 {
		return
	}
	if i := m.view.IndexOf(id); id != "" && i >= 0 {
		m.anchor = m.rows.RowOfItem(i)
		return
	}
	m.anchor = -1
}
