package tui

import (
	"context"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
)

// u undoes the operator's own latest operation, never an agent's made
// since; ctrl+r redoes what u undid, and says so when there is nothing.
func TestUndoIsTheOperatorsOwn(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	before := mustOps(t, svc, m.sid)
	var mine model.Op // the demo's latest operation by the operator
	for _, op := range before {
		if op.Author == "operator" {
			mine = op
		}
	}
	agent := ops.WithAuthor(context.Background(), "claude-code")
	start, end := 5, 6
	if _, err := svc.SnipMessages(agent, ops.SnipArgs{Selection: ops.Selection{SessionID: m.sid, StartIdx: &start, EndIdx: &end}}); err != nil {
		t.Fatal(err)
	}
	agents := lastOp(t, svc, m.sid)
	run(t, m, m.loadView(m.sid))

	press(t, m, "u")
	if op := opByID(t, svc, m.sid, agents.ID); op.Reverted() {
		t.Fatalf("u reverted the agent's %s", op.Type)
	}
	if op := opByID(t, svc, m.sid, mine.ID); !op.Reverted() {
		t.Fatalf("u did not revert the operator's latest operation (%s)", mine.Type)
	}
	if s := screen(m); !strings.Contains(s, "undid your "+string(mine.Type)) {
		t.Errorf("u does not say whose operation it undid:\n%s", s)
	}

	send(t, m, keyRedo)
	if op := opByID(t, svc, m.sid, mine.ID); op.Reverted() {
		t.Fatalf("ctrl+r did not redo the %s", mine.Type)
	}
	send(t, m, keyRedo)
	if s := screen(m); !strings.Contains(s, "nothing to redo") {
		t.Errorf("ctrl+r with nothing to redo says nothing:\n%s", s)
	}

	// With every one of the operator's operations undone, u says so and
	// leaves the agents' alone.
	for range 5 {
		press(t, m, "u")
	}
	for _, op := range mustOps(t, svc, m.sid) {
		if op.Author != "operator" && op.Reverted() {
			t.Fatalf("u reverted %s's %s", op.Author, op.Type)
		}
		if op.Author == "operator" && !op.Reverted() {
			t.Fatalf("the operator's %s was not undone", op.Type)
		}
	}
	if s := screen(m); !strings.Contains(s, "nothing of yours to undo") {
		t.Errorf("u with nothing of the operator's left says:\n%s", s)
	}
}

func opByID(t *testing.T, svc *ops.Service, sid, id string) model.Op {
	t.Helper()
	for _, op := range mustOps(t, svc, sid) {
		if op.ID == id {
			return op
		}
	}
	t.Fatalf("no operation %s", id)
	return model.Op{}
}
