package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
	"weft/tui/dialog"
)

var keySpace = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}

// panelTo puts the operations panel's cursor on the first operation of
// a type, moving it as the operator does.
func panelTo(t *testing.T, m *Model, typ model.OpType) *dialog.Operations {
	t.Helper()
	p, ok := m.dialogs.Front().(*dialog.Operations)
	if !ok {
		t.Fatalf("no operations panel: %T", m.dialogs.Front())
	}
	press(t, m, "g")
	for {
		op, _ := p.Current()
		if op.OpType == typ {
			return p
		}
		press(t, m, "j")
		if next, _ := p.Current(); next.OperationID == op.OperationID {
			break // the last one
		}
	}
	t.Fatalf("no %s in the panel", typ)
	return nil
}

// x asks before it reverts, naming the operation and its author; n keeps
// the operation, y reverts it.
func TestOperationsPanelRevertAsksFirst(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	press(t, m, "o")
	p := panelTo(t, m, model.OpDigest) // the agent's digest
	op, _ := p.Current()
	id := op.OperationID
	press(t, m, "x")
	if op := opByID(t, svc, m.sid, id); op.Reverted() {
		t.Fatal("x reverted without asking")
	}
	s := screen(m)
	if !strings.Contains(s, "Revert claude-code's digest of 10 items") || !strings.Contains(s, "y revert") || !strings.Contains(s, "n keep it") {
		t.Fatalf("x does not ask, naming the digest and its author:\n%s", s)
	}
	press(t, m, "n")
	if op := opByID(t, svc, m.sid, id); op.Reverted() {
		t.Fatal("n reverted the digest")
	}
	if s := screen(m); strings.Contains(s, "Revert claude-code's") || m.dialogs.Front() == nil {
		t.Fatalf("n did not go back to the list:\n%s", s)
	}
	press(t, m, "x", "y")
	if op := opByID(t, svc, m.sid, id); !op.Reverted() {
		t.Fatal("x y did not revert the digest")
	}
	if s := screen(m); !strings.Contains(s, "reverted claude-code's digest") {
		t.Errorf("the revert does not name whose operation it was:\n%s", s)
	}

	// The operator's own: "your".
	panelTo(t, m, model.OpSnip)
	press(t, m, "x")
	if s := screen(m); !strings.Contains(s, "Revert your snip of 2 items") {
		t.Fatalf("x on the operator's snip:\n%s", s)
	}
	send(t, m, keyEsc)
	if m.dialogs.Front() == nil {
		t.Fatal("esc in the question closed the panel")
	}
}

// Keys that do nothing on the operation under the cursor say why.
func TestOperationsPanelSaysWhyAKeyDoesNothing(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	ctx := context.Background()
	list := mustOps(t, svc, m.sid)
	var tag, snip string
	for _, op := range list {
		switch op.Type {
		case model.OpTag:
			tag = op.ID
		case model.OpSnip:
			snip = op.ID
		}
	}
	off := false
	if _, err := svc.ToggleOperation(ctx, ops.ToggleArgs{OperationArgs: ops.OperationArgs{OperationID: tag, SessionID: m.sid}, Active: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RevertOperation(ctx, ops.OperationArgs{OperationID: snip, SessionID: m.sid}); err != nil {
		t.Fatal(err)
	}
	press(t, m, "o")
	panelTo(t, m, model.OpTag)
	send(t, m, keyEnter)
	if m.dialogs.Front() == nil {
		t.Fatal("enter on an inactive operation closed the panel")
	}
	if s := screen(m); !strings.Contains(s, "switched off: it shows nowhere") {
		t.Fatalf("enter on an inactive operation says nothing:\n%s", s)
	}
	panelTo(t, m, model.OpSnip)
	send(t, m, keySpace)
	if s := screen(m); !strings.Contains(s, "reverted: it cannot be switched on or off") {
		t.Fatalf("space on a reverted operation says nothing:\n%s", s)
	}
	press(t, m, "x")
	if s := screen(m); !strings.Contains(s, "already reverted") {
		t.Fatalf("x on a reverted operation says nothing:\n%s", s)
	}
}

// Reverting a digest whose summary an agent revised since: the question
// says the revise stays, standing over the digest's items, as the
// engine does it.
func TestOperationsPanelRevertSaysWhatStays(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 140, 40)
	press(t, m, "o")
	op, _ := panelTo(t, m, model.OpDigest).Current()
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	r, err := svc.ReviseMessages(ctx, ops.ReviseArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{model.SyntheticID(op.OperationID, 0)}},
		Replacements: []model.NewMessage{{Role: model.RoleSystem, Content: "A better summary."}}})
	if err != nil {
		t.Fatal(err)
	}
	send(t, m, keyEsc)
	press(t, m, "o")
	panelTo(t, m, model.OpDigest)
	press(t, m, "x")
	s := strings.Join(strings.Fields(strings.ReplaceAll(screen(m), "│", " ")), " ")
	if want := "claude-code's revise " + r.OperationID + ", made over it, stays: it will stand over the 10 items the digest replaced."; !strings.Contains(s, want) {
		t.Fatalf("the question does not say the revise stays (%q):\n%s", want, screen(m))
	}
}
