package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/model"
	"weft/ops"
	"weft/tui/dialog"
)

// Undo and redo act on the operator's own operations: u reverts the
// latest operation the operator made that is still in effect, never an
// agent's that came after it (reverting someone else's is explicit, from
// the operations panel, and names them); ctrl+r restores what u
// reverted, newest first.

// operator is the author the service records for the TUI's edits (and
// the command line's): writes without an agent's name.
const operator = "operator"

// undoStep is an operation u reverted, kept so ctrl+r can restore it.
type undoStep struct {
	sid, opID string
	what      string // "snip of 2 items", for the messages
	redone    bool   // the step was a redo: it leaves the stack
}

// describeUndo names an operation for the undo and redo messages.
func describeUndo(op model.Op) string {
	if n := len(op.Targets); n > 0 {
		return fmt.Sprintf("%s of %s", op.Type, english.Count(n, "item"))
	}
	return string(op.Type)
}

// undo reverts the operator's latest operation still in effect.
func (m *Model) undo() tea.Cmd {
	t := m.target()
	// What the messages name of the keys, taken here: the command runs
	// on its own goroutine.
	redoKey := m.keys.Redo.Help().Key
	nothing := fmt.Errorf("nothing of yours to undo: %s lists every operation, and %s there reverts one by anyone",
		m.keys.Operations.Help().Key, dialog.DefaultOperationsKeys().Revert.Help().Key)
	return func() tea.Msg {
		list, err := t.svc.Operations(t.sid)
		if err != nil {
			return editDoneMsg{what: "undo", err: err}
		}
		for i := len(list) - 1; i >= 0; i-- {
			op := list[i]
			if op.Author != operator || op.Reverted() {
				continue
			}
			step := undoStep{sid: t.sid, opID: op.ID, what: describeUndo(op)}
			_, err := t.svc.RevertOperation(context.Background(), ops.OperationArgs{OperationID: op.ID, SessionID: t.sid, ExpectedVersion: t.opts().ExpectedVersion})
			return editDoneMsg{what: fmt.Sprintf("undid your %s (%s redoes it)", step.what, redoKey), err: err, undo: &step}
		}
		return editDoneMsg{what: "undo", err: nothing}
	}
}

// redo restores the operation the latest undo reverted.
func (m *Model) redo() tea.Cmd {
	// Steps of another session are of no use here: dropped.
	for len(m.redoStack) > 0 && m.redoStack[len(m.redoStack)-1].sid != m.sid {
		m.redoStack = m.redoStack[:len(m.redoStack)-1]
	}
	if len(m.redoStack) == 0 {
		return m.flash(m.redoReason(), true)
	}
	step := m.redoStack[len(m.redoStack)-1]
	m.redoStack = m.redoStack[:len(m.redoStack)-1]
	step.redone = true
	t := m.target()
	return func() tea.Msg {
		_, err := t.svc.RestoreOperation(context.Background(), ops.OperationArgs{OperationID: step.opID, SessionID: t.sid, ExpectedVersion: t.opts().ExpectedVersion})
		return editDoneMsg{what: "redid your " + step.what, err: err, undo: &step}
	}
}

// redoReason is what ctrl+r says when there is nothing to redo.
func (m *Model) redoReason() string {
	return "nothing to redo: " + m.keys.Redo.Help().Key + " restores what " + m.keys.Undo.Help().Key + " undid"
}

// keepRedo updates the redo stack for a finished edit: an undo pushes
// what it reverted; any other edit of the operator's starts a new
// history, as in an editor, so ctrl+r never brings back an operation
// from before it.
func (m *Model) keepRedo(msg editDoneMsg) {
	switch {
	case msg.undo == nil:
		m.redoStack = m.redoStack[:0]
	case !msg.undo.redone:
		m.redoStack = append(m.redoStack, *msg.undo)
	}
}
