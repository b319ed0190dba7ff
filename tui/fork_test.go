package tui

import (
	"context"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/tui/rows"
)

// b forks the session at the item under the cursor: the fork opens,
// with the thread up to that item, and the source is as it was.
func TestForkAtTheCursor(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 120, 40)
	src := m.sid
	_, before, err := svc.View(src)
	if err != nil {
		t.Fatal(err)
	}
	press(t, m, "g", "j", "j", "j")
	it, ok := m.cursorItem()
	if !ok {
		t.Fatal("no item under the cursor")
	}
	at := m.view.IndexOf(m.view.ID(it))
	press(t, m, "b")
	if m.sid == src {
		t.Fatalf("b did not open a fork:\n%s", screen(m))
	}
	info, v, err := svc.View(m.sid)
	if err != nil {
		t.Fatal(err)
	}
	if info.ForkOf == nil || info.ForkOf.SessionID != src || info.ForkOf.Index != at || len(v.Items) != at+1 {
		t.Errorf("the fork %+v shows %d items; want a fork of %s at %d", info.ForkOf, len(v.Items), src, at)
	}
	if len(m.view.Items) != at+1 || !strings.Contains(screen(m), "forked at item") {
		t.Errorf("the TUI does not show the fork:\n%s", screen(m))
	}
	if _, after, _ := svc.View(src); len(after.Items) != len(before.Items) {
		t.Errorf("the source changed: %d items, was %d", len(after.Items), len(before.Items))
	}
}

// b on a marker row is refused in words, in a session whose operations
// made no synthetic item (a snip alone): it panicked reading the
// marker's item before it checked there was one.
func TestForkOnAMarkerIsRefused(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 6)
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.SnipMessages(ctx, ops.SnipArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{"m2"}}})
		return err
	})
	src := m.sid
	press(t, m, "g")
	for m.rows.At(m.cursor).Kind != rows.Marker {
		before := m.cursor
		press(t, m, "j")
		if m.cursor == before {
			t.Fatalf("no marker row:\n%s", screen(m))
		}
	}
	press(t, m, "b")
	if m.sid != src || !strings.Contains(screen(m), "a fork ends at a message") {
		t.Errorf("b on a marker: session %s (was %s)\n%s", m.sid, src, screen(m))
	}
}
