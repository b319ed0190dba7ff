package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/listen"
	"weft/store"
	"weft/store/boltstore"
)

// holdDB opens db as a running weft does (the TUI, weft serve): the file
// locked, a listener on a free loopback port with its address next to
// the file. It lets go when the test ends.
func holdDB(t *testing.T, db, token string) *ops.Service {
	t.Helper()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := ops.New(st)
	o, _ := listenConfig{addr: "127.0.0.1:0", token: token}.options(svc)
	l, err := listen.Listen(o)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		st.Close()
	})
	// Nothing but the listener can reach the file now.
	if ro, err := boltstore.Open(db, boltstore.Options{ReadOnly: true, Timeout: 50 * time.Millisecond}); !errors.Is(err, store.ErrInUse) {
		if ro != nil {
			ro.Close()
		}
		t.Fatalf("the file is not held: %v", err)
	}
	return svc
}

// copyFile copies a database file, so a command can run on one copy
// here and on the other through a running weft.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// cliRun is what one run of the CLI gave.
type cliRun struct {
	out, errOut string
	code        int
}

func runOn(db string, args ...string) cliRun {
	out, errOut, code, _ := runCLI(db, args...)
	return cliRun{out, errOut, code}
}

// runHeld is runOn for a file the test holds itself: the command waits
// a millisecond for the file's lock, which finds it held as surely as
// the longer wait of a run (whose own tests are the ones that use
// runOn on a held file).
func runHeld(db string, args ...string) cliRun {
	out, errOut, code, _ := runCLIWaiting(time.Millisecond, db, args...)
	return cliRun{out, errOut, code}
}

// Every command works while another weft holds the file, through that
// weft, and prints what it prints when it opens the file itself: byte
// for byte for what only reads, and but for the IDs and times a new
// session gets for what writes.
func TestEveryCommandWorksThroughARunningWeft(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	// Operations of every kind, so show's markers and the exports'
	// notes are exercised.
	for _, args := range [][]string{
		{"call", "snip_messages", "start_idx=3", "end_idx=4"},
		{"call", "revise_messages", "start_idx=10", "end_idx=11", `replacements=[{"role":"assistant","content":"<b>R</b> & more"}]`},
		{"call", "insert_messages", "after_idx=20", `messages=[{"role":"user","content":"inserted"}]`},
		{"new", "a second session"},
	} {
		if r := runOn(db, args...); r.code != 0 {
			t.Fatalf("weft %v: %s", args, r.errOut)
		}
	}
	exportFile := filepath.Join(t.TempDir(), "local.jsonl")
	reading := [][]string{
		{"ls"}, {"ls", "--json"},
		{"show"}, {"show", sid}, {"show", sid[:6], "--raw"}, {"show", "--json"}, {"show", "a second session"}, {"show", "nosuch"},
		{"export"}, {"export", sid, "--format", "anthropic"}, {"export", "--format", "markdown"}, {"export", "--format", "openai", "--raw"},
		{"export", sid, "--format", "jsonl"}, {"export", "--format", "jsonl", "--raw"}, {"export", "nosuch"},
		{"call", "list_operations", "session_id=" + sid}, {"call", "get_message_range", "session_id=" + sid, "start_idx=0", "end_idx=30"},
		{"call", "snip_messages", "session_id=" + sid, "start_idx=900", "end_idx=901"},
	}
	local := map[int]cliRun{}
	for i, args := range reading {
		local[i] = runOn(db, args...)
	}
	localJSONL := runOn(db, "export", sid, "--format", "jsonl", "-o", exportFile)
	if local[0].code != 0 || !strings.Contains(local[0].out, "a second session") {
		t.Fatalf("weft ls: %+v", local[0])
	}

	// The same file, held by a running weft.
	other := filepath.Join(t.TempDir(), "other.db")
	copyFile(t, db, other)
	holdDB(t, db, "")
	for i, args := range reading {
		if got := runHeld(db, args...); got != local[i] {
			t.Errorf("weft %v through the running weft:\n%+v\nhere:\n%+v", args, got, local[i])
		}
	}
	relayedFile := filepath.Join(t.TempDir(), "relayed.jsonl")
	if got := runHeld(db, "export", sid, "--format", "jsonl", "-o", relayedFile); got != localJSONL || readFile(t, relayedFile) != readFile(t, exportFile) {
		t.Errorf("weft export -o through the running weft: %+v, %d bytes, want %d", got, len(readFile(t, relayedFile)), len(readFile(t, exportFile)))
	}

	// Writes: the same on a copy opened here and on the held file.
	ids := regexp.MustCompile(`\b[0-9a-z]{16}\b`)
	same := func(a, b string) bool { return ids.ReplaceAllString(a, "ID") == ids.ReplaceAllString(b, "ID") }
	partly := filepath.Join(t.TempDir(), "partly.jsonl")
	os.WriteFile(partly, []byte(`{"role":"user","content":"one"}`+"\n{broken\n"+`{"role":"assistant","content":"two"}`+"\n"), 0o600)
	garbage := filepath.Join(t.TempDir(), "garbage.bin")
	os.WriteFile(garbage, []byte("\x00\x01 garbage"), 0o600)
	for _, args := range [][]string{
		{"new", "made", "through", "it"},
		{"import", filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")},
		{"import", filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")}, // again: nothing new
		{"import", "--session", "made through it", filepath.Join(data, "sharegpt/fastchat_dummy_conversation.json"), partly},
		{"import", garbage, filepath.Join(t.TempDir(), "missing.jsonl")},
		{"import", "--format", "weft", filepath.Join(data, "codex-rollout/rollout_all_record_types.jsonl")},
		{"import", exportFile},
		{"call", "digest_messages", "session_id=" + sid, "start_idx=0", "end_idx=2", "summary=through"},
		{"call", "tag_messages", "start_idx=0", "end_idx=0", "tags=nosuch-session", "session_id=nosuch"},
	} {
		here, there := runOn(other, args...), runHeld(db, args...)
		if here.code != there.code || !same(here.out, there.out) || !same(here.errOut, there.errOut) {
			t.Errorf("weft %v through the running weft:\n%+v\nhere:\n%+v", args, there, here)
		}
	}
	// And the files agree afterwards.
	mask := regexp.MustCompile(`\b[0-9a-z]{16}\b|\d{4}-\d\d-\d\d \d\d:\d\d`)
	if here, there := runOn(other, "ls"), runHeld(db, "ls"); mask.ReplaceAllString(here.out, "X") != mask.ReplaceAllString(there.out, "X") {
		t.Errorf("after the same writes, here:\n%s\nthrough the running weft:\n%s", here.out, there.out)
	}
}

// A running weft that wants a token is asked with --token or
// $WEFT_TOKEN, by every command; without it, the command says so.
func TestCommandsThroughARunningWeftNeedItsToken(t *testing.T) {
	t.Parallel()
	db, _ := seededDB(t)
	holdDB(t, db, "s3cret")
	for _, args := range [][]string{{"ls"}, {"show"}, {"export"}, {"new", "x"}, {"import", filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")}} {
		if r := runHeld(db, append(args, "--token", "s3cret")...); r.code != 0 {
			t.Errorf("weft %v --token: %+v", args, r)
		}
		if r := runHeld(db, args...); r.code != 1 || !strings.Contains(r.errOut, "wants a bearer token") {
			t.Errorf("weft %v without the token: %+v", args, r)
		}
	}
}

// What weft import sends through a running weft shows in it as it
// lands: the service announces every batch, as it does for an import
// of its own.
func TestImportThroughARunningWeftIsAnnounced(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	svc := holdDB(t, db, "")
	events, stop := svc.Subscribe()
	defer stop()
	src := filepath.Join(t.TempDir(), "more.jsonl")
	if r := runOn(db, "export", sid, "--format", "jsonl", "-o", src); r.code != 0 {
		t.Fatal(r.errOut)
	}
	if r := runOn(db, "import", "--session", sid, filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	select {
	case ev := <-events:
		if ev.SessionID != sid || ev.Kind != ops.EventAppended || ev.Author != "operator" {
			t.Errorf("the import was announced as %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the import was not announced")
	}
}

// A file held by a weft that does not listen (the TUI with --no-mcp)
// cannot be gone through: the command says so, and what to do.
func TestHeldWithoutListener(t *testing.T) {
	t.Parallel()
	db, _ := seededDB(t)
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, args := range [][]string{{"ls"}, {"new", "x"}} {
		if r := runHeld(db, args...); r.code != 1 || !strings.Contains(r.errOut, "--no-mcp") || !strings.Contains(r.errOut, "run it again once that one is done") {
			t.Errorf("weft %v on a file held without a listener: %+v", args, r)
		}
	}
}
