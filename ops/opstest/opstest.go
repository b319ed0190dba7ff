// Package opstest is what the engine's tests share: a service over a real
// bbolt file in a temp dir, with a pinned clock, and the threads they
// make in it. It imports the engine's core (ops) and store, nothing of
// the rooms above them, so that every room's own tests may use it
// (ops/ingest's and ops/tools' inside their packages); calling the tools
// by name, through the registry, is ops/tools/toolstest's.
package opstest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"weft/internal/benchdata"
	"weft/internal/viewtest"
	"weft/model"
	"weft/ops"
	"weft/ops/sessionmatch"
	"weft/store"
	"weft/store/boltstore"
)

// T0 is the start of the test threads' time.
var T0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

// Render writes a view compactly (viewtest.Render).
var Render = viewtest.Render

// Fixture is a service over a real bbolt file in a temp dir, with a
// pinned clock (Now).
type Fixture struct {
	T    *testing.T
	Path string
	St   store.Store
	Svc  *ops.Service
	Now  time.Time
}

// New opens a fixture whose clock reads two days after T0.
func New(t *testing.T) *Fixture {
	t.Helper()
	f := &Fixture{T: t, Path: filepath.Join(t.TempDir(), "weft.db"), Now: T0.Add(48 * time.Hour)}
	f.Open()
	return f
}

// Open opens the store at Path with a new service (after St was closed).
func (f *Fixture) Open() {
	f.T.Helper()
	st, err := boltstore.Open(f.Path, boltstore.Options{})
	if err != nil {
		f.T.Fatal(err)
	}
	f.St = st
	f.Svc = ops.New(st, ops.WithClock(func() time.Time { return f.Now }))
	f.T.Cleanup(func() { _ = st.Close() })
}

// Reopen closes the store and opens it again with a new service.
func (f *Fixture) Reopen() {
	f.T.Helper()
	if err := f.St.Close(); err != nil {
		f.T.Fatal(err)
	}
	f.Open()
}

// maxAppend is what one append_messages call takes.
const maxAppend = 10000

// Session makes a session of n messages, one minute apart from T0,
// alternating user and assistant, with content "message <seq>".
func (f *Fixture) Session(title string, n int) string {
	f.T.Helper()
	return f.Messages(title, Even(n, 0))
}

// Messages makes a session of the given messages, one minute apart
// from T0 where they carry no time, appended maxAppend at a time.
func (f *Fixture) Messages(title string, msgs []model.NewMessage) string {
	f.T.Helper()
	ctx := context.Background()
	res, err := f.Svc.CreateSession(ctx, ops.CreateSessionArgs{Title: title})
	if err != nil {
		f.T.Fatal(err)
	}
	for i := range msgs {
		if msgs[i].CreatedAt.IsZero() {
			msgs[i].CreatedAt = T0.Add(time.Duration(i) * time.Minute)
		}
	}
	for len(msgs) > 0 {
		k := min(len(msgs), maxAppend)
		if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: res.SessionID, Messages: msgs[:k]}); err != nil {
			f.T.Fatal(err)
		}
		msgs = msgs[k:]
	}
	return res.SessionID
}

// View is session ref's effective thread.
func (f *Fixture) View(ref string) *model.View {
	f.T.Helper()
	_, v, err := f.Svc.View(ref)
	if err != nil {
		f.T.Fatal(err)
	}
	return v
}

// Version is session ref's version, as a read gives it.
func (f *Fixture) Version(ref string) uint64 {
	f.T.Helper()
	info, _, err := f.Svc.View(ref)
	if err != nil {
		f.T.Fatal(err)
	}
	return info.Version
}

// Sessions are the sessions' records, newest created first, as the
// faces list them.
func (f *Fixture) Sessions() []ops.SessionOut {
	f.T.Helper()
	page, err := sessionmatch.PageOf(f.Svc, context.Background(), sessionmatch.PageArgs{Limit: sessionmatch.MaxPage})
	if err != nil {
		f.T.Fatal(err)
	}
	return page.Sessions
}

// FileHash is the store file's hash: a read leaves it as it was.
func (f *Fixture) FileHash() [32]byte {
	f.T.Helper()
	b, err := os.ReadFile(f.Path)
	if err != nil {
		f.T.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Even is n messages of the given tokens each, alternating user and
// assistant, with content "message <k>" (k from 1).
func Even(n, tokens int) []model.NewMessage {
	out := make([]model.NewMessage, n)
	for i := range out {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		out[i] = model.NewMessage{Role: role, Content: fmt.Sprintf("message %d", i+1), Tokens: tokens}
	}
	return out
}

// ToolTurn is an assistant's tool call and the tool's result, of the
// given tokens each.
func ToolTurn(id, name, input, output string, tokens int) []model.NewMessage {
	call := []model.Part{{Type: model.PartToolCall, ToolCallID: id, ToolName: name, Input: []byte(input)}}
	res := []model.Part{{Type: model.PartToolResult, ToolCallID: id, Text: output}}
	return []model.NewMessage{
		{Role: model.RoleAssistant, Content: "[tool call " + name + "] " + input, Parts: model.EncodeParts(call), Tokens: tokens},
		{Role: model.RoleTool, Name: name, Content: "[tool result] " + output, Parts: model.EncodeParts(res), Tokens: tokens},
	}
}

// BenchFile is benchdata.File with the tests' time: a file of one
// session of n messages of about size bytes and nops operations.
func BenchFile(b *testing.B, n, size, nops int) (string, string) {
	return benchdata.File(b, T0, n, size, nops)
}

// BenchService opens a service over the file at path.
func BenchService(b *testing.B, path string) *ops.Service {
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return ops.New(st)
}

// Events are the events ch gives until it is quiet for 50ms.
func Events(ch <-chan ops.Event) []ops.Event {
	var out []ops.Event
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		case <-time.After(50 * time.Millisecond):
			return out
		}
	}
}
