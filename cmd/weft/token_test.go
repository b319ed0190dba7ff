package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"weft/ops/tools"
	"weft/tui"
)

// weft --token T gives the TUI's embedded listener a bearer token, as
// weft serve --token does: without it agents are refused, with it they
// get in, and it is what lets the listener bind off loopback.
func TestTUITokenFlag(t *testing.T) {
	t.Setenv("WEFT_TOKEN", "")
	db, _ := seededDB(t)
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })

	var statuses []int
	runTUI = func(_ context.Context, _ tools.Desk, opts tui.Options) error {
		l, ok := opts.Listener.(*embedded)
		if !ok {
			t.Fatalf("the TUI was given no listener: %v", opts.Listener)
		}
		// Reach it over loopback whatever it binds.
		base := "http://127.0.0.1:" + l.URL()[strings.LastIndexByte(l.URL(), ':')+1:]
		statuses = nil
		for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret"} {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/api/list_sessions", strings.NewReader("{}"))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
		}
		return nil
	}

	for _, args := range [][]string{
		{"--token", "s3cret", "--mcp-addr", "127.0.0.1:0"},
		{"--mcp-addr", "0.0.0.0:0", "--token", "s3cret"}, // off loopback: allowed with the token
	} {
		t.Setenv("WEFT_TOKEN", "")
		if _, code, err := weft(t, db, args...); code != 0 {
			t.Fatalf("weft %v: exit %d: %v", args, code, err)
		}
		if len(statuses) != 3 || statuses[0] != 401 || statuses[1] != 401 || statuses[2] != 200 {
			t.Errorf("weft %v: no token, wrong token, right token answered %v; want [401 401 200]", args, statuses)
		}
		// The token reaches the listener as a value, not through the
		// process's environment.
		if env := os.Getenv("WEFT_TOKEN"); env != "" {
			t.Errorf("weft %v set WEFT_TOKEN=%q", args, env)
		}
	}

	// Without a token the listener stays open on loopback, and off
	// loopback it is refused before the TUI starts.
	t.Setenv("WEFT_TOKEN", "")
	if _, code, err := weft(t, db, "--mcp-addr", "127.0.0.1:0"); code != 0 || statuses[0] != 200 {
		t.Errorf("without --token: exit %d (%v), status %v", code, err, statuses)
	}
	statuses = nil
	if _, code, err := weft(t, db, "--mcp-addr", "0.0.0.0:0"); code == 0 || err == nil || !strings.Contains(err.Error(), "token") || statuses != nil {
		t.Errorf("off loopback without a token: exit %d (%v), TUI ran: %v", code, err, statuses != nil)
	}
}

// weft call relays to a running weft with --token, else $WEFT_TOKEN: the
// value is handed to the relay, and without it the running weft refuses.
func TestCallRelayToken(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	serve, _, _ := startServe(t, db, "--addr", "127.0.0.1:0", "--token", "relay-token")
	call := func(env []string, args ...string) (string, error) {
		cmd := weftProcess(append(args, "--db", db, "call", "list_operations", "session_id="+sid)...)
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String() + stderr.String(), err
	}
	for _, tt := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"--token", "relay-token"}},
		{[]string{"WEFT_TOKEN=relay-token"}, nil},
		{[]string{"WEFT_TOKEN=wrong"}, []string{"--token", "relay-token"}}, // the flag wins
	} {
		if out, err := call(tt.env, tt.args...); err != nil || !strings.Contains(out, `"operations"`) {
			t.Errorf("weft %v call with %v: %v\n%s", tt.args, tt.env, err, out)
		}
	}
	if out, err := call(nil); err == nil {
		t.Errorf("weft call without the token got through:\n%s", out)
	}
	serve.Process.Signal(syscall.SIGTERM)
	waitExit(t, serve)
}

// A blank --token (or WEFT_TOKEN of blanks) is a usage error for every
// command that takes one: it would open a listener nobody can use.
func TestBlankTokenRefused(t *testing.T) {
	db, _ := seededDB(t)
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	ran := false
	runTUI = func(context.Context, tools.Desk, tui.Options) error { ran = true; return nil }
	for _, tt := range []struct {
		env  string
		args []string
	}{
		{"", []string{"--token", " ", "--mcp-addr", "0.0.0.0:0"}},
		{"", []string{"--token", "   ", "--mcp-addr", "127.0.0.1:0"}},
		{"  ", []string{"--mcp-addr", "0.0.0.0:0"}},
		{"\t", []string{"serve", "--addr", "0.0.0.0:0"}},
		{"", []string{"serve", "--addr", "0.0.0.0:0", "--token", " "}},
		{"", []string{"call", "list_sessions", "--token", " "}},
		{"", []string{"mcp", "--token", ""}},
	} {
		t.Setenv("WEFT_TOKEN", tt.env)
		ran = false
		// A serve that took the token would serve until stopped.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var out, errBuf bytes.Buffer
		err := run(ctx, append([]string{"--db", db}, tt.args...), &out, &errBuf)
		cancel()
		code, errOut := exitCode(err), errBuf.String()
		if code != 2 || err == nil || !strings.Contains(err.Error(), "blank") || ran {
			t.Errorf("weft %v with WEFT_TOKEN=%q: exit %d (%v), TUI ran %v, stderr %q", tt.args, tt.env, code, err, ran, errOut)
		}
	}
}
