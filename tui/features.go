package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/tui/diffview"
	"weft/tui/rows"
)

// The reading and housekeeping features a lazygit or glow user expects:
// copying (y), the pager (p), suspending (ctrl+z), the mouse, search
// hits marked in the thread, the filter (F), the sessions list's rename
// and delete, and notices of the file's other sessions. Their state
// lives here, apart from the root's (the marks' with the search, in
// tui/search), and their answers come back as featureMsg values, each of
// which applies itself to the model.

// features is the state of those features.
type features struct {
	filter filterState
	// changed marks the sessions of the file written to since the
	// operator last opened them (other than the one shown), for the
	// sessions list.
	changed map[string]bool
	// writes is the run of appends the notice showing counts (eventWhat).
	writes writeRun
}

// featureMsg is an answer of one of these features' commands: Update
// hands it the model to apply itself to.
type featureMsg interface {
	apply(m *Model) tea.Cmd
}

// syncFeatureKeys switches the features' keys on and off for the state,
// as syncKeys does the others.
func (m *Model) syncFeatureKeys() {
	k := &m.keys
	hasRows := m.rows != nil && m.rows.Len() > 0
	plain := !m.raw.on && m.moving == nil && m.view != nil
	k.Copy.SetEnabled(plain && hasRows)
	k.Pager.SetEnabled(plain && hasRows)
	k.Filter.SetEnabled(plain && (hasRows || m.feat.filter.on()))
	k.Suspend.SetEnabled(true)
	if m.feat.filter.on() {
		// A range or a move across the rows shown would take in the
		// items the filter hides between them: one item at a time.
		for _, b := range []*key.Binding{&k.Select, &k.MoveDown, &k.MoveUp, &k.Raw} {
			b.SetEnabled(false)
		}
		k.Cancel.SetEnabled(true) // esc clears the filter
	}
}

// featureKey answers the features' keys; ok is false for any other key.
func (m *Model) featureKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Copy):
		return m.copySelection(), true
	case key.Matches(msg, k.Pager):
		return m.openPager(), true
	case key.Matches(msg, k.Filter):
		return m.startFilter(), true
	case key.Matches(msg, k.Suspend):
		return tea.Suspend, true
	case key.Matches(msg, k.Diff): // D: the diff view, stored → effective
		return diffview.Open(&m.dialogs, m.svc, m.sid, m.info.Title, m.threadHeight), true
	case key.Matches(msg, k.Cancel) && m.feat.filter.on() && m.anchor < 0 && !m.full:
		return m.clearFilter(), true
	}
	return nil, false
}

// cursorItem is the item under the cursor: one of the thread's, or an
// original shown under an expanded marker; ok is false on a marker.
func (m *Model) cursorItem() (model.Item, bool) {
	if m.rows == nil || m.rows.Len() == 0 {
		return model.Item{}, false
	}
	switch rw := m.rows.At(m.cursor); rw.Kind {
	case rows.Item:
		return m.view.Items[rw.Item], true
	case rows.Hidden:
		return m.view.Markers[rw.Marker].Hidden[rw.Item], true
	}
	return model.Item{}, false
}
