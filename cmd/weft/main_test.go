package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// weft runs the CLI in-process against a database and returns stdout and
// the exit code main would use.
func weft(t *testing.T, db string, args ...string) (string, int, error) {
	t.Helper()
	out, _, code, err := runCLI(db, args...)
	return out, code, err
}

// runCLI runs the CLI in-process: stdout, stderr, the exit code main
// would use, and the error main would print.
func runCLI(db string, args ...string) (string, string, int, error) {
	return runCLIWaiting(0, db, args...)
}

// runCLIWaiting is runCLI with the lock wait lockWait (app.lockWait).
func runCLIWaiting(lockWait time.Duration, db string, args ...string) (string, string, int, error) {
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut, env: readEnvironment(), lockWait: lockWait}
	err := a.run(context.Background(), append([]string{"--db", db}, args...))
	code := 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
	}
	return out.String(), errOut.String(), code, err
}

func TestCLI(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "cli.db")
	out, code, err := weft(t, db, "new", "auth", "design")
	if code != 0 {
		t.Fatal(err)
	}
	sid := strings.TrimSpace(out)

	_, code, err = weft(t, db, "call", "append_messages",
		`messages=[{"role":"user","content":"JWT or sessions?"},{"role":"assistant","content":"JWT."},{"role":"user","content":"Why?"}]`)
	if code != 0 {
		t.Fatal(err)
	}
	out, code, err = weft(t, db, "call", "digest_messages", "start_idx=0", "end_idx=1", "summary=Chose JWT")
	if code != 0 {
		t.Fatal(err)
	}
	var op struct {
		OperationID string `json:"operation_id"`
		Version     uint64 `json:"version"`
	}
	if err := json.Unmarshal([]byte(out), &op); err != nil || op.OperationID == "" {
		t.Fatalf("digest result %q: %v", out, err)
	}

	out, _, _ = weft(t, db, "show")
	for _, want := range []string{"auth design", "digest of 2 items", "Chose JWT", "Why?"} {
		if !strings.Contains(out, want) {
			t.Errorf("show does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "JWT or sessions?") {
		t.Errorf("show prints a digested message:\n%s", out)
	}
	out, _, _ = weft(t, db, "show", sid[:6], "--raw")
	if !strings.Contains(out, "JWT or sessions?") || strings.Contains(out, "Chose JWT") {
		t.Errorf("show --raw:\n%s", out)
	}
	out, _, _ = weft(t, db, "show", "--json")
	var shown struct{ Total int }
	if err := json.Unmarshal([]byte(out), &shown); err != nil || shown.Total != 2 {
		t.Errorf("show --json: total %d, %v", shown.Total, err)
	}

	out, _, _ = weft(t, db, "ls", "--json")
	var ls struct {
		Sessions []struct {
			SessionID    string `json:"session_id"`
			MessageCount int    `json:"message_count"`
			OpCount      int    `json:"op_count"`
		}
	}
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Sessions) != 1 || ls.Sessions[0].MessageCount != 3 || ls.Sessions[0].OpCount != 1 {
		t.Errorf("ls --json: %s (%v)", out, err)
	}
	out, _, _ = weft(t, db, "ls")
	if !strings.Contains(out, "auth design") || !strings.Contains(out, "MESSAGES") {
		t.Errorf("ls:\n%s", out)
	}

	out, code, err = weft(t, db, "call", "revert_operation", `{"operation_id":"`+op.OperationID+`"}`)
	if code != 0 || !strings.Contains(out, `"success": true`) {
		t.Fatalf("revert: %s %v", out, err)
	}
}

func TestCLIErrors(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "cli.db")
	weft(t, db, "new", "x")
	weft(t, db, "call", "add_turn", "query=hi")
	tests := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"frobnicate"}, 1, `"frobnicate" is not a command`},
		{[]string{"frobnicate", "x"}, 2, `unknown command "frobnicate"`},
		{[]string{"call"}, 2, "call needs a tool name"},
		{[]string{"call", "no_such_tool"}, 2, `no tool "no_such_tool"`},
		{[]string{"call", "snip_messages", "begin=1"}, 2, `has no argument "begin"`},
		{[]string{"call", "snip_messages", `{"start_idx":"x"}`}, 2, "must be an integer"},
		{[]string{"call", "snip_messages", "start_idx=0", "end_idx=9"}, 1, "end_idx 9 is past the end of the thread (1 item: 0..0)"},
		{[]string{"show", "nosuch"}, 1, `session "nosuch" not found`},
		{[]string{"show", "a", "b"}, 2, "one session at most"},
		{[]string{"ls", "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"new"}, 2, "new needs a title"},
		{[]string{"demo", "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"demo", "extra"}, 2, "demo takes no arguments"},
		{[]string{"demo", "--theme", "sepia"}, 2, `no theme "sepia"`},
		{[]string{"x", "--theme", "sepia"}, 2, `no theme "sepia"`},
	}
	for _, tt := range tests {
		_, code, err := weft(t, db, tt.args...)
		if code != tt.code || err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("weft %v: exit %d (%v), want %d saying %q", tt.args, code, err, tt.code, tt.says)
		}
	}
}

func TestCLIHelpAndTools(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "cli.db")
	out, code, _ := weft(t, db, "--help")
	if code != 0 || !strings.Contains(out, "call TOOL") {
		t.Errorf("help: %d %s", code, out)
	}
	out, code, _ = weft(t, db, "tools")
	if code != 0 || !strings.Contains(out, "digest_messages(session_id, start_idx, end_idx, ids, summary, when_tags, expected_version)") {
		t.Errorf("tools:\n%s", out)
	}
}

// A refused request on a file that did not exist leaves no file behind.
func TestRefusedRequestMakesNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"import", filepath.Join(dir, "missing.jsonl")},
		{"show", "nosuch"},
		{"call", "snip_messages", "start_idx=0"},
	} {
		db := filepath.Join(dir, "new.db")
		if _, code, _ := weft(t, db, args...); code == 0 {
			t.Fatalf("weft %v succeeded", args)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("weft %v left %s behind (%v)", args, db, err)
		}
	}
	db := filepath.Join(dir, "kept.db")
	weft(t, db, "new", "kept")
	if _, code, _ := weft(t, db, "show", "nosuch"); code == 0 {
		t.Fatal("show nosuch succeeded")
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("a refused request removed a file it did not make: %v", err)
	}
}
