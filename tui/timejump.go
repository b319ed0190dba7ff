package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/internal/termsafe"
	"weft/ops/memory"
	"weft/tui/dialog"
	"weft/tui/rows"
)

// T jumps to a time, counted from the cursor's (tui/dialog's Time says
// why): the root reads the time through the Service in a command, and
// the dialog closes on a time read or says why one could not be.

type timeJumpMsg struct {
	index int
	at    time.Time
	err   error
}

func (m *Model) startTimeJump() tea.Cmd {
	m.dialogs.Open(dialog.NewTime(m.styles, m.cursorBase()))
	return nil
}

// jumpToTime finds the item at a time in a command.
func (m *Model) jumpToTime(a dialog.ActionJumpToTime) tea.Cmd {
	svc, sid := m.svc, m.sid
	return func() tea.Msg {
		i, at, err := svc.ItemAt(sid, a.When, a.Base)
		return timeJumpMsg{i, at, err}
	}
}

// cursorBase is the time T counts from: the message under the cursor's;
// on a marker, the message it stands before; without either, the
// thread's last message (zero, now, when nothing is dated).
func (m *Model) cursorBase() time.Time {
	if at, ok := m.cursorTime(); ok {
		return at
	}
	if m.rows != nil && m.rows.Len() > 0 {
		rw := m.rows.At(m.cursor)
		if rw.Kind != rows.Item {
			mk := &m.view.Markers[rw.Marker]
			if rw.Kind == rows.Hidden {
				if at, ok := m.itemTime(mk.Hidden[rw.Item]); ok {
					return at
				}
			}
			if mk.At < m.view.Len() {
				if at, ok := m.itemTime(m.view.Items[mk.At]); ok {
					return at
				}
			}
		}
	}
	return m.timeline.End
}

// timeJumped takes the answer to a jump: the dialog closes on a time
// read and shows why on one that could not be.
func (m *Model) timeJumped(msg timeJumpMsg) tea.Cmd {
	d, open := m.dialogs.Front().(*dialog.Time)
	if msg.err != nil {
		if open {
			d.Fail(msg.err)
			return nil
		}
		return m.flash(msg.err.Error(), true)
	}
	if open {
		m.dialogs.Close(d)
	}
	if m.statusErr {
		m.status = "" // an earlier error is answered
	}
	m.jumpTo(msg.index)
	if msg.index >= m.view.Len() {
		return tea.Batch(m.loadBodies(), m.flash("nothing at or after "+msg.at.Local().Format("Jan 02 15:04")+": at the end", false))
	}
	return m.loadBodies()
}

// openMemory reads the session's memory policy for M's dialog (and
// what its requests through the proxy sent); memoryLoaded opens it.
func (m *Model) openMemory() tea.Cmd {
	svc, sid := m.svc, m.sid
	return func() tea.Msg {
		res, err := svc.GetMemoryPolicy(context.Background(), memory.MemoryPolicyArgs{SessionID: sid})
		return memoryMsg{res, err}
	}
}

// memoryMsg is the session's memory policy, read for M's dialog.
type memoryMsg struct {
	res memory.MemoryPolicyResult
	err error
}

// memoryLoaded opens M's dialog: ctrl+s sets what it says
// (set_memory_policy), which applies at once.
func (m *Model) memoryLoaded(msg memoryMsg) tea.Cmd {
	if msg.err != nil {
		return m.flash(msg.err.Error(), true)
	}
	t := m.target()
	var d *dialog.Text
	d = dialog.NewMemory(m.styles, termsafe.Line(m.info.Title), msg.res.Policy, msg.res.Proxy, func(text string) tea.Cmd {
		return m.editFrom(d, &t, "memory policy set", func(ctx context.Context, t editTarget) error {
			a, err := dialog.MemoryArgs(text)
			if err == nil {
				a.SessionID = t.sid
				_, err = t.svc.SetMemoryPolicy(ctx, a)
			}
			return err
		})
	})
	m.dialogs.Open(d)
	return nil
}
