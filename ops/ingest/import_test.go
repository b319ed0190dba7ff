package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"weft/formats"
	"weft/formats/weftjsonl"
	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
	"weft/store/boltstore"
)

// feed plays a thread into an emitter, as an importer would.
func feed(e formats.Emitter, info formats.ThreadInfo, n int, digest [2]int) error {
	if err := e.Begin(info); err != nil {
		return err
	}
	for i := range n {
		m := formats.Message{Key: fmt.Sprintf("k%d", i), NewMessage: model.NewMessage{
			Role: model.RoleUser, Content: fmt.Sprintf("line %d", i), CreatedAt: opstest.T0.Add(time.Duration(i) * time.Second), Tokens: 3,
		}}
		if err := e.Message(m); err != nil {
			return err
		}
	}
	if digest != [2]int{} {
		if err := e.Digest(fmt.Sprintf("k%d", digest[0]), fmt.Sprintf("k%d", digest[1]), "compacted"); err != nil {
			return err
		}
	}
	if err := e.End(); err != nil {
		return err
	}
	if im, ok := e.(*Import); ok {
		return im.Close()
	}
	return nil
}

func TestImportIsIdempotentAndGrows(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	info := formats.ThreadInfo{Key: "abc", Title: "imported", Source: formats.ClaudeCode}

	im := New(ctx, f.Svc, Options{})
	if err := feed(im, info, 5, [2]int{0, 2}); err != nil {
		t.Fatal(err)
	}
	if len(im.Sessions) != 1 || !im.Sessions[0].Created || im.Sessions[0].Added != 5 || im.Sessions[0].Ops != 1 {
		t.Fatalf("first import: %+v", im.Sessions)
	}
	sid := im.Sessions[0].SessionID
	v := f.View(sid)
	if len(v.Items) != 3 || v.Items[0].Synth < 0 || v.Synth[0].Content != "compacted" || v.Synth[0].MessageCount != 3 || opstest.Render(v)[len(opstest.Render(v))-5:] != "m4 m5" {
		t.Fatalf("after import: %s", opstest.Render(v))
	}

	again := New(ctx, f.Svc, Options{})
	if err := feed(again, info, 5, [2]int{0, 2}); err != nil {
		t.Fatal(err)
	}
	if s := again.Sessions; len(s) != 1 || s[0].SessionID != sid || s[0].Added != 0 || s[0].Skipped != 5 || s[0].Ops != 0 {
		t.Fatalf("re-import added something: %+v", s)
	}

	longer := New(ctx, f.Svc, Options{})
	if err := feed(longer, info, 8, [2]int{0, 2}); err != nil {
		t.Fatal(err)
	}
	if s := longer.Sessions; s[0].Added != 3 || s[0].Skipped != 5 {
		t.Fatalf("longer version: %+v", s)
	}
	got, _, _ := f.Svc.View(sid)
	if got.MessageCount != 8 || got.Source != "claude-code" || got.Title != "imported" {
		t.Fatalf("session after growth: %+v", got)
	}

	// Into a named session instead: created by title, then found again.
	named := New(ctx, f.Svc, Options{Session: "scratch"})
	if err := feed(named, formats.ThreadInfo{Key: "other", Source: formats.OpenAI}, 2, [2]int{}); err != nil {
		t.Fatal(err)
	}
	if s := named.Sessions; len(s) != 1 || !s[0].Created || s[0].Title != "scratch" {
		t.Fatalf("named: %+v", s)
	}
	named2 := New(ctx, f.Svc, Options{Session: "scratch"})
	if err := feed(named2, formats.ThreadInfo{Key: "third", Source: formats.OpenAI}, 2, [2]int{}); err != nil {
		t.Fatal(err)
	}
	if s := named2.Sessions; s[0].Created || s[0].SessionID != named.Sessions[0].SessionID {
		t.Fatalf("named again: %+v", s)
	}
}

// failAfter is an emitter that fails after n messages.
type failAfter struct {
	formats.Emitter
	n int
}

var errBroken = errors.New("reader broke")

func (f *failAfter) Message(m formats.Message) error {
	if f.n == 0 {
		return errBroken
	}
	f.n--
	return f.Emitter.Message(m)
}

func TestImportResumesAfterAFailure(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	info := formats.ThreadInfo{Key: "big", Source: formats.OpenAI}
	n := importBatch*2 + 123
	im := New(ctx, f.Svc, Options{})
	if err := feed(&failAfter{im, importBatch + 10}, info, n, [2]int{}); !errors.Is(err, errBroken) {
		t.Fatalf("want the reader's error, got %v", err)
	}
	if err := im.Close(); err != nil { // the first batch may still be in flight
		t.Fatal(err)
	}
	sessions, _ := f.St.Sessions()
	if len(sessions) != 1 || sessions[0].MessageCount != importBatch {
		t.Fatalf("after the failure: %+v (want exactly the first batch)", sessions)
	}
	again := New(ctx, f.Svc, Options{})
	if err := feed(again, info, n, [2]int{}); err != nil {
		t.Fatal(err)
	}
	if s := again.Sessions[0]; s.Added != n-importBatch || s.Skipped != importBatch {
		t.Fatalf("resumed: %+v", s)
	}
	_, v, _ := f.Svc.View(again.Sessions[0].SessionID)
	if v.Len() != n {
		t.Fatalf("%d items, want %d", v.Len(), n)
	}
}

func TestWeftRoundTrip(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	sid := f.Session("round trip", 20)
	call(f, (*ops.Service).AppendMessages, `{"messages":[{"role":"assistant","content":"with parts","parts":[{"type":"tool_call","tool_call_id":"c1","tool_name":"Bash","input":{"command":"ls"}}],"meta":{"model":"x"}}]}`)
	call(f, (*ops.Service).DigestMessages, `{"start_idx":2,"end_idx":6,"summary":"early part"}`)
	rev := call(f, (*ops.Service).ReviseMessages, `{"start_idx":2,"end_idx":3,"replacements":[{"role":"user","content":"r"}]}`)
	call(f, (*ops.Service).ReviseMessages, fmt.Sprintf(`{"ids":["%s/0"],"replacements":[{"role":"user","content":"nested"}]}`, rev.OperationID))
	call(f, (*ops.Service).ResequenceMessages, `{"new_order":[9,8]}`)
	call(f, (*ops.Service).TagMessages, `{"start_idx":10,"end_idx":11,"tags":["keep"]}`)
	s := call(f, (*ops.Service).SnipMessages, `{"start_idx":12,"end_idx":12,"when_tags":["brief"]}`)
	call(f, (*ops.Service).SetActiveTags, `{"tags":["brief"]}`)
	call(f, (*ops.Service).ToggleOperation, fmt.Sprintf(`{"operation_id":%q,"active":false}`, s.OperationID))
	call(f, (*ops.Service).ToggleOperation, fmt.Sprintf(`{"operation_id":%q,"active":true}`, s.OperationID))
	want := f.View(sid)

	buf, info, msgs, opsList := exportWeft(t, f.Svc, sid)

	// Into another file: the same session, the same effective thread.
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "other.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other := ops.New(st)
	im := New(context.Background(), other, Options{})
	problems, err := weftjsonl.Read(bytes.NewReader(buf.Bytes()), im)
	mustClose(t, im)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	gotInfo, got, err := other.View(im.Sessions[0].SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if opstest.Render(got) != opstest.Render(want) {
		t.Fatalf("effective thread after the round trip\n got: %s\nwant: %s", opstest.Render(got), opstest.Render(want))
	}
	if gotInfo.Title != info.Title || !slices.Equal(gotInfo.ActiveTags, info.ActiveTags) || gotInfo.MessageCount != info.MessageCount || gotInfo.Tokens != info.Tokens {
		t.Fatalf("session %+v, want %+v", gotInfo, info)
	}
	moved, _ := other.ExportWeft(gotInfo.ID)
	msgs2, ops2 := moved.Messages, moved.Ops
	for i := range msgs {
		a, b := msgs[i], msgs2[i]
		if a.Content != b.Content || a.Role != b.Role || !a.CreatedAt.Equal(b.CreatedAt) || !bytes.Equal(a.Parts, b.Parts) || a.Meta["model"] != b.Meta["model"] || a.Tokens != b.Tokens {
			t.Fatalf("message %d: %+v vs %+v", i, a, b)
		}
	}
	if len(ops2) != len(opsList) {
		t.Fatalf("%d operations, want %d", len(ops2), len(opsList))
	}
	// Importing the same export again adds nothing.
	im2 := New(context.Background(), other, Options{})
	if _, err := weftjsonl.Read(bytes.NewReader(buf.Bytes()), im2); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im2)
	if s := im2.Sessions[0]; s.Added != 0 || s.Ops != 0 {
		t.Fatalf("second import: %+v", s)
	}
	// Into the same file as a second copy (named session): operation IDs
	// are taken, so they are renamed, and the thread is still the same.
	im3 := New(context.Background(), f.Svc, Options{Session: "copy"})
	if _, err := weftjsonl.Read(bytes.NewReader(buf.Bytes()), im3); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im3)
	_, copyView, _ := f.Svc.View(im3.Sessions[0].SessionID)
	if len(copyView.Items) != len(want.Items) || len(copyView.Markers) != len(want.Markers) {
		t.Fatalf("copy in the same file: %s\nwant shape of %s", opstest.Render(copyView), opstest.Render(want))
	}
}

// exportWeft writes a session as weft's lossless JSONL, and returns what
// it wrote.
func exportWeft(t *testing.T, svc *ops.Service, sid string) (*bytes.Buffer, model.Session, []model.Message, []model.Op) {
	t.Helper()
	e, err := svc.ExportWeft(sid)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := weftjsonl.Write(&buf, e); err != nil {
		t.Fatal(err)
	}
	return &buf, e.Session, e.Messages, e.Ops
}
