package tui

import (
	tea "charm.land/bubbletea/v2"

	"weft/internal/termsafe"
	"weft/ops"
	"weft/ops/tools"
	"weft/tui/dialog"
)

// The TUI may work through the weft that holds the file (Options.Holder,
// ops/relay's Remote as its Desk): the status bar says through which,
// where it listens now. When that weft stops answering, the bar says it
// is gone and every read or edit says why it fails, until a weft holds
// the file again: then the thread, and what a dialog lists, are read
// again, since writes were missed.

// holderEvent answers the events of the watch through the holder: its
// loss, and the gap once it answers again. ok is false for any other
// event.
func (m *Model) holderEvent(ev ops.Event) (cmd tea.Cmd, ok bool) {
	switch ev.Kind {
	case tools.EventLost:
		m.holderLost = true
		return m.flashFor("the weft at "+m.holderAddr()+" stopped answering: nothing is read or changed until a weft holds the file again", true, noticeTTL), true
	case tools.EventGap:
		cmds := []tea.Cmd{m.loadView(m.sid)}
		if m.sid == "" {
			cmds[0] = m.loadView(m.opts.Session)
		}
		if _, open := dialog.Find[*dialog.Operations](&m.dialogs); open {
			cmds = append(cmds, loadOps(m.svc, m.sid))
		}
		if _, open := dialog.Find[*dialog.Sessions](&m.dialogs); open {
			cmds = append(cmds, loadSessions(m.svc))
		}
		if m.holderLost {
			m.holderLost = false
			cmds = append(cmds, m.flash("a weft holds the file again: the thread is read again", false))
		}
		return tea.Batch(cmds...), true
	}
	return nil, false
}

// holderPart is the status bar's word on the weft the TUI works through.
func (m *Model) holderPart() string {
	st := &m.styles.Status
	if m.holderLost {
		return st.Error.Render("weft at " + m.holderAddr() + " gone")
	}
	return st.Key.Render("through weft at ") + st.Value.Render(m.holderAddr())
}

// holderAddr is where the weft the TUI works through listens now, made
// safe to show.
func (m *Model) holderAddr() string {
	if m.opts.Holder == nil {
		return ""
	}
	return termsafe.Line(m.opts.Holder.Addr())
}
