package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/tui/raw"
	"weft/tui/rows"
)

// The raw view (R) shows the stored thread: every stored message in the
// order it was stored, whatever the operations do to it, with each
// operation's extent drawn in lanes beside the messages it touches
// (tui/raw) and messages the effective thread does not show dimmed. It
// is for reading: the edit keys are off while it shows, since indices
// there are not the effective thread's.

type rawState struct {
	on bool
	// pending: R was pressed and the raw view is being built; it shows
	// when it comes, if the effective view it was built from still does.
	pending bool
	eff     *model.View // the effective view, kept while the raw one shows
	extents raw.Extents
}

// rawViewMsg carries a raw view built from the effective view eff.
type rawViewMsg struct {
	eff, view *model.View
}

// rawOpsMsg carries the operations' extents, found over the effective
// view eff.
type rawOpsMsg struct {
	eff     *model.View
	extents raw.Extents
	err     error
}

// buildRaw lays out the stored thread in a command: the raw view has an
// item per stored message, too many to make in Update.
func buildRaw(n int, eff *model.View) tea.Cmd {
	return func() tea.Msg { return rawViewMsg{eff, raw.NewView(n, eff)} }
}

// toggleRaw switches between the effective and the raw view, keeping the
// cursor on the same stored message where it can. The raw view is built
// in a command; rawReady shows it.
func (m *Model) toggleRaw() tea.Cmd {
	if m.view == nil {
		return nil
	}
	if m.raw.pending {
		m.raw.pending = false // R again before it came: stay here
		return nil
	}
	if !m.raw.on {
		m.raw.pending = true
		return buildRaw(m.info.MessageCount, m.view)
	}
	seq := m.seqAt(m.cursor)
	m.raw.on, m.view, m.raw.eff = false, m.raw.eff, nil
	m.rows = rows.NewIndex(m.view, m.expanded)
	if idx, _ := m.view.PlaceOfSeq(seq); seq > 0 && idx >= 0 {
		m.jumpTo(idx)
	} else {
		m.cursor = min(m.cursor, max(m.rows.Len()-1, 0))
		m.scrollToCursor()
	}
	return m.loadBodies()
}

// rawReady shows a raw view that was built: on entering it, or after a
// reload while it shows. One built from a view that no longer shows is
// dropped.
func (m *Model) rawReady(msg rawViewMsg) tea.Cmd {
	switch {
	case m.raw.on && msg.eff == m.raw.eff:
		// The stored thread only grows: the cursor stays where it is.
		m.view = msg.view
		m.rows = rows.NewIndex(m.view, nil)
		clear(m.lines)
		m.scrollToCursor()
		return tea.Batch(m.loadBodies(), m.loadRawOps())
	case m.raw.pending && msg.eff == m.view && m.dialogs.Front() == nil && !m.search.IsOpen():
		seq := m.seqAt(m.cursor)
		if seq == 0 {
			seq = m.storedBefore(m.cursor)
		}
		m.raw = rawState{on: true, eff: m.view}
		m.anchor, m.moving = -1, nil
		m.view = msg.view
		m.rows = rows.NewIndex(m.view, nil)
		m.cursor = max(min(int(seq)-1, m.rows.Len()-1), 0)
		m.scrollToCursor()
		return tea.Batch(m.loadBodies(), m.loadRawOps())
	case msg.eff == m.view:
		m.raw.pending = false // a dialog opened meanwhile: it keeps the effective view
	}
	return nil
}

// storedBefore is the last stored message shown at or before row r of
// the effective view (a synthetic item or a marker has none of its own).
func (m *Model) storedBefore(r int) uint64 {
	if m.rows == nil || m.rows.Len() == 0 {
		return 1
	}
	i := 0
	switch rw := m.rows.At(r); rw.Kind {
	case rows.Item:
		i = rw.Item
	default:
		i = m.view.Markers[rw.Marker].At
	}
	for i = min(i, m.view.Len()-1); i >= 0; i-- {
		if s := m.view.Items[i].Seq; s > 0 {
			return s
		}
	}
	return 1
}

// loadRawOps finds the operations' extents in a command: that reads
// every operation's targets.
func (m *Model) loadRawOps() tea.Cmd {
	svc, sid, eff := m.svc, m.sid, m.raw.eff
	return func() tea.Msg {
		ops, err := svc.Operations(sid)
		if err != nil {
			return rawOpsMsg{eff: eff, err: err}
		}
		return rawOpsMsg{eff: eff, extents: raw.Find(ops, eff)}
	}
}

func (m *Model) rawOpsLoaded(msg rawOpsMsg) tea.Cmd {
	if msg.err != nil {
		return m.flash(msg.err.Error(), true)
	}
	if !m.raw.on || msg.eff != m.raw.eff {
		return nil // found for a view that no longer shows
	}
	m.raw.extents = msg.extents
	clear(m.lines)
	return nil
}

// renderRawItem draws a stored message in the raw view: as the thread
// view does, dimmed when the effective thread does not show it, with the
// operations starting there named in its header.
func (m *Model) renderRawItem(it model.Item, width int, open bool) []string {
	_, visible := m.raw.eff.PlaceOfSeq(it.Seq)
	lines := m.renderItem(it, width, open, !visible)
	if label := m.raw.extents.Labels(it.Seq, m.styles); label != "" && len(lines) > 0 {
		lines[0] = ansi.Truncate(lines[0]+"  "+label, width, "…")
	}
	return lines
}
