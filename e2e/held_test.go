package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weft/e2e/internal/rig"
	"weft/model"
)

// weft opened on a file weft serve holds is the same TUI, through that
// serve: a tag typed there lands in the file serve holds, as the
// operator's (so u undoes it), an agent's edit through serve shows as it
// lands, and q leaves serve running for the agents that talk to it.
func TestTheTUIOpensAFileServeHolds(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	sid := newThread(t, db, "Held by serve",
		model.NewMessage{Role: model.RoleUser, Content: "a question while serve holds the file"},
		model.NewMessage{Role: model.RoleAssistant, Content: "an answer while serve holds the file"})
	base, _ := rig.Serve(t, bin, dir, db, "")

	s := startScreen(t, TerminalOptions{Width: 120, Height: 30, Env: []string{"TZ=UTC"}}, bin, "--db", db, sid)
	s.see("an answer while serve holds the file", "through weft at")

	// t tags the message under the cursor, in the file serve holds.
	s.keys("t")
	s.see("Tag item 1")
	s.text("held")
	s.keys("Enter")
	s.see("#held")
	if got := heldOps(t, db, sid); got != "tag by operator, active" {
		t.Fatalf("the file serve holds has %s, want the operator's tag", got)
	}

	// An agent's snip through serve shows in the open TUI.
	agentSnip(t, base, sid)
	s.see("snipped 1 message by e2e-agent")

	// u undoes the operator's tag, and leaves the agent's snip alone.
	s.keys("u")
	s.gone("#held")
	if got := heldOps(t, db, sid); got != "tag by operator, reverted; snip by e2e-agent, active" {
		t.Fatalf("after u, serve's file has %s", got)
	}

	// q: the TUI goes, serve stays and answers.
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d", code)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("serve does not answer after the TUI closed: %v", err)
	}
	_ = resp.Body.Close()
	if got := heldOps(t, db, sid); got != "tag by operator, reverted; snip by e2e-agent, active" {
		t.Fatalf("after the TUI closed, serve's file has %s", got)
	}
}

// heldOps lists session sid's operations, through the weft that holds
// db, as "type by author, status; ...".
func heldOps(t *testing.T, db, sid string) string {
	t.Helper()
	var res struct {
		Operations []struct {
			OpType string `json:"op_type"`
			Author string `json:"author"`
			Status string `json:"status"`
		} `json:"operations"`
	}
	if err := json.Unmarshal([]byte(weftCLI(t, "--db", db, "call", "list_operations", "session_id="+sid)), &res); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, op := range res.Operations {
		out = append(out, op.OpType+" by "+op.Author+", "+op.Status)
	}
	return strings.Join(out, "; ")
}

// agentSnip snips the first item of session sid through serve's /api,
// as an agent named e2e-agent.
func agentSnip(t *testing.T, base, sid string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	body := strings.NewReader(`{"session_id":"` + sid + `","start_idx":0,"end_idx":0}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/snip_messages", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Weft-Author", "e2e-agent")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the agent's snip through serve: %s", resp.Status)
	}
}

// The weft that holds the file stopping while the TUI works through it
// is said on the screen, and nothing hangs: when a weft holds the file
// again (on another port), the TUI goes on through it.
func TestTheTUIOutlivesTheServeItWorksThrough(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	sid := newThread(t, db, "Outlived",
		model.NewMessage{Role: model.RoleUser, Content: "asked before serve stopped"},
		model.NewMessage{Role: model.RoleAssistant, Content: "answered before serve stopped"})
	_, stop := rig.Serve(t, bin, dir, db, "")
	s := startScreen(t, TerminalOptions{Width: 120, Height: 30, Env: []string{"TZ=UTC"}}, bin, "--db", db, sid)
	s.see("answered before serve stopped", "through weft at")

	stop()
	s.see("gone")
	s.keys("s") // a snip with nobody to make it: said, not waited on
	s.see("did not answer")

	rig.Serve(t, bin, t.TempDir(), db, "")
	s.see("a weft holds the file again")
	s.keys("t")
	s.see("Tag item 1")
	s.text("after")
	s.keys("Enter")
	s.see("#after")
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d", code)
	}
	if got := heldOps(t, db, sid); got != "tag by operator, active" {
		t.Fatalf("after serve came back, the file has %s", got)
	}
}
