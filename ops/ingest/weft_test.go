package ingest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"weft/formats/claudecode"
	"weft/formats/weftjsonl"
	"weft/ops"
	"weft/ops/opstest"
)

// effective renders a session's effective thread by content, so threads
// in two files (whose seqs differ) can be compared.
func effective(t *testing.T, svc *ops.Service, sid string) string {
	t.Helper()
	_, items, err := svc.ExportItems(sid, false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%s %v %q\n", it.Role, it.Tags, it.Content)
	}
	return b.String()
}

// A weft JSONL file with a broken message line: its operations are kept,
// without the targets that cannot be mapped; one left with nothing to act
// on is not imported and the report names it; the session is recorded.
func TestImportWeftWithABrokenMessageLine(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	im := New(ctx, f.Svc, Options{})
	if _, err := claudecode.Read(bytes.NewReader(readFile(t, "../../formats/testdata/claude-code/spotter_tool_heavy.jsonl")), im); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im)
	sid := im.Sessions[0].SessionID
	call(f, (*ops.Service).TagMessages, `{"ids":["m1","m2","m3","m4"],"tags":["early"]}`)
	only6 := call(f, (*ops.Service).TagMessages, `{"ids":["m6"],"tags":["six"]}`)
	call(f, (*ops.Service).InsertMessages, `{"after_id":"m6","messages":[{"role":"user","content":"inserted after m6"}]}`)
	call(f, (*ops.Service).DigestMessages, `{"ids":["m5","m6","m7"],"summary":"three messages"}`)
	want := effective(t, f.Svc, sid)
	buf, _, msgs, _ := exportWeft(t, f.Svc, sid)
	// Line 1 is the session, line 1+k message m<k>: break m6.
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[6], `"seq":6`) {
		t.Fatalf("line 7 is not m6: %.100s", lines[6])
	}
	lines[6] = "{broken"
	broken := []byte(strings.Join(lines, "\n"))

	other := opstest.New(t)
	im2 := New(ctx, other.Svc, Options{})
	problems, err := weftjsonl.Read(bytes.NewReader(broken), im2)
	mustClose(t, im2)
	if err != nil || len(problems) != 1 || problems[0].Line != 7 {
		t.Fatalf("read: %v, problems %v", err, problems)
	}
	if len(im2.Sessions) != 1 {
		t.Fatalf("the session is not in the report: %+v", im2.Sessions)
	}
	s := im2.Sessions[0]
	// Its messages are numbered otherwise than in the file: the session
	// does not keep the file's ID, which would name two messages m6.
	if s.SessionID == sid {
		t.Fatalf("the session kept its ID %s with its messages renumbered", sid)
	}
	if s.Added != len(msgs)-1 || s.Ops != 3 || s.OpsDropped != 1 {
		t.Fatalf("report: %+v; want %d messages, 3 operations, 1 not imported", s, len(msgs)-1)
	}
	notes := strings.Join(s.Notes, "\n")
	for _, says := range []string{
		"operation " + only6.OperationID + " (tag) not imported: none of its targets (m6) was imported",
		"(digest): 1 of its 3 targets (m6) were not imported; it applies to the rest",
		"(insert): the message it inserts after (m6) was not imported; it inserts after m5",
		"messages of the file are missing (lines that could not be read), so its messages are numbered otherwise here and the session takes a new ID, " + s.SessionID + ", not the file's " + sid + "; importing the file again finds it",
	} {
		if !strings.Contains(notes, says) {
			t.Errorf("notes do not say %q:\n%s", says, notes)
		}
	}
	got, _, _ := other.Svc.View(s.SessionID)
	if got.OpCount != 3 || got.MessageCount != len(msgs)-1 {
		t.Errorf("session: %d messages, %d operations", got.MessageCount, got.OpCount)
	}
	// m6 was in the digest: the effective thread is the same without it.
	if e := effective(t, other.Svc, s.SessionID); e != want {
		t.Errorf("effective thread\n got: %s\nwant: %s", e, want)
	}

	// Again: nothing added, the same operation still not imported.
	im3 := New(ctx, other.Svc, Options{})
	if _, err := weftjsonl.Read(bytes.NewReader(broken), im3); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im3)
	if s := im3.Sessions[0]; s.Added != 0 || s.Ops != 0 || s.OpsDropped != 1 {
		t.Errorf("again: %+v", s)
	}
}
