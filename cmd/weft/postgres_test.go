package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"weft/store/pgstore/pgtest"
)

// Every command works on a PostgreSQL database given as --store (or
// $WEFT_STORE) as on a file: a session made, messages appended, a
// digest, the effective thread shown, listed, forked.
func TestPostgresCommands(t *testing.T) {
	url := pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv))
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code, err := runCLI("", append([]string{"--store", url}, args...)...)
		if err != nil || code != 0 {
			t.Fatalf("weft --store URL %s: exit %d, %v\n%s", strings.Join(args, " "), code, err, errOut)
		}
		return out
	}
	sid := strings.TrimSpace(run("new", "team thread"))
	run("call", "append_messages", "session_id="+sid, `messages=[{"role":"user","content":"JWT or sessions?"},{"role":"assistant","content":"JWT, short-lived."},{"role":"user","content":"And revocation?"}]`)
	run("call", "digest_messages", "session_id="+sid, "start_idx=0", "end_idx=1", "summary=Chose JWT")
	if out := run("show", sid); !strings.Contains(out, "Chose JWT") || !strings.Contains(out, "And revocation?") || strings.Contains(out, "short-lived") {
		t.Errorf("show after the digest:\n%s", out)
	}
	var ls struct {
		Sessions []struct {
			SessionID string `json:"session_id"`
			OpCount   int    `json:"op_count"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(run("ls", "--json")), &ls); err != nil || len(ls.Sessions) != 1 || ls.Sessions[0].SessionID != sid || ls.Sessions[0].OpCount != 1 {
		t.Errorf("ls --json: %+v %v", ls, err)
	}
	fork := strings.TrimSpace(run("fork", sid, "--at", "0"))
	if out := run("show", fork); !strings.Contains(out, "Chose JWT") || strings.Contains(out, "revocation") {
		t.Errorf("the fork shows:\n%s", out)
	}
	// $WEFT_STORE in place of --store.
	t.Setenv("WEFT_STORE", url)
	var out, errOut strings.Builder
	a := &app{stdout: &out, stderr: &errOut, env: readEnvironment()}
	if err := a.run(context.Background(), []string{"ls"}); err != nil || !strings.Contains(out.String(), "team thread") || !strings.Contains(out.String(), "fork of team thread") {
		t.Errorf("weft ls with $WEFT_STORE: %v\n%s%s", err, out.String(), errOut.String())
	}
}
