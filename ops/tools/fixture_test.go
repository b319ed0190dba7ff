package tools

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"weft/model"
	"weft/ops"
	"weft/store"
)

var t0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

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
	st, err := store.Open(f.path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	f.svc = ops.New(st, ops.WithClock(func() time.Time { return f.now }))
	return f
}

// session makes a session of n messages, one minute apart from t0,
// alternating user and assistant, with content "message <seq>".
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

// mustCall runs a tool by name with JSON arguments, as every face does;
// it must succeed.
func (f *fixture) mustCall(name string, args string) any {
	f.t.Helper()
	tool, ok := Lookup(name)
	if !ok {
		f.t.Fatalf("no tool %s", name)
	}
	res, err := tool.Call(context.Background(), f.svc, json.RawMessage(args))
	if err != nil {
		f.t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

func (f *fixture) fileHash() [32]byte {
	f.t.Helper()
	b, err := os.ReadFile(f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	return sha256.Sum256(b)
}
