package main

import (
	"net/http"
	"strings"
	"testing"

	"weft/ops"
	"weft/store/boltstore"
)

// preflight sends a browser's CORS preflight for a POST from origin.
func preflight(t *testing.T, url, origin string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "OPTIONS", url, nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-session-id")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin")
}

func TestServeAllowOrigin(t *testing.T) {
	t.Parallel()
	db, _ := seededDB(t)
	_, url, _ := startServe(t, db, "--addr", "127.0.0.1:0", "--allow-origin", "http://localhost:5173", "--allow-origin", "https://app.example")
	for _, origin := range []string{"http://localhost:5173", "https://app.example"} {
		if status, allowed := preflight(t, url, origin); status != http.StatusNoContent || allowed != origin {
			t.Errorf("preflight from %s: %d, allowed %q", origin, status, allowed)
		}
	}
	if status, allowed := preflight(t, url, "https://evil.example"); status != http.StatusForbidden || allowed != "" {
		t.Errorf("preflight from another origin: %d, allowed %q", status, allowed)
	}
}

// The TUI's listener (weft, weft demo) and weft mcp's take the flag too.
func TestListenersAllowOrigin(t *testing.T) {
	db, _ := seededDB(t)
	var seen []string
	for _, args := range [][]string{{"--allow-origin", "http://localhost:5173"}, {"demo", "--allow-origin", "http://localhost:5173"}, {"mcp", "--allow-origin", "http://localhost:5173"}} {
		var help strings.Builder
		a := &app{stdout: &help, stderr: &help, env: environment{db: db}}
		root := a.rootCommand()
		root.SetOut(&help)
		// Stop before any command runs: only the flags are read.
		root.SetArgs(append(args, "--help"))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		lc := a.listen()
		if len(lc.origins) != 1 || lc.origins[0] != "http://localhost:5173" {
			t.Errorf("%v: the listener is told of origins %v", args, lc.origins)
		}
		seen = append(seen, help.String())
	}
	for i, help := range seen {
		if !strings.Contains(help, "--allow-origin ORIGIN") {
			t.Errorf("help %d does not describe --allow-origin:\n%s", i, help)
		}
	}
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lc := listenConfig{addr: "127.0.0.1:0", origins: []string{"http://localhost:5173"}}
	l, err := lc.start(ops.New(st))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if status, allowed := preflight(t, l.Addr(), "http://localhost:5173"); status != http.StatusNoContent || allowed != "http://localhost:5173" {
		t.Errorf("the TUI's listener: preflight %d, allowed %q", status, allowed)
	}
}

func TestAllowOriginMustBeAnOrigin(t *testing.T) {
	db, _ := seededDB(t)
	for _, bad := range []string{"*", "localhost:5173", "http://localhost:5173/app"} {
		_, stderr, code, err := runCLI(db, "serve", "--addr", "127.0.0.1:0", "--allow-origin", bad)
		if code != 2 || err == nil || !strings.Contains(err.Error(), "scheme://host") {
			t.Errorf("--allow-origin %q: exit %d, %v %s", bad, code, err, stderr)
		}
	}
	// Commands without a listener do not offer it.
	out, _, _, _ := runCLI(db, "ls", "--help")
	if strings.Contains(out, "allow-origin") {
		t.Errorf("weft ls --help offers --allow-origin:\n%s", out)
	}
}
