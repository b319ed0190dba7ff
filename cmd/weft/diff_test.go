package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/ops/reads"
)

// weft diff prints the unified diff of a session, plain when piped;
// --json the diff_session result; a session it cannot find is refused.
func TestDiffCommand(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "diff.db")
	out, code, err := weft(t, db, "new", "auth design")
	if code != 0 {
		t.Fatal(err)
	}
	sid := strings.TrimSpace(out)
	for _, args := range [][]string{
		{"call", "append_messages", `messages=[{"role":"user","content":"JWT or sessions?"},{"role":"assistant","content":"JWT, signed."},{"role":"user","content":"Why?"},{"role":"assistant","content":"Stateless."}]`},
		{"call", "digest_messages", "start_idx=0", "end_idx=1", "summary=Chose JWT"},
		{"call", "snip_messages", "start_idx=2", "end_idx=2"},
	} {
		if _, code, err := weft(t, db, args...); code != 0 {
			t.Fatalf("weft %v: %v", args, err)
		}
	}
	out, code, err = weft(t, db, "diff")
	if code != 0 {
		t.Fatalf("weft diff: %v", err)
	}
	for _, want := range []string{
		"diff " + sid + " (version ",
		"--- stored     4 messages",
		"@@ digest ", ": m1..m2 (2 messages, ",
		"-m1", "JWT or sessions?",
		"+", "Chose JWT",
		"@@ snip ", ": m4 (1 message, ",
		"-m4", "Stateless.",
		" ⋯ m3 kept (1 message",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("weft diff does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("weft diff into a pipe is coloured:\n%q", out)
	}

	out, code, err = weft(t, db, "diff", "auth design", "--json")
	if code != 0 {
		t.Fatalf("weft diff --json: %v", err)
	}
	var res reads.DiffSessionResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("weft diff --json: %v\n%s", err, out)
	}
	if res.SessionID != sid || len(res.Hunks) != 2 || res.Hunks[0].Op.Type != "digest" || res.Hunks[1].Messages != 1 || !res.Complete || !strings.Contains(res.Text, "@@ snip") {
		t.Errorf("weft diff --json: %+v", res)
	}

	if _, errOut, code, _ := runCLI(db, "diff", "nosuch"); code != 1 || !strings.Contains(errOut, `session "nosuch" not found`) {
		t.Errorf("weft diff nosuch: exit %d, %q", code, errOut)
	}
	if _, errOut, code, _ := runCLI(db, "diff", "a", "b"); code != 2 || !strings.Contains(errOut, "one session at most") {
		t.Errorf("weft diff a b: exit %d, %q", code, errOut)
	}
}

// On a terminal, each kind of line has its colour; the text stays as it
// was under it.
func TestDiffColours(t *testing.T) {
	t.Parallel()
	lines := []string{"--- stored     4 messages", "@@ digest x by operator: m1..m2 (2 messages, 9 → 3 tokens) @@", "-m1  user  5  hi", "+x/0  system  3  sum", " ⋯ m3 kept (1 message, 2 tokens)", "# 1 operation changes nothing the model gets:"}
	seen := map[string]bool{}
	for _, l := range lines {
		p := paintDiffLine(l)
		if !strings.Contains(p, "\x1b[") || ansi.Strip(p) != l {
			t.Errorf("%q painted %q", l, p)
		}
		seen[p[:strings.Index(p, "m")+1]] = true
	}
	if len(seen) < 5 {
		t.Errorf("%d kinds of line share their colours: %v", len(seen), seen)
	}
}
