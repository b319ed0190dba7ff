package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A session moved with weft export --format jsonl keeps its identity:
// imported back where it came from it adds nothing, imported into
// another file it keeps its ID, and the Claude Code file it was first
// imported from adds nothing there either.
func TestMoveASessionBetweenFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b, moved := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "s.jsonl")
	cc := filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")
	step := func(db string, args ...string) string {
		t.Helper()
		out, errOut, code, err := runCLI(db, args...)
		if code != 0 {
			t.Fatalf("weft %s: exit %d (%v)\n%s%s", strings.Join(args, " "), code, err, out, errOut)
		}
		return out
	}
	sessions := func(db string) []string {
		t.Helper()
		var ls struct {
			Sessions []struct {
				ID string `json:"session_id"`
			}
		}
		if err := json.Unmarshal([]byte(step(db, "ls", "--json")), &ls); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range ls.Sessions {
			ids = append(ids, s.ID)
		}
		return ids
	}
	step(a, "import", cc)
	sid := sessions(a)[0]
	if sid == "" {
		t.Fatal("no session ID in weft ls --json")
	}
	step(a, "export", sid, "--format", "jsonl", "-o", moved)

	if out := step(a, "import", moved); out != moved+": nothing new: 1 session already imported\n" {
		t.Errorf("back into its own file: %q", out)
	}
	if out := step(b, "import", moved); !strings.Contains(out, "17 messages as new session "+sid) {
		t.Errorf("into another file: %q", out)
	}
	if out := step(b, "import", cc); out != cc+": nothing new: 1 session already imported\n" {
		t.Errorf("the Claude Code file after the move: %q", out)
	}
	for _, db := range []string{a, b} {
		if ids := sessions(db); len(ids) != 1 || ids[0] != sid {
			t.Errorf("%s: sessions %v, want only %s", filepath.Base(db), ids, sid)
		}
	}
}
