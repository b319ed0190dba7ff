package ops

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"weft/internal/benchdata"
	"weft/model"
	"weft/ops/assemble/assembletest"
	"weft/store"
)

// The tests that stay inside this package, the proxy's and the
// pre-request hook's (they reach its insides), cannot import opstest or
// toolstest: those import ops, and the import would be a cycle. This is
// their fixture, opstest's and toolstest's by the names those tests use,
// with the tools called through the Service's methods
// (toolcall_test.go). ops's other tests, in package ops_test, use
// opstest and toolstest. It goes when the proxy's engine leaves ops, its
// tests with it.

// fixture is a service over a real bbolt file in a temp dir, with a
// pinned clock.
type fixture struct {
	t    *testing.T
	path string
	st   *store.Store
	svc  *Service
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
	f.svc = New(st, WithClock(func() time.Time { return f.now }))
	f.t.Cleanup(func() { st.Close() })
}

func (f *fixture) reopen() {
	f.t.Helper()
	if err := f.st.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open()
}

// session makes a session of n messages, one minute apart from t0,
// alternating user and assistant, with content "message <seq>".
func (f *fixture) session(title string, n int) string {
	f.t.Helper()
	ctx := context.Background()
	res, err := f.svc.CreateSession(ctx, CreateSessionArgs{Title: title})
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
	for len(msgs) > 0 {
		k := min(len(msgs), maxAppend)
		if _, err := f.svc.AppendMessages(ctx, AppendMessagesArgs{SessionID: res.SessionID, Messages: msgs[:k]}); err != nil {
			f.t.Fatal(err)
		}
		msgs = msgs[k:]
	}
	return res.SessionID
}

// call runs a tool by name with JSON arguments, as every face does.
func (f *fixture) call(name string, args string) (any, error) {
	f.t.Helper()
	if _, ok := toolMethod(f.svc, name); !ok {
		f.t.Fatalf("no tool %s", name)
	}
	return callTool(context.Background(), f.svc, name, json.RawMessage(args))
}

func (f *fixture) mustCall(name string, args string) any {
	f.t.Helper()
	res, err := f.call(name, args)
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

// asmSession makes a session of the given messages, one minute apart
// from t0, and returns its ID.
func (f *fixture) asmSession(title string, msgs []model.NewMessage) string {
	f.t.Helper()
	ctx := context.Background()
	res, err := f.svc.CreateSession(ctx, CreateSessionArgs{Title: title})
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range msgs {
		if msgs[i].CreatedAt.IsZero() {
			msgs[i].CreatedAt = t0.Add(time.Duration(i) * time.Minute)
		}
	}
	if _, err := f.svc.AppendMessages(ctx, AppendMessagesArgs{SessionID: res.SessionID, Messages: msgs}); err != nil {
		f.t.Fatal(err)
	}
	return res.SessionID
}

// sessions are the sessions' records, newest created first, as the
// faces list them.
func (f *fixture) sessions() []SessionOut {
	f.t.Helper()
	page, err := f.svc.SessionPage(context.Background(), SessionPageArgs{Limit: MaxSessionPage})
	if err != nil {
		f.t.Fatal(err)
	}
	return page.Sessions
}

// stored are session ref's stored messages from seq from to seq to.
func (f *fixture) stored(ref string, from, to uint64) []model.Message {
	f.t.Helper()
	info, _, err := f.svc.View(ref)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []model.Message
	err = f.st.View(func(tx *store.Tx) error {
		return tx.Messages(info.ID, from, to, func(m model.Message) error {
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// t0 is the start of the test threads' time.
var t0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

// asmCheckOpenAI is assembletest.CheckOpenAI, by the name the hook's
// tests use.
var asmCheckOpenAI = assembletest.CheckOpenAI

// benchFile builds (once per run) a file with one session of n messages of
// about size bytes, one a second, and nops operations made as an operator
// would, and returns its path and the session ID.
func benchFile(b *testing.B, n, size, nops int) (string, string) {
	return benchdata.File(b, t0, n, size, nops)
}

func benchService(b *testing.B, path string) *Service {
	st, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return New(st)
}
