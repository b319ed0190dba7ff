package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"weft/model"
	"weft/ops"
	"weft/store/pgstore"
	"weft/store/pgstore/pgtest"
)

// twoWefts opens two services over one fresh database, as two weft
// processes on one PostgreSQL share it.
func twoWefts(t *testing.T) (*ops.Service, *ops.Service) {
	t.Helper()
	url := pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv))
	var svcs [2]*ops.Service
	for i := range svcs {
		st, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		svcs[i] = ops.New(st)
	}
	return svcs[0], svcs[1]
}

// TestPostgresTwoWeftsOneSession: what one weft wrote, the other's next
// write builds on, though it had the session cached before; and writes
// from both at once all land, in order, none lost, none twice.
func TestPostgresTwoWeftsOneSession(t *testing.T) {
	a, b := twoWefts(t)
	ctx := ops.WithAuthor(context.Background(), "test")
	created, err := a.CreateSession(ctx, ops.CreateSessionArgs{Title: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.SessionID
	add := func(svc *ops.Service, text string) error {
		_, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: text}}})
		return err
	}
	// a caches the session, b writes, a writes on top.
	if _, _, err := a.View(sid); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		svc  *ops.Service
		text string
	}{{b, "from b"}, {a, "from a"}, {b, "from b again"}} {
		if err := add(w.svc, w.text); err != nil {
			t.Fatalf("%s: %v", w.text, err)
		}
	}
	for _, svc := range []*ops.Service{a, b} {
		info, v, err := svc.View(sid)
		if err != nil || info.MessageCount != 3 || len(v.Items) != 3 {
			t.Fatalf("after three writes from two wefts: %+v, %v", info, err)
		}
	}

	// 8 clients, half through each weft, n appends each.
	n := 60
	if testing.Short() {
		n = 15
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*n)
	for c := range 8 {
		svc := []*ops.Service{a, b}[c%2]
		wg.Go(func() {
			for k := range n {
				if err := add(svc, fmt.Sprintf("client %d edit %d", c, k)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a concurrent append: %v", err)
	}
	want := 3 + 8*n
	_, _, _ = a.View(sid)
	msgs, err := a.Messages(sid, seqs(want))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	next := map[int]int{}
	for _, m := range msgs {
		if seen[m.Content] {
			t.Errorf("%q stored twice", m.Content)
		}
		seen[m.Content] = true
		var c, k int
		if _, err := fmt.Sscanf(m.Content, "client %d edit %d", &c, &k); err == nil {
			if k != next[c] {
				t.Errorf("client %d's edit %d came where its edit %d belongs", c, k, next[c])
			}
			next[c] = k + 1
		}
	}
	if len(msgs) != want || len(seen) != want {
		t.Fatalf("%d messages stored (%d distinct), want %d: writes were lost", len(msgs), len(seen), want)
	}
	infoA, _, _ := a.View(sid)
	infoB, _, _ := b.View(sid)
	if infoA.Version != infoB.Version || infoA.MessageCount != want {
		t.Errorf("the two wefts see versions %d and %d, %d messages", infoA.Version, infoB.Version, infoA.MessageCount)
	}
}

// TestPostgresExpectedVersionHoldsAcrossWefts: an edit made against the
// version one weft read is refused when the other wrote since.
func TestPostgresExpectedVersionHoldsAcrossWefts(t *testing.T) {
	a, b := twoWefts(t)
	ctx := context.Background()
	created, err := a.CreateSession(ctx, ops.CreateSessionArgs{Title: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.SessionID
	res, err := a.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "one"}, {Role: model.RoleAssistant, Content: "two"}}})
	if err != nil {
		t.Fatal(err)
	}
	seen := res.Version
	if _, err := b.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "three"}}}); err != nil {
		t.Fatal(err)
	}
	zero, one := 0, 1
	_, err = a.SnipMessages(ctx, ops.SnipArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &zero, EndIdx: &one}, EditOptions: ops.EditOptions{ExpectedVersion: &seen}})
	if err == nil {
		t.Fatal("a snip against a version the other weft moved past was taken")
	}
	list, _ := b.Operations(sid)
	if len(list) != 0 {
		t.Errorf("the refused snip left %d operations", len(list))
	}
}

func seqs(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return slices.Clip(out)
}

// TestPostgresEveryWeftHearsEveryWrite: a subscriber of either weft (a
// TUI, an MCP client, a relay) hears every write of both, once, while
// both write at once.
func TestPostgresEveryWeftHearsEveryWrite(t *testing.T) {
	a, b := twoWefts(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, svc := range []*ops.Service{a, b} {
		go svc.FollowStore(ctx)
	}
	created, err := a.CreateSession(ctx, ops.CreateSessionArgs{Title: "heard"})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.SessionID
	type hearing struct {
		mu       sync.Mutex
		versions map[uint64]int
	}
	var heard [2]*hearing
	for i, svc := range []*ops.Service{a, b} {
		ch, stop := svc.Subscribe()
		t.Cleanup(stop)
		h := &hearing{versions: map[uint64]int{}}
		heard[i] = h
		go func() {
			for e := range ch {
				if e.SessionID == sid && e.Kind == ops.EventAppended {
					h.mu.Lock()
					h.versions[e.Version]++
					h.mu.Unlock()
				}
			}
		}()
	}
	// Let both listeners start: a write before LISTEN is not heard
	// (reads still see it, by version).
	time.Sleep(300 * time.Millisecond)
	n := 200
	if testing.Short() {
		n = 40
	}
	var wg sync.WaitGroup
	for i, svc := range []*ops.Service{a, b} {
		wg.Go(func() {
			for k := range n {
				if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: fmt.Sprintf("weft %d, write %d", i, k)}}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for i, h := range heard {
		for {
			h.mu.Lock()
			got, twice := len(h.versions), 0
			for _, c := range h.versions {
				if c > 1 {
					twice++
				}
			}
			h.mu.Unlock()
			if got >= 2*n || time.Now().After(deadline) {
				if got != 2*n || twice > 0 {
					t.Errorf("weft %d heard %d of the %d writes (%d twice)", i, got, 2*n, twice)
				}
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
