package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"weft/ops"
	"weft/ops/reads"
)

// weft mcp relaying to a weft serve follows it across a restart on
// another port, and serves the file itself once nothing holds it (and
// listens for other wefts as the holder).
func TestMCPRelaySurvivesARestart(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	first, url1, _ := startServe(t, db, "--addr", "127.0.0.1:0")

	var stderr bytes.Buffer
	cs := stdioClient(t, db, "relayed-agent", &stderr)
	t.Cleanup(func() { cs.Close() })
	appendOne := func(content string) ops.AppendResult {
		t.Helper()
		var res ops.AppendResult
		out := toolText(t, cs, "append_messages", map[string]any{"session_id": sid, "messages": []map[string]string{{"role": "user", "content": content}}})
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Appended != 1 {
			t.Fatalf("append %q: %s (%v; stderr %s)", content, out, err, stderr.String())
		}
		return res
	}
	appendOne("to the first weft")

	first.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, first); err != nil {
		t.Fatalf("first weft serve: %v", err)
	}
	second, url2, _ := startServe(t, db, "--addr", "127.0.0.1:0")
	if url2 == url1 {
		t.Fatalf("the second weft serve took the first's address %s", url1)
	}
	res := appendOne("to the second weft")
	// It landed in the second weft.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, strings.TrimSuffix(url2, "/mcp")+"/api/list_sessions", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list reads.ListSessionsResult
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Sessions) != 1 || list.Sessions[0].Version != res.Version {
		t.Fatalf("the second weft has %+v, want version %d", list.Sessions, res.Version)
	}

	second.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, second); err != nil {
		t.Fatalf("second weft serve: %v", err)
	}
	res = appendOne("to the file itself")
	if res.Version <= list.Sessions[0].Version {
		t.Fatalf("version %d after the takeover, want more than %d", res.Version, list.Sessions[0].Version)
	}
	// The relay now holds the file and listens for other wefts.
	if addr := strings.TrimSpace(readFile(t, db+".addr")); addr == "" || addr == url1 || addr == url2 {
		t.Fatalf("address file %q after the takeover", addr)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("relay exit: %v (%s)", err, stderr.String())
	}
}
