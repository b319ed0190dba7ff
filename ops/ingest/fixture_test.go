package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"weft/internal/viewtest"
	"weft/model"
	"weft/ops"
	"weft/store"
)

// fixture is a service over a real bbolt file in a temp dir, with a
// pinned clock.
type fixture struct {
	t    *testing.T
	path string
	st   *store.Store
	svc  *ops.Service
	now  time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, path: filepath.Join(t.TempDir(), "weft.db"), now: t0.Add(48 * time.Hour)}
	f.open()
	return f
}

func (f *fixture) open() {
	f.t.Helper()
	st, err := store.Open(f.path, store.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.st = st
	f.svc = ops.New(st, ops.WithClock(func() time.Time { return f.now }))
	f.t.Cleanup(func() { st.Close() })
}

// session makes a session of n messages (one append's worth at most),
// one minute apart from t0, alternating user and assistant, with
// content "message <seq>".
func (f *fixture) session(title string, n int) string {
	f.t.Helper()
	ctx := context.Background()
	res, err := f.svc.CreateSession(ctx, ops.CreateSessionArgs{Title: title})
	if err != nil {
		f.t.Fatal(err)
	}
	var msgs []model.NewMessage
	for i := range n {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		msgs = append(msgs, model.NewMessage{Role: role, Content: fmt.Sprintf("message %d", i+1), CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	if _, err := f.svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: res.SessionID, Messages: msgs}); err != nil {
		f.t.Fatal(err)
	}
	return res.SessionID
}

// call runs a request of the service with JSON arguments, read as every
// face reads them (an unknown argument is an error).
func call[A, R any](f *fixture, method func(*ops.Service, context.Context, A) (R, error), args string) R {
	f.t.Helper()
	var a A
	dec := json.NewDecoder(bytes.NewReader([]byte(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		f.t.Fatalf("arguments %s: %v", args, err)
	}
	res, err := method(f.svc, context.Background(), a)
	if err != nil {
		f.t.Fatalf("%s: %v", args, err)
	}
	return res
}

func (f *fixture) view(sid string) *model.View {
	f.t.Helper()
	_, v, err := f.svc.View(sid)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

// t0 is the start of the test threads' time.
var t0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

// render writes a view compactly (viewtest.Render).
var render = viewtest.Render

// mustClose finishes an import: what it still holds is written.
func mustClose(tb testing.TB, im *Import) {
	tb.Helper()
	if err := im.Close(); err != nil {
		tb.Fatal(err)
	}
}
