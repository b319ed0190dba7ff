package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/ops/tools"
	"weft/tui"
)

func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Viewing never writes: ls, show, export and the tools that only read
// leave the file's bytes as they were.
func TestViewingLeavesTheFileAsItWas(t *testing.T) {
	db, sid := seededDB(t)
	before := fileSum(t, db)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	for _, args := range [][]string{
		{"ls"}, {"ls", "--json"}, {"show"}, {"show", sid, "--raw"}, {"show", "--json"},
		{"export"}, {"export", "--format", "anthropic"}, {"export", "--format", "markdown"}, {"export", "--format", "jsonl", "-o", out},
		{"call", "list_sessions"}, {"call", "get_message_range", "start_idx=0", "end_idx=9"}, {"call", "list_operations"},
		{"call", "get_conversation_context", "turns=5"}, {"call", "search_session_history", "query=limit"},
		{"call", "get_startup_context"}, {"call", "get_session_history", "format=markdown"},
	} {
		if r := runOn(db, args...); r.code != 0 {
			t.Fatalf("weft %v: %+v", args, r)
		}
		if fileSum(t, db) != before {
			t.Fatalf("weft %v changed the file", args)
		}
	}
	// A write does change it (the check above can see a change).
	if r := runOn(db, "call", "snip_messages", "start_idx=0", "end_idx=0"); r.code != 0 || fileSum(t, db) == before {
		t.Fatalf("a snip left the file as it was: %+v", r)
	}
}

// A command that only reads, pointed at a file that is not there, makes
// nothing (neither the file nor its folder) and says how to make one;
// a command that writes makes it.
func TestMistypedDatabaseMakesNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "mistyped", "weft.db")
	for _, args := range [][]string{
		{"ls"}, {"ls", "--json"}, {"show"}, {"show", "x"}, {"export"}, {"export", "--format", "jsonl"},
		{"call", "list_sessions"}, {"call", "get_message_range", "start_idx=0", "end_idx=1"},
	} {
		r := runOn(db, args...)
		if r.code != 1 || !strings.Contains(r.errOut, "no database at "+db) || !strings.Contains(r.errOut, "weft import FILE or weft new TITLE") {
			t.Errorf("weft --db %s %v: %+v", db, args, r)
		}
		if _, err := os.Stat(filepath.Dir(db)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("weft %v made %s", args, filepath.Dir(db))
		}
	}
	if r := runOn(db, "new", "first"); r.code != 0 {
		t.Fatalf("weft new on a new file: %+v", r)
	}
	if r := runOn(db, "ls"); r.code != 0 || !strings.Contains(r.out, "first") {
		t.Errorf("weft ls after weft new: %+v", r)
	}
}

// The TUI on a file that is not there says so, and how to make one,
// unless it is the default database (weft's first run makes it).
func TestTUIOnAMissingFile(t *testing.T) {
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	ran := false
	runTUI = func(context.Context, tools.Desk, tui.Options) error { ran = true; return nil }

	db := filepath.Join(t.TempDir(), "typo", "weft.db")
	r := runOn(db, "--no-mcp")
	if r.code != 1 || ran || !strings.Contains(r.errOut, "no database at "+db) || !strings.Contains(r.errOut, "weft new TITLE") {
		t.Errorf("weft --db %s: %+v, TUI ran %v", db, r, ran)
	}
	if _, err := os.Stat(filepath.Dir(db)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the TUI made %s", filepath.Dir(db))
	}

	def := filepath.Join(t.TempDir(), "data", "weft.db")
	t.Setenv("WEFT_DB", def)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"--no-mcp"}, &out, &errOut); err != nil || !ran {
		t.Fatalf("weft on a new default database: %v, TUI ran %v\n%s", err, ran, errOut.String())
	}
	if _, err := os.Stat(def); err != nil {
		t.Errorf("the default database was not made: %v", err)
	}
}
