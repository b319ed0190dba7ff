package tui

import (
	"context"
	"slices"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/tui/rows"
)

// cursorID is the ID of the item under the cursor (an original under an
// expanded marker included), or "".
func cursorID(m *Model) model.ItemID {
	switch rw := m.rows.At(m.cursor); rw.Kind {
	case rows.Item:
		return m.view.ID(m.view.Items[rw.Item])
	case rows.Hidden:
		return m.view.ID(m.view.Markers[rw.Marker].Hidden[rw.Item])
	}
	return ""
}

// searchFor opens the search, types q and waits for its hits.
func searchFor(t *testing.T, m *Model, q string) {
	t.Helper()
	press(t, m, "/")
	typeText(t, m, q)
	if len(m.search.Hits()) == 0 {
		t.Fatalf("no hit for %q", q)
	}
}

func TestSearchHitsFollowTheirItemsAfterAnEdit(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 30)
	searchFor(t, m, "message 17")
	if m.search.Hits()[0].Line != "message 17" {
		t.Fatalf("the best hit is %q", m.search.Hits()[0].Line)
	}
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.SnipMessages(ctx, ops.SnipArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{"m2", "m3", "m4"}}})
		return err
	})
	send(t, m, keyEnter)
	if id := cursorID(m); id != "m17" {
		t.Fatalf("enter on the hit for m17 went to %q after a snip above it", id)
	}
}

func TestSearchHitHiddenByADigestIsShownUnderItsMarker(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 30)
	searchFor(t, m, "message 17")
	send(t, m, keyEsc)
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.DigestMessages(ctx, ops.DigestArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{"m16", "m17", "m18"}}, Summary: "three"})
		return err
	})
	press(t, m, "/") // the list says the hit is hidden now
	if s := screen(m); !strings.Contains(s, "hidden message 17") {
		t.Fatalf("the hit for a digested message is not marked hidden:\n%s", s)
	}
	send(t, m, keyEnter)
	if rw := m.rows.At(m.cursor); rw.Kind != rows.Hidden || cursorID(m) != "m17" {
		t.Fatalf("enter on the hidden hit went to row kind %d, %q", rw.Kind, cursorID(m))
	}
}

// TestNextHitGoesOnInThreadOrder: n visits the hits after the cursor in
// thread order, passing over those an operation hides since the search,
// and never sticks.
func TestNextHitGoesOnInThreadOrder(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 40)
	searchFor(t, m, "message 1")
	send(t, m, keyEsc)
	visit := func(n int) []model.ItemID {
		var out []model.ItemID
		for range n {
			press(t, m, "n")
			out = append(out, cursorID(m))
		}
		return out
	}
	// From m1, itself a hit: the next ones, then round to m1.
	want := []model.ItemID{"m10", "m11", "m12", "m13", "m14", "m15", "m16", "m17", "m18", "m19", "m21", "m31", "m1"}
	press(t, m, "g")
	if got := visit(len(want)); !slices.Equal(got, want) {
		t.Fatalf("n from the top visits %v, want %v", got, want)
	}
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.DigestMessages(ctx, ops.DigestArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{"m10", "m11", "m12", "m13", "m14"}}, Summary: "five"})
		return err
	})
	want = []model.ItemID{"m15", "m16", "m17", "m18", "m19", "m21", "m31", "m1"}
	if got := visit(len(want)); !slices.Equal(got, want) {
		t.Fatalf("after a digest of m10..m14, n from m1 visits %v, want %v", got, want)
	}
	press(t, m, "g", "N")
	if id := cursorID(m); id != "m31" {
		t.Fatalf("N from the top went to %q, want the last hit, m31", id)
	}
}

// A hit far along a long line is shown: the list shows the line from a
// little before the match, after "…", not its start cut before the
// match.
func TestSearchHitFarAlongItsLineIsShown(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	long := strings.Repeat("filler words ", 30) + "the needle here" + strings.Repeat(" tail", 10)
	sid := newSession(t, svc, "Long", []model.NewMessage{
		{Role: model.RoleUser, Content: "message 1"},
		{Role: model.RoleAssistant, Content: long},
	})
	m := openModel(t, svc, Options{Theme: "dark"}, sid, 100, 40)
	searchFor(t, m, "needle")
	for _, exact := range []bool{false, true} {
		if exact {
			send(t, m, keySave) // ctrl+s: the same query, exact
		}
		var hit string
		for _, l := range strings.Split(screen(m), "\n") {
			if strings.Contains(l, "filler") {
				hit = l
			}
		}
		if !strings.Contains(hit, "…") || !strings.Contains(hit, "the needle here") {
			t.Fatalf("exact %v: the hit's line does not show its match:\n%s", exact, hit)
		}
	}
}
