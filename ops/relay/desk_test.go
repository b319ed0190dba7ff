package relay

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"weft/formats"
	"weft/model"
	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/mcpserver"
	"weft/ops/reads"
	"weft/ops/search"
	"weft/ops/timeparse"
	"weft/ops/tools"
	"weft/store/boltstore"
)

// deskPair is the Desk of a seeded file here (tools.Local) and through
// its listener (Remote), and the session seeded.
func deskPair(t *testing.T) (*ops.Service, tools.Local, *Remote, string) {
	t.Helper()
	svc, sid := seeded(t)
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0", Token: "desk-token"})
	r, err := Dial(l.Addr(), Options{Token: "desk-token"})
	if err != nil {
		t.Fatal(err)
	}
	return svc, tools.Local{Service: svc}, r, sid
}

// same fails the test unless here and there gave equal values and equal
// errors.
func same[T any](t *testing.T, what string, here T, hereErr error, there T, thereErr error) {
	t.Helper()
	if (hereErr == nil) != (thereErr == nil) || hereErr != nil && hereErr.Error() != thereErr.Error() {
		t.Errorf("%s: here %v, through the holder %v", what, hereErr, thereErr)
		return
	}
	if !reflect.DeepEqual(here, there) {
		t.Errorf("%s differs through the holder:\n here  %+v\n there %+v", what, here, there)
	}
}

// Every read of the Desk gives through the holder what it gives here:
// the whole view (synthetic items, markers, tags), stored messages,
// operations, the timeline, times, searches and the filter.
func TestDeskReadsThroughTheHolderAreTheReadsHere(t *testing.T) {
	t.Parallel()
	_, here, there, sid := deskPair(t)
	ctx := context.Background()

	for _, ref := range []string{sid, ""} {
		hi, hv, herr := here.View(ref)
		ti, tv, terr := there.View(ref)
		same(t, "the session", hi, herr, ti, terr)
		same(t, "the view", hv, herr, tv, terr)
	}
	_, v, _ := here.View(sid)
	if len(v.Synth) == 0 || len(v.Markers) == 0 || len(v.TagSets) < 2 {
		t.Fatalf("the seeded view has %d synthetic items, %d markers, %d tag sets: the test needs some of each", len(v.Synth), len(v.Markers), len(v.TagSets))
	}
	seqs := []uint64{3, 1, 2, uint64(len(v.Where))}
	hm, herr := here.Messages(sid, seqs)
	tm, terr := there.Messages(sid, seqs)
	same(t, "stored messages", hm, herr, tm, terr)
	// Operations as stored keep empty lists that JSON leaves out: they
	// are the same operations when their JSON is.
	ho, herr := here.Operations(sid)
	to, terr := there.Operations(sid)
	same(t, "operations", formats.Marshal(ho), herr, formats.Marshal(to), terr)
	hl, herr := here.Timeline(sid, 40)
	tl, terr := there.Timeline(sid, 40)
	same(t, "the timeline", hl, herr, tl, terr)
	hf, hla, herr := here.SessionSpan(sid)
	tf, tla, terr := there.SessionSpan(sid)
	same(t, "the span", [2]time.Time{hf, hla}, herr, [2]time.Time{tf, tla}, terr)

	base := hm[1].CreatedAt
	for _, when := range []string{"-2h", "+30m", base.Add(time.Minute).Format(time.RFC3339), "00:00"} {
		hi, ht, herr := here.ItemAt(sid, when, base)
		ti, tt, terr := there.ItemAt(sid, when, base)
		same(t, "the item at "+when, hi, herr, ti, terr)
		if !ht.Equal(tt) {
			t.Errorf("%s read as %v here, %v through the holder", when, ht, tt)
		}
	}

	hs, herr := here.ListSessions(ctx, reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)})
	ts, terr := there.ListSessions(ctx, reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)})
	same(t, "the sessions", hs, herr, ts, terr)
	hops, herr := here.ListOperations(ctx, reads.ListOperationsArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
	tops, terr := there.ListOperations(ctx, reads.ListOperationsArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
	same(t, "list_operations", formats.Marshal(hops), herr, formats.Marshal(tops), terr)
	hd, herr := here.DiffSession(ctx, reads.DiffSessionArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
	td, terr := there.DiffSession(ctx, reads.DiffSessionArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
	same(t, "diff_session", formats.Marshal(hd), herr, formats.Marshal(td), terr)

	if err := there.PrepareSearch(sid); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"deploy", "the", "ünïcode"} {
		hh, hid, hn, herr := here.SubstringLines(sid, q, 20)
		th, tid, tn, terr := there.SubstringLines(sid, q, 20)
		same(t, "substring hits for "+q, hh, herr, th, terr)
		same(t, "their items", hid, herr, tid, terr)
		same(t, "their count", hn, herr, tn, terr)
		fh, fid, _, herr := here.FuzzyLines(sid, q, nil, 20)
		gh, gid, _, terr := there.FuzzyLines(sid, q, nil, 20)
		same(t, "fuzzy hits for "+q, fh, herr, gh, terr)
		same(t, "their items", fid, herr, gid, terr)
	}
	for _, f := range []search.ItemFilter{{Roles: []model.Role{model.RoleAssistant}}, {Tags: v.TagSets[1][:1]}, {Authors: []string{"claude"}}} {
		hi, herr := here.FilterItems(v, f)
		ti, terr := there.FilterItems(v, f)
		if len(hi) == 0 {
			t.Errorf("the filter %+v picks nothing: the test needs a filter that picks", f)
		}
		same(t, "the filter's picks", hi, herr, ti, terr)
	}
}

// A refusal through the holder is the refusal here, of the same kind: a
// session not there, a query that is empty, a time that cannot be read
// (a *timeparse.Error, as the time dialog reads it).
func TestDeskRefusalsThroughTheHolderAreTheRefusalsHere(t *testing.T) {
	t.Parallel()
	_, here, there, sid := deskPair(t)
	_, _, herr := here.View("no such session")
	_, _, terr := there.View("no such session")
	if !errors.Is(terr, ops.ErrNotFound) || terr.Error() != herr.Error() {
		t.Errorf("a session not there: here %v, through the holder %v", herr, terr)
	}
	_, _, _, herr = here.SubstringLines(sid, "  ", 10)
	_, _, _, terr = there.SubstringLines(sid, "  ", 10)
	if !errors.Is(terr, ops.ErrInvalid) || terr.Error() != herr.Error() {
		t.Errorf("an empty query: here %v, through the holder %v", herr, terr)
	}
	_, _, herr = here.ItemAt(sid, "half past never", time.Time{})
	_, _, terr = there.ItemAt(sid, "half past never", time.Time{})
	var perr *timeparse.Error
	if !errors.As(terr, &perr) || terr.Error() != herr.Error() {
		t.Errorf("a time that cannot be read: here %v, through the holder %v", herr, terr)
	}
}

// The operator's edits through the holder are the operator's there (u
// undoes them), a stale version is refused as here and changes nothing,
// and an operation reverted there is restored.
func TestDeskEditsThroughTheHolder(t *testing.T) {
	t.Parallel()
	svc, here, there, sid := deskPair(t)
	ctx := context.Background()
	info, v, _ := svc.View(sid)
	ver := info.Version
	sel := ops.Selection{SessionID: sid, IDs: []model.ItemID{v.ID(v.Items[0]), v.ID(v.Items[1])}}
	res, err := there.SnipMessages(ctx, ops.SnipArgs{Selection: sel, EditOptions: ops.EditOptions{ExpectedVersion: &ver}})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := svc.Operations(sid)
	last := list[len(list)-1]
	if last.ID != res.OperationID || last.Author != "operator" || last.Type != model.OpSnip {
		t.Fatalf("the snip through the holder is recorded as %+v", last)
	}

	// The same snip on the version before it: refused here and there,
	// in the same words, and the file is as it was.
	after, _, _ := svc.View(sid)
	stale := ops.SnipArgs{Selection: sel, EditOptions: ops.EditOptions{ExpectedVersion: &ver}}
	_, herr := here.SnipMessages(ctx, stale)
	_, terr := there.SnipMessages(ctx, stale)
	if !errors.Is(terr, ops.ErrConflict) || herr == nil || terr.Error() != herr.Error() {
		t.Errorf("a stale snip: here %v, through the holder %v", herr, terr)
	}
	if now, _, _ := svc.View(sid); now.Version != after.Version {
		t.Errorf("a refused snip moved the version from %d to %d", after.Version, now.Version)
	}

	// Reverted, then restored: no tool restores, the Desk does.
	if _, err := there.RevertOperation(ctx, ops.OperationArgs{SessionID: sid, OperationID: res.OperationID}); err != nil {
		t.Fatal(err)
	}
	if _, err := there.RestoreOperation(ctx, ops.OperationArgs{SessionID: sid, OperationID: res.OperationID}); err != nil {
		t.Fatal(err)
	}
	list, _ = svc.Operations(sid)
	if op := list[len(list)-1]; op.Reverted() || !op.Active {
		t.Errorf("the snip after its restore through the holder: %+v", op)
	}
	if _, err := there.RestoreOperation(ctx, ops.OperationArgs{SessionID: sid, OperationID: "no-such-op"}); !errors.Is(err, ops.ErrNotFound) {
		t.Errorf("restoring an operation not there: %v", err)
	}
}

// The session the operator opens through the holder is the holder's
// default: an agent's call that names none goes there.
func TestDeskNamesTheHoldersDefaultSession(t *testing.T) {
	t.Parallel()
	svc, _, there, sid := deskPair(t)
	other, err := svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "made later"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{sid, other.SessionID, sid} {
		there.SetDefaultSession(want)
	}
	there.Settle()
	if info, _, err := svc.View(""); err != nil || info.ID != sid {
		t.Errorf("the holder's default session is %q (%v), want the one named last, %q", info.ID, err, sid)
	}
}

// A watch through the holder says when the holder stops answering, and
// then, when a weft holds the file again, that writes were missed.
func TestDeskWatchSaysTheHolderWentAndCameBack(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "weft.db")
	st, err := boltstore.Open(path, boltstore.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc := ops.New(st)
	l1 := listening(t, svc, listen.Options{Addr: "127.0.0.1:0", AddrFile: listen.AddrFileOf(path)})
	r, err := Dial(l1.Addr(), Options{Rediscover: func() string { return listen.ReadAddrFile(path) }, EventsRetry: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	kinds := make(chan ops.EventKind, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Watch(ctx, func(ev ops.Event) { kinds <- ev.Kind })
	waitKind := func(want ops.EventKind, do func()) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			if do != nil {
				do()
			}
			select {
			case k := <-kinds:
				if k == want {
					return
				}
			case <-time.After(50 * time.Millisecond):
				continue
			case <-deadline:
				t.Fatalf("no %s event", want)
			}
		}
	}
	// The stream is open once a write is heard through it.
	waitKind(ops.EventSessionCreated, func() {
		_, _ = svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "heard"})
	})
	l1.Close()
	st.Close()
	waitKind(tools.EventLost, nil)

	st2, err := boltstore.Open(path, boltstore.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	listening(t, ops.New(st2), listen.Options{Addr: "127.0.0.1:0", AddrFile: listen.AddrFileOf(path)})
	waitKind(tools.EventGap, nil)
	if _, _, err := r.View(""); err != nil {
		t.Errorf("a read after the holder came back: %v", err)
	}
}

// A holder that has no Desk (a weft older than this one) is told apart
// from a session that is not there, and a wrong token is said as such.
func TestDeskOfAnOlderHolderOrAWrongToken(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	older := httptest.NewServer(listen.Handler(listen.Options{Faces: []httpx.Face{mcpserver.New(tools.Local{Service: svc}, mcpserver.Options{}).Face()}}))
	t.Cleanup(older.Close)
	r, err := Dial(older.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.View(""); err == nil || errors.Is(err, ops.ErrNotFound) || !strings.Contains(err.Error(), "older than this weft") {
		t.Errorf("a view from a holder without the Desk: %v", err)
	}
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0", Token: "right"})
	wrong, err := Dial(l.Addr(), Options{Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := wrong.View(""); err == nil || !strings.Contains(err.Error(), "refused the token") {
		t.Errorf("a view with a wrong token: %v", err)
	}
}
