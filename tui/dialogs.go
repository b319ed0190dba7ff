package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
	"weft/tui/dialog"
	"weft/tui/handoff"
)

// The dialogs (tui/dialog) stand in front of the thread in m.dialogs:
// the front one gets the keys, and the root does what the Action it
// returns asks. Everything a dialog asks that reads or writes the file
// is done here, in commands, through the Service; the answers go back to
// the dialog through its methods.

// act does what dialog d asked.
func (m *Model) act(d dialog.Dialog, a dialog.Action) tea.Cmd {
	switch a := a.(type) {
	case dialog.ActionCmd:
		return a.Cmd
	case dialog.ActionClose:
		m.dialogs.Close(d)
		if a.Notice != "" {
			return m.flash(a.Notice, false)
		}
	case dialog.ActionOpen:
		m.dialogs.Open(a.Dialog)
	case dialog.ActionOpenEditor:
		return handoff.Edit(m.opts.Editor, a.Text)
	case dialog.ActionJumpToTime:
		return m.jumpToTime(a)
	case dialog.ActionFilter:
		m.dialogs.Close(d)
		return m.runFilter(a.Expr, a.By)
	case dialog.ActionJump:
		m.dialogs.Close(d)
		m.jumpTo(a.Index)
		return m.loadBodies()
	case dialog.ActionToggleOperation:
		svc, args := m.svc, ops.ToggleArgs{OperationArgs: ops.OperationArgs{OperationID: a.ID, SessionID: m.sid}, Active: &a.Active}
		return change(a.What, func(ctx context.Context) error {
			_, err := svc.ToggleOperation(ctx, args)
			return err
		})
	case dialog.ActionRevertOperation:
		svc, args := m.svc, ops.OperationArgs{OperationID: a.ID, SessionID: m.sid}
		return change(a.What, func(ctx context.Context) error {
			_, err := svc.RevertOperation(ctx, args)
			return err
		})
	case dialog.ActionOpenSession:
		m.dialogs.Close(d)
		if a.ID == m.sid {
			return nil
		}
		return m.openSession(a.ID)
	case dialog.ActionRenameSession:
		if p, ok := dialog.Find[*dialog.Sessions](&m.dialogs); ok {
			p.Refused("") // a new title: the last refusal is answered
		}
		return renameSession(m.svc, a.ID, a.Title)
	case dialog.ActionDeleteSession:
		m.dialogs.Close(d)
		return deleteSession(m.svc, a.Session)
	}
	return nil
}

type opsLoadedMsg struct {
	list []reads.OperationOut
	err  error
}

func loadOps(svc tools.Desk, sid string) tea.Cmd {
	return func() tea.Msg {
		res, err := svc.ListOperations(context.Background(), reads.ListOperationsArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
		return opsLoadedMsg{res.Operations, err}
	}
}

// change runs a change the operations panel asked for in a command; its
// report reloads the thread and the panel's list. fn must use only
// values captured before: it runs on its own goroutine.
func change(what string, fn func(ctx context.Context) error) tea.Cmd {
	return func() tea.Msg { return editDoneMsg{what: what, err: fn(context.Background())} }
}
