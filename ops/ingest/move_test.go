package ingest

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"weft/formats"
	"weft/formats/claudecode"
	"weft/formats/weftjsonl"
	"weft/ops"
	"weft/ops/opstest"
)

// otherFile is a second database file, as a user moving a session has.
func otherFile(t *testing.T) *opstest.Fixture {
	t.Helper()
	f := &opstest.Fixture{T: t, Path: filepath.Join(t.TempDir(), "other.db"), Now: opstest.T0.Add(96 * time.Hour)}
	f.Open()
	return f
}

// importInto reads data with read into f's file and returns the one
// session the import reported.
func importInto(t *testing.T, f *opstest.Fixture, read formats.Reader, data []byte) ImportedSession {
	t.Helper()
	im := New(context.Background(), f.Svc, Options{})
	if _, err := read(bytes.NewReader(data), im); err != nil {
		t.Fatal(err)
	}
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	if len(im.Sessions) != 1 {
		t.Fatalf("%d sessions reported: %+v", len(im.Sessions), im.Sessions)
	}
	return im.Sessions[0]
}

func sessionCount(t *testing.T, f *opstest.Fixture) int {
	t.Helper()
	sessions, err := f.St.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	return len(sessions)
}

// A session exported as weft JSONL and imported again into the file it
// came from is recognised by its ID: nothing is added, no second session
// made. Moved to another file, it keeps its ID; what is added to it
// there (messages, operations) comes back with the next move, and only
// that.
func TestMovedSessionKeepsItsIdentity(t *testing.T) {
	t.Parallel()
	a := opstest.New(t)
	cc := readFile(t, "../../formats/testdata/claude-code/spotter_tool_heavy.jsonl")
	sid := importInto(t, a, claudecode.Read, cc).SessionID
	call(a, (*ops.Service).TagMessages, `{"ids":["m1","m2"],"tags":["start"]}`)
	export, _, msgs, _ := exportWeft(t, a.Svc, sid)

	// Back into the file it came from.
	s := importInto(t, a, weftjsonl.Read, export.Bytes())
	if s.SessionID != sid || s.Created || s.Added != 0 || s.Skipped != len(msgs) || s.Ops != 0 {
		t.Fatalf("re-import into the first file: %+v, want nothing added to %s", s, sid)
	}
	if n := sessionCount(t, a); n != 1 {
		t.Fatalf("%d sessions after the re-import, want 1", n)
	}

	// Into another file: the same ID, the same thread.
	b := otherFile(t)
	s = importInto(t, b, weftjsonl.Read, export.Bytes())
	if s.SessionID != sid || !s.Created || s.Added != len(msgs) || s.Ops != 1 {
		t.Fatalf("import into another file: %+v, want session %s made", s, sid)
	}
	if effective(t, b.Svc, sid) != effective(t, a.Svc, sid) {
		t.Fatalf("the moved thread differs:\n%s\nwant\n%s", effective(t, b.Svc, sid), effective(t, a.Svc, sid))
	}
	// There it grows: two messages and an operation.
	call(b, (*ops.Service).AppendMessages, `{"session_id":"`+sid+`","messages":[{"role":"user","content":"asked in b"},{"role":"assistant","content":"answered in b"}]}`)
	call(b, (*ops.Service).TagMessages, `{"session_id":"`+sid+`","ids":["m18"],"tags":["from-b"]}`)
	back, _, _, _ := exportWeft(t, b.Svc, sid)

	// Back home: only what is new comes in.
	s = importInto(t, a, weftjsonl.Read, back.Bytes())
	if s.SessionID != sid || s.Created || s.Added != 2 || s.Skipped != len(msgs) || s.Ops != 1 || len(s.Notes) != 0 {
		t.Fatalf("the grown session back in the first file: %+v, want 2 messages and 1 operation added", s)
	}
	if n := sessionCount(t, a); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	if effective(t, a.Svc, sid) != effective(t, b.Svc, sid) {
		t.Fatalf("after the move back:\n%s\nwant\n%s", effective(t, a.Svc, sid), effective(t, b.Svc, sid))
	}
	// And once more, nothing; nor for the older export.
	for _, data := range [][]byte{back.Bytes(), export.Bytes()} {
		if s := importInto(t, a, weftjsonl.Read, data); s.Added != 0 || s.Ops != 0 || s.Created {
			t.Fatalf("again: %+v", s)
		}
	}
}

// A session moved to another file through weft JSONL takes its import
// keys and sources along: importing the original Claude Code file there
// afterwards finds the session and adds nothing, and a longer version of
// that file adds only its new messages. The other way round, a file that
// imported the Claude Code file itself finds its session when the weft
// export arrives, under the other ID.
func TestMovedSessionKnowsItsSource(t *testing.T) {
	t.Parallel()
	a := opstest.New(t)
	cc := readFile(t, "../../formats/testdata/claude-code/claude-code-log_dag_compact_after_rewind.jsonl")
	first := importInto(t, a, claudecode.Read, cc)
	sid := first.SessionID
	if first.Ops != 1 {
		t.Fatalf("first import: %+v, want the compaction's digest", first)
	}
	export, _, msgs, _ := exportWeft(t, a.Svc, sid)

	b := otherFile(t)
	if s := importInto(t, b, weftjsonl.Read, export.Bytes()); s.SessionID != sid || !s.Created {
		t.Fatalf("move: %+v", s)
	}
	s := importInto(t, b, claudecode.Read, cc)
	if s.SessionID != sid || s.Created || s.Added != 0 || s.Skipped != len(msgs) || s.Ops != 0 {
		t.Fatalf("the Claude Code file into the file the session moved to: %+v, want nothing added to %s", s, sid)
	}
	grown := append(bytes.Clone(cc), []byte(`{"type":"user","uuid":"p2u","parentUuid":"p1a","sessionId":"s1","timestamp":"2025-07-01T10:50:00.000Z","message":{"role":"user","content":"One more thing"}}`+"\n")...)
	if s := importInto(t, b, claudecode.Read, grown); s.SessionID != sid || s.Added != 1 || s.Ops != 0 {
		t.Fatalf("the grown Claude Code file: %+v, want 1 message added", s)
	}
	if n := sessionCount(t, b); n != 1 {
		t.Fatalf("%d sessions in the second file, want 1", n)
	}

	// A third file imported the Claude Code file itself first.
	c := otherFile(t)
	own := importInto(t, c, claudecode.Read, cc).SessionID
	s = importInto(t, c, weftjsonl.Read, export.Bytes())
	if s.SessionID != own || s.Created || s.Added != 0 || s.Ops != 0 {
		t.Fatalf("the export into a file with the Claude Code import: %+v, want nothing added to %s", s, own)
	}
	if n := sessionCount(t, c); n != 1 {
		t.Fatalf("%d sessions in the third file, want 1", n)
	}
}

// A session here with the file's ID but made at another time is another
// session: the file's session gets an ID of its own, the report says so,
// and importing the file again finds it. A file from before exports
// carried keys and sources imports as it did, and is recognised by its
// ID.
func TestMovedSessionWhoseIDIsTaken(t *testing.T) {
	t.Parallel()
	a := opstest.New(t)
	sid := a.Session("here first", 3)
	export, info, _, _ := exportWeft(t, a.Svc, sid)
	other := bytes.Replace(export.Bytes(), []byte(info.CreatedAt.Format(time.RFC3339Nano)), []byte("2020-01-01T00:00:00Z"), 1)

	s := importInto(t, a, weftjsonl.Read, other)
	if s.SessionID == sid || !s.Created || s.Added != 3 {
		t.Fatalf("a session with a taken ID: %+v", s)
	}
	want := "the file's session ID " + sid + " is another session's here (made at another time), so this one is " + s.SessionID + "; importing the file again finds it"
	if len(s.Notes) != 1 || s.Notes[0] != want {
		t.Fatalf("notes %q, want %q", s.Notes, want)
	}
	if again := importInto(t, a, weftjsonl.Read, other); again.SessionID != s.SessionID || again.Added != 0 || again.Created {
		t.Fatalf("again: %+v, want nothing added to %s", again, s.SessionID)
	}

	// Without keys and sources, as older wefts wrote it.
	var old bytes.Buffer
	e, err := a.Svc.ExportWeft(sid)
	if err != nil {
		t.Fatal(err)
	}
	e.Keys, e.Sources = nil, nil
	if err := weftjsonl.Write(&old, e); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(old.Bytes(), []byte(`"keys"`)) || bytes.Contains(old.Bytes(), []byte(`"sources"`)) {
		t.Fatalf("not an old file: %s", old.Bytes())
	}
	if s := importInto(t, a, weftjsonl.Read, old.Bytes()); s.SessionID != sid || s.Added != 0 || s.Created {
		t.Fatalf("an old file into the file it came from: %+v", s)
	}
	b := otherFile(t)
	if s := importInto(t, b, weftjsonl.Read, old.Bytes()); s.SessionID != sid || s.Added != 3 || !s.Created {
		t.Fatalf("an old file into another file: %+v", s)
	}
	if n := sessionCount(t, a); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
}
