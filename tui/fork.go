package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"weft/ops/fork"
)

// forkedMsg is the fork b made.
type forkedMsg struct {
	res fork.Result
	err error
}

// fork forks the open session at the item under the cursor (b): a new
// session with the thread up to it, which opens; the source stays as it
// was, one tab away.
func (m *Model) fork() tea.Cmd {
	idx := -1
	if it, ok := m.cursorItem(); ok { // not a marker, which has no item of its own
		idx = m.view.IndexOf(m.view.ID(it))
	}
	if idx < 0 {
		return m.flash("a fork ends at a message of the thread: put the cursor on one", true)
	}
	svc, sid := m.svc, m.sid
	return func() tea.Msg {
		res, err := svc.ForkSession(context.Background(), fork.Args{SessionID: sid, AtIdx: &idx})
		return forkedMsg{res: res, err: err}
	}
}

// forked opens the fork made.
func (m *Model) forked(msg forkedMsg) tea.Cmd {
	if msg.err != nil {
		return m.flash("no fork: "+msg.err.Error(), true)
	}
	return tea.Batch(m.openSession(msg.res.SessionID),
		m.flash(fmt.Sprintf("forked at item %d: “%s”, %d items (tab: sessions, its source among them)", msg.res.ForkOf.Index, msg.res.Title, msg.res.Items), false))
}
