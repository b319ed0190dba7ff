package ops

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weft/internal/viewtest"
	"weft/model"
	"weft/ops/assemble/assembletest"
	"weft/store"
)

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

func (f *fixture) view(sid string) *model.View {
	f.t.Helper()
	_, v, err := f.svc.View(sid)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) fileHash() [32]byte {
	f.t.Helper()
	b, err := os.ReadFile(f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestSeedEditsThroughTheService(t *testing.T) {
	tests := []struct {
		tool, args, want string
	}{
		{"digest_messages", `{"start_idx":3,"end_idx":8,"summary":"Discussed auth options; chose JWT"}`, "m1 m2 m3 [digest:$] $/0 m10 m11 m12"},
		{"snip_messages", `{"start_idx":5,"end_idx":8}`, "m1 m2 m3 m4 m5 [snip:$] m10 m11 m12"},
		{"resequence_messages", `{"new_order":[8,9,5,6,7,10,11]}`, "m1 m2 m3 m4 m5 [resequence:$] m9 m10 m6 m7 m8 m11 m12"},
		{"insert_messages", `{"after_idx":5,"messages":[{"role":"assistant","content":"(Context: user later clarified they meant PostgreSQL)"}]}`, "m1 m2 m3 m4 m5 m6 [insert:$] $/0 m7 m8 m9 m10 m11 m12"},
		{"insert_messages", `{"after_idx":-1,"messages":[{"role":"system","content":"Be brief."}]}`, "[insert:$] $/0 m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12"},
		{"revise_messages", `{"start_idx":5,"end_idx":10,"replacements":[{"role":"user","content":"Refined question about auth"},{"role":"assistant","content":"Here's the JWT implementation..."}]}`, "m1 m2 m3 m4 m5 [revise:$] $/0 $/1 m12"},
		{"tag_messages", `{"start_idx":5,"end_idx":6,"tags":["database-design"]}`, "m1 m2 m3 m4 m5 m6{database-design} m7{database-design} m8 m9 m10 m11 m12"},
		{"snip_messages", `{"ids":["m2","m4"]}`, "m1 [snip:$] m3 m5 m6 m7 m8 m9 m10 m11 m12"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			f := newFixture(t)
			sid := f.session("seed", 12)
			res := f.mustCall(tt.tool, tt.args)
			opID := ""
			switch r := res.(type) {
			case OpResult:
				opID = r.OperationID
			case TagResult:
				opID = r.OperationID
				if !r.Success || r.TagCount != 1 || r.MessageCount != 2 {
					t.Errorf("tag result %+v", r)
				}
			}
			if got, want := render(f.view(sid)), strings.ReplaceAll(tt.want, "$", opID); got != want {
				t.Errorf("view\n got: %s\nwant: %s", got, want)
			}
			// Revert restores the thread exactly, and survives a reopen.
			f.mustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, opID))
			f.reopen()
			if got := render(f.view(sid)); got != "m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12" {
				t.Errorf("after revert: %s", got)
			}
		})
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	f := newFixture(t)
	sid := f.session("bad input", 12)
	first := f.mustCall("snip_messages", `{"start_idx":0,"end_idx":0}`).(OpResult)
	f.mustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, first.OperationID))

	tests := []struct {
		tool, args string
		kind       error
		says       string
	}{
		{"digest_messages", `{"start_idx":3,"end_idx":40,"summary":"s"}`, ErrInvalid, "end_idx 40 is past the end of the thread (12 items: 0..11)"},
		{"digest_messages", `{"start_idx":8,"end_idx":3,"summary":"s"}`, ErrInvalid, "start_idx 8 is after end_idx 3"},
		{"digest_messages", `{"start_idx":-1,"end_idx":3,"summary":"s"}`, ErrInvalid, "start_idx -1 is negative"},
		{"digest_messages", `{"start_idx":3,"summary":"s"}`, ErrInvalid, "end_idx is missing"},
		{"digest_messages", `{"summary":"s"}`, ErrInvalid, "nothing selected"},
		{"digest_messages", `{"start_idx":3,"end_idx":4,"summary":"   "}`, ErrInvalid, "summary is empty"},
		{"digest_messages", `{"start_idx":3,"end_idx":4,"ids":["m1"],"summary":"s"}`, ErrInvalid, "not both"},
		{"snip_messages", `{"ids":["m99"]}`, ErrNotFound, `id "m99" is not in the effective thread`},
		{"snip_messages", `{"ids":["m3","m3"]}`, ErrInvalid, `id "m3" is given twice`},
		{"snip_messages", `{"ids":["nope/0"]}`, ErrNotFound, `id "nope/0"`},
		{"resequence_messages", `{"new_order":[5,5,6]}`, ErrInvalid, "repeats index 5"},
		{"resequence_messages", `{"new_order":[5,6,7]}`, ErrInvalid, "leaves every item where it is"},
		{"resequence_messages", `{"new_order":[5]}`, ErrInvalid, "at least two"},
		{"resequence_messages", `{"new_order":[3,40]}`, ErrInvalid, "index 40, outside the thread"},
		{"resequence_messages", `{"new_order":[3,-1]}`, ErrInvalid, "index -1"},
		{"resequence_messages", `{"ids":["m4","m77"]}`, ErrNotFound, `id "m77"`},
		{"insert_messages", `{"after_idx":5,"messages":[]}`, ErrInvalid, "messages is empty"},
		{"insert_messages", `{"after_idx":5,"messages":[{"role":"robot","content":"x"}]}`, ErrInvalid, `role "robot" is not one of`},
		{"insert_messages", `{"after_idx":12,"messages":[{"role":"user","content":"x"}]}`, ErrInvalid, "after_idx 12 is outside the thread"},
		{"insert_messages", `{"after_id":"m40","messages":[{"role":"user","content":"x"}]}`, ErrNotFound, `after_id "m40"`},
		{"insert_messages", `{"messages":[{"role":"user","content":"x"}]}`, ErrInvalid, "give after_idx"},
		{"insert_messages", `{"after_idx":1,"messages":[{"role":"user","content":""}]}`, ErrInvalid, "needs content"},
		{"tag_messages", `{"start_idx":1,"end_idx":2,"tags":[]}`, ErrInvalid, "tags is empty"},
		{"tag_messages", `{"start_idx":1,"end_idx":2,"tags":["two words"]}`, ErrInvalid, "has a space"},
		{"tag_messages", `{"start_idx":1,"end_idx":2,"tags":["ok"],"when_tags":[""]}`, ErrInvalid, "when_tags: a tag is empty"},
		{"revise_messages", `{"start_idx":1,"end_idx":2,"replacements":[{"role":"","content":"x"}]}`, ErrInvalid, "replacements[0]"},
		{"snip_messages", `{"start_idx":1,"end_idx":2,"expected_version":1}`, ErrConflict, "since then"},
		{"snip_messages", `{"start_idx":1,"end_idx":2,"expected_version":999}`, ErrConflict, "ahead of session"},
		{"snip_messages", `{"session_id":"nosuchsession","start_idx":1,"end_idx":2}`, ErrNotFound, `session "nosuchsession" not found`},
		{"snip_messages", `{"start_idx":"1","end_idx":2}`, ErrInvalid, "argument start_idx must be an integer, not a JSON string"},
		{"snip_messages", `{"start":1,"end_idx":2}`, ErrInvalid, `has no argument "start"`},
		{"snip_messages", `[1,2]`, ErrInvalid, "takes a JSON object"},
		{"snip_messages", `{"start_idx":1,`, ErrInvalid, "arguments"},
		{"snip_messages", `{"start_idx":1,"end_idx":2} {}`, ErrInvalid, "unexpected data"},
		{"revert_operation", `{"operation_id":"nope"}`, ErrNotFound, `operation "nope" not found`},
		{"revert_operation", fmt.Sprintf(`{"operation_id":%q}`, first.OperationID), ErrInvalid, "already reverted"},
		{"toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":true}`, first.OperationID), ErrInvalid, "cannot be switched"},
		{"toggle_operation", fmt.Sprintf(`{"operation_id":%q}`, first.OperationID), ErrInvalid, "active is missing"},
		{"set_active_tags", `{"tags":["a b"]}`, ErrInvalid, "has a space"},
		{"append_messages", `{"messages":[]}`, ErrInvalid, "messages is empty"},
		{"append_messages", `{"messages":[{"role":"user","content":"ok"},{"role":"user"}]}`, ErrInvalid, "messages[1]"},
		{"add_turn", `{"query":" "}`, ErrInvalid, "query is empty"},
		{"create_session", `{"title":""}`, ErrInvalid, "title is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			before := f.fileHash()
			info, _, _ := f.svc.View(sid)
			ops, _ := f.svc.Operations(sid)
			_, err := f.call(tt.tool, tt.args)
			if err == nil {
				t.Fatalf("accepted; want an error saying %q", tt.says)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error kind: %v, want %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			if f.fileHash() != before {
				t.Errorf("the database file changed")
			}
			after, _, _ := f.svc.View(sid)
			opsAfter, _ := f.svc.Operations(sid)
			if after.Version != info.Version || len(opsAfter) != len(ops) {
				t.Errorf("version %d -> %d, ops %d -> %d", info.Version, after.Version, len(ops), len(opsAfter))
			}
		})
	}
}

func TestConflictSaysWhatChanged(t *testing.T) {
	f := newFixture(t)
	f.session("conflict", 12)
	v0 := f.version("")
	ctx := WithAuthor(context.Background(), "claude-code")
	start, end := 3, 5
	if _, err := f.svc.DigestMessages(ctx, DigestArgs{Selection: Selection{StartIdx: &start, EndIdx: &end}, Summary: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.call("snip_messages", fmt.Sprintf(`{"start_idx":3,"end_idx":4,"expected_version":%d}`, v0))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want a conflict, got %v", err)
	}
	for _, want := range []string{fmt.Sprintf("not %d", v0), "digest of 3–5 by claude-code"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("conflict %q does not say %q", err, want)
		}
	}
	// With the current version the same edit goes through.
	v1 := v0 + 1
	if _, err := f.call("snip_messages", fmt.Sprintf(`{"start_idx":3,"end_idx":4,"expected_version":%d}`, v1)); err != nil {
		t.Fatal(err)
	}
}

func TestEventsAfterEveryWrite(t *testing.T) {
	f := newFixture(t)
	events, stop := f.svc.Subscribe()
	defer stop()
	sid := f.session("events", 4)
	ctx := WithAuthor(context.Background(), "agent")
	start, end := 0, 1
	res, err := f.svc.DigestMessages(ctx, DigestArgs{Selection: Selection{StartIdx: &start, EndIdx: &end}, Summary: "s"})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind   EventKind
		author string
		what   string
	}{
		{EventSessionCreated, "operator", "created events"},
		{EventAppended, "operator", "4 messages appended"},
		{EventOpCreated, "agent", "digest of 0–1"},
	}
	for _, w := range want {
		select {
		case e := <-events:
			if e.Kind != w.kind || e.Author != w.author || e.What != w.what || e.SessionID != sid {
				t.Errorf("event %+v, want %v by %s: %q", e, w.kind, w.author, w.what)
			}
			if e.Kind == EventOpCreated && (e.OpID != res.OperationID || e.Version != res.Version) {
				t.Errorf("op event %+v does not match %+v", e, res)
			}
		case <-time.After(time.Second):
			t.Fatalf("no %s event", w.kind)
		}
	}
}

func TestToggleRevertRestore(t *testing.T) {
	f := newFixture(t)
	sid := f.session("toggle", 6)
	raw := render(f.view(sid))
	d := f.mustCall("digest_messages", `{"start_idx":1,"end_idx":3,"summary":"s"}`).(OpResult)
	digested := render(f.view(sid))

	off := f.mustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":false}`, d.OperationID)).(SuccessResult)
	if off.Status != model.StatusInactive || render(f.view(sid)) != raw {
		t.Fatalf("toggled off: %+v, view %s", off, render(f.view(sid)))
	}
	again := f.mustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":false}`, d.OperationID)).(SuccessResult)
	if again.Version != off.Version {
		t.Errorf("switching off an operation that is off wrote a new version")
	}
	f.mustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":true}`, d.OperationID))
	if render(f.view(sid)) != digested {
		t.Fatalf("toggled on: %s, want %s", render(f.view(sid)), digested)
	}
	f.mustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, d.OperationID))
	if render(f.view(sid)) != raw {
		t.Fatalf("reverted: %s", render(f.view(sid)))
	}
	if _, err := f.svc.RestoreOperation(context.Background(), OperationArgs{OperationID: d.OperationID}); err != nil {
		t.Fatal(err)
	}
	if render(f.view(sid)) != digested {
		t.Fatalf("restored: %s", render(f.view(sid)))
	}
	snap, err := f.svc.Snapshot(sid)
	if err != nil {
		t.Fatal(err)
	}
	if v := snap.View; len(snap.Ops) != 1 || v.Status[snap.Ops[0].ID] != model.StatusActive || len(v.Markers) != 1 || v.Markers[0].OpID != snap.Ops[0].ID || v.Markers[0].At != 1 {
		t.Fatalf("operations %+v, markers %+v", snap.Ops, v.Markers)
	}
}

func TestConditionalOperations(t *testing.T) {
	f := newFixture(t)
	sid := f.session("conditional", 6)
	f.mustCall("snip_messages", `{"start_idx":0,"end_idx":2,"when_tags":["brief"]}`)
	if got := render(f.view(sid)); got != "m1 m2 m3 m4 m5 m6" {
		t.Fatalf("without the tag: %s", got)
	}
	f.mustCall("set_active_tags", `{"tags":["brief"]}`)
	// (The marker's operation ID may hold "m1": look for the item.)
	if got := render(f.view(sid)); !strings.HasSuffix(got, "m4 m5 m6") || strings.Contains(got+" ", " m1 ") || strings.HasPrefix(got, "m1 ") {
		t.Fatalf("with the tag: %s", got)
	}
	snap, err := f.svc.Snapshot(sid)
	if err != nil {
		t.Fatal(err)
	}
	active := 0
	for _, op := range snap.Ops {
		if st := snap.View.Status[op.ID]; st == model.StatusActive || st == model.StatusPartial {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("in effect: %d operations", active)
	}
	f.mustCall("set_active_tags", `{"tags":[]}`)
	if got := render(f.view(sid)); got != "m1 m2 m3 m4 m5 m6" {
		t.Fatalf("tags cleared: %s", got)
	}
}

func TestAppendExtendsTheView(t *testing.T) {
	f := newFixture(t)
	sid := f.session("append", 4)
	f.mustCall("insert_messages", `{"after_idx":3,"messages":[{"role":"user","content":"inserted at the end"}]}`)
	before := f.view(sid)
	res := f.mustCall("add_turn", `{"query":"and now?","response":"now this"}`).(AppendResult)
	if res.Appended != 2 || res.IDs[0] != "m5" || res.IDs[1] != "m6" {
		t.Fatalf("add_turn: %+v", res)
	}
	got := f.view(sid)
	if got.Version != res.Version {
		t.Errorf("view version %d, result version %d", got.Version, res.Version)
	}
	if render(before) == render(got) {
		t.Errorf("the view handed out earlier changed")
	}
	f.reopen() // applying from scratch must agree with the extended view
	if fresh := f.view(sid); render(fresh) != render(got) || fresh.Tokens != got.Tokens {
		t.Fatalf("extended view %s (%d tokens), applied again %s (%d)", render(got), got.Tokens, render(fresh), fresh.Tokens)
	}
}

func TestSessionResolution(t *testing.T) {
	f := newFixture(t)
	a := f.session("alpha", 1)
	f.now = f.now.Add(time.Minute)
	b := f.session("beta", 2)
	for _, tt := range []struct{ ref, want string }{{"", b}, {a, a}, {a[:8], a}, {"alpha", a}} {
		info, _, err := f.svc.View(tt.ref)
		if err != nil || info.ID != tt.want {
			t.Errorf("session %q resolved to %s (%v), want %s", tt.ref, info.ID, err, tt.want)
		}
	}
	f.svc.SetDefaultSession(a)
	if info, _, _ := f.svc.View(""); info.ID != a {
		t.Errorf("default with focus: %s, want %s", info.ID, a)
	}
}

// t0 is the start of the test threads' time.
var t0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

// render writes a view compactly (viewtest.Render).
var render = viewtest.Render

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

// asmToolTurn is an assistant's tool call and the tool's result.
func asmToolTurn(id, name, input, output string, tokens int) []model.NewMessage {
	call := []model.Part{{Type: model.PartToolCall, ToolCallID: id, ToolName: name, Input: []byte(input)}}
	res := []model.Part{{Type: model.PartToolResult, ToolCallID: id, Text: output}}
	return []model.NewMessage{
		{Role: model.RoleAssistant, Content: "[tool call " + name + "] " + input, Parts: model.EncodeParts(call), Tokens: tokens},
		{Role: model.RoleTool, Name: name, Content: "[tool result] " + output, Parts: model.EncodeParts(res), Tokens: tokens},
	}
}

// asmCheckOpenAI is assembletest.CheckOpenAI, by the name the hook's
// tests use.
var asmCheckOpenAI = assembletest.CheckOpenAI

// version is session ref's version, as a read gives it.
func (f *fixture) version(ref string) uint64 {
	f.t.Helper()
	info, _, err := f.svc.View(ref)
	if err != nil {
		f.t.Fatal(err)
	}
	return info.Version
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
