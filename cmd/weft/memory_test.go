package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// weft memory shows a session's policy and tiers, sets the pairs given
// (the thread is brought within at once), refuses a policy that does not
// hold without changing the file, and sets the file's defaults; and a
// turn added afterwards is checked before add_turn returns.
func TestMemoryCommand(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "weft.db")
	if _, code, err := weft(t, db, "new", "limiter"); code != 0 {
		t.Fatal(err)
	}
	for k := range 12 {
		if _, code, err := weft(t, db, "call", "add_turn", fmt.Sprintf("query=Question %d about the limiter", k), fmt.Sprintf("response=Answer %d: it refills at a fixed rate.", k)); code != 0 {
			t.Fatal(err)
		}
	}
	out, code, err := weft(t, db, "memory")
	if code != 0 || !strings.Contains(out, "no memory policy") || !strings.Contains(out, "12 turns") {
		t.Fatalf("weft memory: %d %v\n%s", code, err, out)
	}
	out, code, err = weft(t, db, "memory", "limiter", "budget_tokens=5000")
	if code != 0 || !strings.Contains(out, "made 1 operation") || !strings.Contains(out, "budget 5,000 → 3,750 tokens") || !strings.Contains(out, "7 turns") {
		t.Fatalf("weft memory budget_tokens=5000: %d %v\n%s", code, err, out)
	}
	before := fileSum(t, db)
	if _, code, err := weft(t, db, "memory", "max_active_turns=0"); code != 1 || !strings.Contains(err.Error(), "max_active_turns 0 must be 1 or more") {
		t.Errorf("max_active_turns=0: %d %v", code, err)
	}
	if _, code, _ := weft(t, db, "memory", "no_such_key=1"); code != 2 {
		t.Errorf("an unknown key: exit %d, want 2", code)
	}
	if fileSum(t, db) != before {
		t.Error("a refused policy changed the file")
	}
	// Four turns more: the fifth summary's worth is made as they come.
	for k := 12; k < 16; k++ {
		if _, code, err := weft(t, db, "call", "add_turn", fmt.Sprintf("query=Question %d", k), "response=Yes."); code != 0 {
			t.Fatal(err)
		}
	}
	out, _, _ = weft(t, db, "memory")
	if strings.Count(out, "summary:") != 2 {
		t.Errorf("after 16 turns, want two summaries:\n%s", out)
	}
	out, code, err = weft(t, db, "memory", "--scope", "proxied", "budget_tokens=150000")
	if code != 0 || !strings.Contains(out, "new sessions: none") || !strings.Contains(out, "sessions the proxy starts: 10 active turns") {
		t.Errorf("--scope proxied: %d %v\n%s", code, err, out)
	}
}
