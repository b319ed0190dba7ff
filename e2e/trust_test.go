package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/ops/reads"
)

// The terminal tests of what makes the TUI safe to edit with: it shows
// the session it says, edits what was selected even while an agent edits
// the thread, leaves messages alone when a revise changes nothing, and
// reads every line of a long message.

// trustSessions lists a file's sessions, by title.
func trustSessions(t *testing.T, db string) map[string]string {
	t.Helper()
	var res reads.ListSessionsResult
	if err := json.Unmarshal([]byte(weftCLI(t, "--db", db, "ls", "--json")), &res); err != nil {
		t.Fatalf("weft ls --json: %v", err)
	}
	out := map[string]string{}
	for _, s := range res.Sessions {
		out[s.Title] = s.SessionID
	}
	return out
}

// trustAPI calls a tool over the running TUI's listener, as an agent
// does (curl -X POST <addr>/api/TOOL), and returns the JSON answer.
func trustAPI(t *testing.T, db, tool string, args any) (int, string) {
	t.Helper()
	var addr []byte
	deadline := time.Now().Add(harnessWait)
	for {
		b, err := os.ReadFile(db + ".addr")
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			addr = bytes.TrimSpace(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listener address in %s.addr: %v", db, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
	body, _ := json.Marshal(args)
	url := strings.TrimSuffix(string(addr), "/mcp") + "/api/" + tool
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Weft-Author", "claude-code")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func trustOps(t *testing.T, db, sid string) []reads.OperationOut {
	t.Helper()
	code, out := trustAPI(t, db, "list_operations", map[string]string{"session_id": sid})
	var res reads.ListOperationsResult
	if code != http.StatusOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("list_operations: %d %s", code, out)
	}
	return res.Operations
}

// TestTUIShowsTheSessionItSays imports a Codex rollout and ChatGPT
// exports into one file, opens the Codex session and switches to the
// Postgres one through the sessions list: the screen must show the
// Postgres session's messages, not the Codex ones (their IDs, m1…, are
// the same). There it revises a tool call and its result without
// changing them, which makes no operation and keeps their structure.
func TestTUIShowsTheSessionItSays(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	for _, f := range []string{"codex-rollout/rollout_all_record_types.jsonl", "chatgpt-export/chatgpt2graph_conversations.json", "chatgpt-export/chatlore_conversations_edge_cases.json"} {
		path := filepath.Join("..", "formats", "testdata", f)
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		cmd := weftCmd(t, "--db", db, "import", path)
		cmd.Run() // an export with a broken record is imported in part: its exit status says so
	}
	sessions := trustSessions(t, db)
	codex, pg := sessions["List the synthetic files."], sessions["Postgres indexing"]
	if codex == "" || pg == "" {
		t.Fatalf("the imports made %v", sessions)
	}
	s := startScreen(t, TerminalOptions{Width: 120, Height: 40, Env: []string{"TZ=UTC", "HOME=" + dir}}, bin, "--db", db, codex)
	s.see("List the synthetic files.", "[tool call apply_patch]", at(8, 9))

	// tab, Postgres, enter: the Postgres session, and none of the Codex
	// session's messages.
	s.keys("Tab")
	s.see("Sessions (")
	s.text("Postgres")
	s.until("the filter to leave the Postgres session", func(text string) bool {
		return strings.Contains(lineWith(text, "▸"), "Postgres indexing")
	})
	s.keys("Enter")
	s.see("Postgres indexing", "Done. The query should now use the index.", at(6, 7))
	s.gone("Sessions (")
	text := s.capture()
	for _, codexText := range []string{"List the synthetic files.", "[tool call apply_patch]", "alpha.txt"} {
		if strings.Contains(text, codexText) {
			t.Fatalf("the Postgres session shows the Codex session's %q:\n%s", codexText, text)
		}
	}

	// An unchanged revise of a tool call and its result: no operation,
	// and assemble_context still gives the call as a call.
	editsCursorTo(s, "k", "[tool call python]")
	s.keys("v", "j", "r")
	s.see("Revise items 4–5", "--- assistant", "--- tool")
	s.keys("C-s")
	s.gone("Revise items")
	s.see("unchanged")
	if list := trustOps(t, db, pg); len(list) != 0 {
		t.Fatalf("saving the revise unchanged made %d operations: %+v", len(list), list)
	}
	code, out := trustAPI(t, db, "assemble_context", map[string]string{"session_id": pg, "format": "openai"})
	if code != http.StatusOK || !strings.Contains(out, `"tool_calls"`) || strings.Contains(out, "[tool call python]") {
		t.Fatalf("assemble_context lost the tool call's structure: %d %s", code, out)
	}
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d", code)
	}
}

// TestTUIEditsWhatWasSelected opens a thread of twelve messages, selects
// m5..m7 and starts a digest; while the dialog is open an agent inserts a
// message at the top over HTTP. ctrl+s must digest m5..m7, not the three
// items now at their old places. Then an agent tags a message of the next
// selection while its dialog is open: the digest is refused, the dialog
// stays with its text and says what changed.
func TestTUIEditsWhatWasSelected(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	var msgs []model.NewMessage
	for i := 1; i <= 12; i++ {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("Message number %d.", i)})
	}
	sid := newThread(t, db, "Twelve", msgs...)

	s := startScreen(t, TerminalOptions{Width: 120, Height: 40, Env: []string{"TZ=UTC", "HOME=" + dir}}, bin, "--db", db, sid)
	s.see("Message number 12.", at(11, 12))
	s.keys("g", "j", "j", "j", "j")
	s.see(at(4, 12))
	s.keys("v", "j", "j")
	s.see(at(6, 12))
	s.keys("d")
	s.see("Digest items 4–6")
	s.text("Five to seven, summed up.")
	s.see("Five to seven, summed up.")
	if code, out := trustAPI(t, db, "insert_messages", map[string]any{"session_id": sid, "after_idx": 0, "messages": []map[string]string{{"role": "user", "content": "An agent's note."}}}); code != http.StatusOK {
		t.Fatalf("the agent's insert: %d %s", code, out)
	}
	s.see("inserted 1 message by claude-code", "Digest items 4–6")
	s.keys("C-s")
	s.see("digest of 3 messages by operator")
	s.gone("Digest items")
	list := trustOps(t, db, sid)
	digest := list[len(list)-1]
	if digest.OpType != model.OpDigest || !slices.Equal(digest.Targets, []model.ItemID{"m5", "m6", "m7"}) {
		t.Fatalf("the digest covers %v, want m5, m6, m7 (the operations: %+v)", digest.Targets, list)
	}

	// The next selection: m9..m10, and an agent tags m10 meanwhile.
	editsCursorTo(s, "j", "Message number 9.")
	s.keys("v", "j", "d")
	s.see("Digest items")
	s.text("Nine and ten.")
	if code, out := trustAPI(t, db, "tag_messages", map[string]any{"session_id": sid, "ids": []string{"m10"}, "tags": []string{"agent-read"}}); code != http.StatusOK {
		t.Fatalf("the agent's tag: %d %s", code, out)
	}
	s.see("#agent-read")
	s.keys("C-s")
	s.see("acts on m10", "Nine and ten.", "Digest items")
	if got := trustOps(t, db, sid); len(got) != len(list)+1 {
		t.Fatalf("%d operations after the refused digest, want %d (the agent's tag alone added)", len(got), len(list)+1)
	}
	s.keys("Escape")
	s.gone("Digest items")
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d", code)
	}
}

// TestTUIReadsEveryLineOfALongMessage opens a thread whose last message
// has 500 numbered lines, unfolds it, and reads on to line 300 with the
// keys; then a search for line 299 shows that line.
func TestTUIReadsEveryLineOfALongMessage(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	var long strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&long, "Line %04d of the build log: step ok\n", i)
	}
	sid := newThread(t, db, "Long", model.NewMessage{Role: model.RoleUser, Content: "Paste the build log."}, model.NewMessage{Role: model.RoleAssistant, Content: strings.TrimSpace(long.String())})

	s := startScreen(t, TerminalOptions{Width: 100, Height: 30, Env: []string{"TZ=UTC", "HOME=" + dir}}, bin, "--db", db, sid)
	s.see("Line 0001 of the build log", at(1, 2))
	s.keys("Enter")
	s.see("Line 0020 of the build log")
	for range 40 {
		if strings.Contains(s.capture(), "Line 0300 of the build log") {
			break
		}
		before := s.last
		s.keys("C-d")
		s.until("ctrl+d to scroll", func(text string) bool { return text != before })
	}
	s.see("Line 0300 of the build log", at(1, 2), "/500")
	s.match(regexp.MustCompile(`lines \d+–\d+/500`))
	s.keys("j")
	s.see("Line 0301 of the build log")
	s.keys("G")
	s.see("Line 0500 of the build log", "lines 474–500/500") // 27 lines of 30 rows show the thread

	// A search hit far into the message scrolls to its line.
	s.keys("g", "g")
	s.see("Paste the build log.")
	s.keys("/")
	s.text("Line 0299")
	s.see("▸")
	s.keys("Enter")
	s.see("Line 0299 of the build log")
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d", code)
	}
}

// weftCmd is the binary set up to run outside the terminal, as weftCLI
// runs it, for a command whose exit status the test reads itself.
func weftCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), weftBinary(t), args...)
	cmd.Env = append(withoutEnv(os.Environ(), "WEFT_DB"), "TZ=UTC")
	return cmd
}
