package ingest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"weft/formats/claudecode"
	"weft/ops/opstest"
)

func importCC(t *testing.T, f *opstest.Fixture, data []byte) ImportedSession {
	t.Helper()
	im := New(context.Background(), f.Svc, Options{})
	if _, err := claudecode.Read(bytes.NewReader(data), im); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im)
	if len(im.Sessions) != 1 {
		t.Fatalf("%d sessions", len(im.Sessions))
	}
	return im.Sessions[0]
}

// Stored messages are only appended to: a message of the file that comes
// before messages already imported (a line that was broken at the first
// import, repaired since) is not appended after later ones, but reported.
func TestImportDoesNotAppendOutOfOrder(t *testing.T) {
	t.Parallel()
	whole := readFile(t, "../../formats/testdata/claude-code/spotter_long_session.jsonl")
	lines := bytes.Split(whole, []byte("\n"))
	lines[997] = []byte("{broken") // line 998, a tool result
	broken := bytes.Join(lines, []byte("\n"))

	f := opstest.New(t)
	first := importCC(t, f, broken)
	if first.Added != 291 {
		t.Fatalf("the broken file: %+v, want 291 of 292 messages", first)
	}
	s := importCC(t, f, whole)
	if s.Added != 0 || s.Skipped != 291 || s.NotPlaced != 1 {
		t.Fatalf("the repaired file: %+v, want nothing added, 1 not placed", s)
	}
	if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "1 message of the file belongs before messages already in the session") {
		t.Errorf("notes: %s", notes)
	}
	info, _, _ := f.Svc.View(s.SessionID)
	if info.MessageCount != 291 {
		t.Errorf("%d messages stored, want 291", info.MessageCount)
	}

	// A file that grew: only the new messages, at the end, nothing to report.
	g := opstest.New(t)
	head := bytes.Join(bytes.Split(whole, []byte("\n"))[:1000], []byte("\n"))
	a := importCC(t, g, head)
	b := importCC(t, g, whole)
	if b.NotPlaced != 0 || len(b.Notes) != 0 || a.Added+b.Added != 292 || b.Skipped != a.Added {
		t.Errorf("growth: %+v then %+v", a, b)
	}
}

// A stored message the file now has otherwise (one block of a reply was
// broken at the first import) keeps its first version, and the report
// says so.
func TestImportTellsAChangedMessage(t *testing.T) {
	t.Parallel()
	whole := readFile(t, "../../formats/testdata/claude-code/spotter_long_session.jsonl")
	lines := bytes.Split(whole, []byte("\n"))
	lines[999] = []byte("{broken") // line 1000, the tool call of a two-record reply
	broken := bytes.Join(lines, []byte("\n"))

	f := opstest.New(t)
	if s := importCC(t, f, broken); s.Added != 292 {
		t.Fatalf("the broken file: %+v", s)
	}
	s := importCC(t, f, whole)
	if s.Added != 0 || s.Skipped != 292 || s.Changed != 1 || s.NotPlaced != 0 {
		t.Fatalf("the repaired file: %+v, want 1 changed", s)
	}
	if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "1 message of the file differs from the version imported before (the first is ed3f34d3-d898-429d-8ad4-dded7b24ab40)") {
		t.Errorf("notes: %s", notes)
	}
	if again := importCC(t, f, broken); again.Changed != 0 || again.Added != 0 {
		t.Errorf("the broken file again: %+v", again)
	}
}
