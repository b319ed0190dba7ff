package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/tui/dialog"
)

// plainThread is a session of n messages "message 1".."message n" (m1..mn)
// and a model open on it.
func plainThread(t *testing.T, n int) (*Model, *ops.Service) {
	t.Helper()
	svc := newService(t)
	var msgs []model.NewMessage
	for i := 1; i <= n; i++ {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("message %d", i)})
	}
	sid := newSession(t, svc, "Plain", msgs)
	return openModel(t, svc, Options{Theme: "dark"}, sid, 100, 40), svc
}

// agentEdit makes an edit as an agent would, over the service, and
// tells the model as the program's event loop does.
func agentEdit(t *testing.T, m *Model, svc *ops.Service, edit func(ctx context.Context) error) {
	t.Helper()
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	if err := edit(ctx); err != nil {
		t.Fatal(err)
	}
	info, _, err := svc.View(m.sid)
	if err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(eventMsg(ops.Event{SessionID: m.sid, Version: info.Version, What: "an edit", Author: "claude-code"}))
	run(t, m, cmd)
}

// selectM5toM7 puts the cursor on m5 and selects m5..m7.
func selectM5toM7(t *testing.T, m *Model) {
	t.Helper()
	press(t, m, "g", "j", "j", "j", "j", "v", "j", "j")
}

func TestDigestCoversWhatWasSelectedWhenAnAgentInserts(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 12)
	selectM5toM7(t, m)
	press(t, m, "d")
	typeText(t, m, "Five to seven.")
	after := 0
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.InsertMessages(ctx, ops.InsertArgs{SessionID: m.sid, AfterIdx: &after, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "the agent's note"}}})
		return err
	})
	send(t, m, keySave)
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpDigest || !slices.Equal(op.Targets, []model.ItemID{"m5", "m6", "m7"}) {
		t.Fatalf("the digest is %s of %v, want a digest of m5, m6, m7", op.Type, op.Targets)
	}
	if m.dialogs.Front() != nil {
		t.Fatal("the dialog is still open after the digest was made")
	}
}

func TestRefusedDigestKeepsTheDialogAndSaysWhatChanged(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 12)
	selectM5toM7(t, m)
	press(t, m, "d")
	typeText(t, m, "Five to seven.")
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.TagMessages(ctx, ops.TagArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{"m6"}}, Tags: []string{"agent"}})
		return err
	})
	n := len(mustOps(t, svc, m.sid))
	send(t, m, keySave)
	if got := len(mustOps(t, svc, m.sid)); got != n {
		t.Fatalf("the digest was made over an agent's change to m6 (%d operations, want %d)", got, n)
	}
	d, ok := m.dialogs.Front().(*dialog.Text)
	if !ok || d.Value() != "Five to seven." {
		t.Fatalf("the dialog closed or lost its text: %T", m.dialogs.Front())
	}
	if s := boxText(screen(m)); !strings.Contains(s, "acts on m6") || !strings.Contains(s, "tag") || !strings.Contains(s, "claude-code") {
		t.Fatalf("the dialog does not say what changed:\n%s", screen(m))
	}
	// Having read it, the operator may digest the same items as they
	// are now.
	send(t, m, keySave)
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpDigest || !slices.Equal(op.Targets, []model.ItemID{"m5", "m6", "m7"}) || m.dialogs.Front() != nil {
		t.Fatalf("a second ctrl+s made %s of %v (dialog %T)", op.Type, op.Targets, m.dialogs.Front())
	}
}

// TestRangeKeepsItsItemsWhileSelecting: an agent's insert above a range
// being selected does not move its start.
func TestRangeKeepsItsItemsWhileSelecting(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 12)
	press(t, m, "g", "j", "j", "j", "j", "v", "j")
	after := 0
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.InsertMessages(ctx, ops.InsertArgs{SessionID: m.sid, AfterIdx: &after, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "the agent's note"}}})
		return err
	})
	press(t, m, "j", "s")
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpSnip || !slices.Equal(op.Targets, []model.ItemID{"m5", "m6", "m7"}) {
		t.Fatalf("the snip is %s of %v, want m5, m6, m7", op.Type, op.Targets)
	}
}

// TestTagAndInsertNameTheirItems: the tag and insert dialogs, too, act on
// what was under the cursor when they opened.
func TestTagAndInsertNameTheirItems(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 12)
	press(t, m, "g", "j", "j", "t")
	typeText(t, m, "third")
	after := 0
	note := []model.NewMessage{{Role: model.RoleUser, Content: "the agent's note"}}
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.InsertMessages(ctx, ops.InsertArgs{SessionID: m.sid, AfterIdx: &after, Messages: note})
		return err
	})
	send(t, m, keyEnter)
	if op := lastOp(t, svc, m.sid); op.Type != model.OpTag || !slices.Equal(op.Targets, []model.ItemID{"m3"}) {
		t.Fatalf("the tag is %s of %v, want m3", op.Type, op.Targets)
	}
	press(t, m, "i")
	typeText(t, m, "after the third")
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.InsertMessages(ctx, ops.InsertArgs{SessionID: m.sid, AfterIdx: &after, Messages: note})
		return err
	})
	send(t, m, keySave)
	if op := lastOp(t, svc, m.sid); op.Type != model.OpInsert || op.Anchor != "m3" {
		t.Fatalf("the insert is %s after %q, want after m3", op.Type, op.Anchor)
	}
}
