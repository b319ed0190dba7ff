package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/e2e/internal/rig"
)

// The environment these tests read (test files may; the package may not).
const (
	codexEnv   = "WEFT_CODEX"         // the codex binary; unset skips the tests
	requireEnv = "WEFT_CODEX_REQUIRE" // set: a missing codex fails instead of skipping
	weftEnv    = "WEFT_BIN"           // a built weft; unset builds one
	logsEnv    = "WEFT_CODEX_LOGS"    // where the logs and the report go; unset: a temporary folder
)

// codexTimeout bounds one run of Codex: a run takes seconds, and a run
// that waits for something that never comes must fail, not hang CI.
const codexTimeout = 120 * time.Second

// The conversation: a turn that makes Codex run a command, one more,
// and after the operator's digest, a last one.
const (
	firstPrompt  = "Check the repo for TODO comments."
	secondPrompt = "Note that the check is done."
	thirdPrompt  = "What is left to do?"
	summary      = "weft digest: the user asked for a TODO check; Codex ran it, and none is left."
)

func TestMain(m *testing.M) {
	code := m.Run()
	rig.Cleanup()
	os.Exit(code)
}

func needCodex(t *testing.T) string {
	t.Helper()
	return rig.Need(t, codexEnv, os.Getenv(codexEnv), requireEnv, os.Getenv(requireEnv) != "", ".ci/codex installs Codex CLI and runs these tests")
}

// weftBinary is WEFT_BIN, or cmd/weft built once for the run.
func weftBinary(t *testing.T) string {
	t.Helper()
	return rig.Weft(t, os.Getenv(weftEnv))
}

// logsDir is where the test keeps its logs: under WEFT_CODEX_LOGS when
// set (CI keeps them for the report), else in a temporary folder.
func logsDir(t *testing.T) string {
	t.Helper()
	return rig.LogsDir(t, os.Getenv(logsEnv))
}

// weftCall runs a tool with weft call, which goes through the weft
// serve that holds the file, and decodes its result into out.
func weftCall(t *testing.T, db, tool string, args any, out any) {
	t.Helper()
	raw, _ := json.Marshal(args)
	b := rig.Run(t, weftBinary(t), "--db", db, "call", tool, string(raw))
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("weft call %s: %v\n%s", tool, err, b)
	}
}

// codexRig is what every run of Codex shares: its home (where it keeps
// its sessions, so a run can resume the one before), the folder it works
// in, weft as its provider, and the guard.
type codexRig struct {
	bin, dir, home, work, weft string
	guard                      *rig.OfflineGuard
	guardURL                   string
}

// codexRun is what one run of Codex left.
type codexRun struct {
	threadID string
	messages []string // the agent's messages, in order
	stdout   []byte
	stderr   []byte
}

// run runs codex exec with args (a prompt, or resume ID prompt), weft
// at the provider's base URL, and reads its JSON events.
func (c *codexRig) run(t *testing.T, name string, args ...string) codexRun {
	t.Helper()
	provider := fmt.Sprintf(`model_providers.weft={name="weft",base_url=%q,env_key="OPENAI_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`, c.weft+"/v1")
	argv := append([]string{"exec", "--json", "--skip-git-repo-check", "--color", "never",
		"-m", "stand-in-model",
		"-c", `model_provider="weft"`, "-c", provider,
		// What would reach beyond this machine: the update check, the
		// curated plugins' sync (GitHub, chatgpt.com) and the metrics
		// export (ab.chatgpt.com).
		"-c", "check_for_update_on_startup=false",
		"--disable", "plugins",
		"-c", "analytics.enabled=false",
	}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), codexTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, argv...)
	cmd.Dir = c.work
	cmd.Env = c.environ()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := codexRun{stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	os.WriteFile(filepath.Join(c.dir, name+".stdout"), run.stdout, 0o644)
	os.WriteFile(filepath.Join(c.dir, name+".stderr"), run.stderr, 0o644)
	if err != nil {
		t.Fatalf("codex %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, run.stdout, run.stderr)
	}
	for line := range bytes.SplitSeq(run.stdout, []byte("\n")) {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
			Item     struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "thread.started":
			run.threadID = ev.ThreadID
		case ev.Type == "item.completed" && ev.Item.Type == "agent_message":
			run.messages = append(run.messages, ev.Item.Text)
		}
	}
	if reached := c.guard.Seen(); len(reached) > 0 {
		t.Fatalf("Codex reached beyond this machine (through the proxy that refuses everything): %s", strings.Join(reached, "; "))
	}
	return run
}

// environ is the whole environment Codex runs with: a home of its own,
// the key x for the provider, and the guard as the proxy for any address
// but loopback.
func (c *codexRig) environ() []string {
	env := []string{
		"HOME=" + c.home,
		"CODEX_HOME=" + filepath.Join(c.home, ".codex"),
		"OPENAI_API_KEY=x",
		"NO_COLOR=1",
	}
	env = append(env, rig.ProxyEnv(c.guardURL)...)
	for _, k := range []string{"PATH", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// request is a request the stand-in got, read.
type request struct {
	fields map[string]json.RawMessage
	input  []json.RawMessage
	items  []inputItem
}

func readRequest(t *testing.T, ex exchange) request {
	t.Helper()
	r := request{}
	if err := json.Unmarshal(ex.Request, &r.fields); err != nil {
		t.Fatalf("the stand-in got no JSON object: %s", ex.Request)
	}
	if err := json.Unmarshal(r.fields["input"], &r.input); err != nil {
		t.Fatalf("input is no list: %s", r.fields["input"])
	}
	r.items = make([]inputItem, len(r.input))
	for i, raw := range r.input {
		json.Unmarshal(raw, &r.items[i])
	}
	return r
}

// find is the index of the first item that is a message with text
// holding s, or -1.
func (r request) find(s string) int {
	return slices.IndexFunc(r.items, func(it inputItem) bool {
		return it.Type == "message" && strings.Contains(it.text(), s)
	})
}

// sessionInfo is a session as list_sessions gives it.
type sessionInfo = rig.Session

func listSessions(t *testing.T, db string) []sessionInfo {
	t.Helper()
	return rig.Sessions(t, weftBinary(t), db)
}

// find is the index in the session's effective thread of the first
// message holding text, and its ID.
func find(t *testing.T, db, sid, text string) (int, string) {
	t.Helper()
	var res struct {
		Matches []struct {
			Index int    `json:"index"`
			ID    string `json:"id"`
		} `json:"matches"`
	}
	weftCall(t, db, "search_session_history", map[string]any{"session_id": sid, "query": text}, &res)
	if len(res.Matches) == 0 {
		t.Fatalf("session %s has no message holding %q", sid, text)
	}
	return res.Matches[0].Index, res.Matches[0].ID
}

// answered waits until the one session's last stored message is the
// answer text: weft stores an answer once it has relayed it.
func answered(t *testing.T, db, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		sessions := listSessions(t, db)
		if len(sessions) != 1 {
			t.Fatalf("%d sessions, want one: %+v", len(sessions), sessions)
		}
		n := sessions[0].MessageCount
		if _, id := find(t, db, sessions[0].SessionID, text); id == fmt.Sprintf("m%d", n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session's last message (of %d) is not the answer %q", n, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Codex CLI, through weft's context proxy, against the stand-in: a turn
// with a command run and its output, a second turn that resumes the
// session, both stored as one session; then the operator digests the
// first turn with weft call, and the next turn's request at the stand-in
// carries the summary in place of the turn, every other item as Codex
// sent it.
func TestCodexThroughWeft(t *testing.T) {
	bin := needCodex(t)
	dir := logsDir(t)
	apiLog, err := os.Create(filepath.Join(dir, "responses-api.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer apiLog.Close()
	up := &standIn{rig.Recorder{Log: apiLog}}
	api := httptest.NewServer(up)
	defer api.Close()
	guard := &rig.OfflineGuard{}
	proxy := httptest.NewServer(guard)
	defer proxy.Close()
	db := filepath.Join(dir, "weft.db")
	c := &codexRig{bin: bin, dir: dir, home: filepath.Join(dir, "home"), work: filepath.Join(dir, "work"), guard: guard, guardURL: proxy.URL}
	for _, d := range []string{filepath.Join(c.home, ".codex"), c.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.weft, _ = rig.Serve(t, weftBinary(t), dir, db, "", "--upstream-openai", api.URL+"/v1")

	// Turn 1: the stand-in asks for the command, Codex runs it and sends
	// its output back: two requests, one session.
	first := c.run(t, "turn1", firstPrompt)
	if first.threadID == "" || !slices.Contains(first.messages, ranText) {
		t.Fatalf("turn 1: thread %q, messages %q (want %q)", first.threadID, first.messages, ranText)
	}
	got := up.Exchanges()
	if len(got) != 2 {
		t.Fatalf("the stand-in got %d requests in turn 1, want 2 (the prompt, the command's output)", len(got))
	}
	for _, ex := range got {
		if ex.Path != "/v1/responses" || ex.Headers.Get("Authorization") != "Bearer x" {
			t.Errorf("the stand-in got %s %s, Authorization %q", ex.Method, ex.Path, ex.Headers.Get("Authorization"))
		}
	}
	out := readRequest(t, got[1])
	last := out.items[len(out.items)-1]
	if last.Type != "function_call_output" || !strings.Contains(string(last.Output), "weft-codex-check") {
		t.Errorf("turn 1 sent the command's output as %s", out.input[len(out.input)-1])
	}
	// The reasoning came back as the stand-in wrote it, through weft.
	if !slices.ContainsFunc(out.items, func(it inputItem) bool {
		return it.Type == "reasoning" && it.EncryptedContent == "gAAAAB-standin-opaque"
	}) {
		t.Error("the reasoning item's encrypted content did not come back")
	}

	// weft stored the answer itself (Codex hangs up once the response is
	// completed, and sends the answer back only with its next turn).
	answered(t, db, ranText)

	// Turn 2 resumes the session: weft recognises it.
	second := c.run(t, "turn2", "resume", first.threadID, secondPrompt)
	if len(second.messages) == 0 || !strings.HasPrefix(second.messages[len(second.messages)-1], notedText) {
		t.Fatalf("turn 2: messages %q", second.messages)
	}
	got = up.Exchanges()
	before := readRequest(t, got[len(got)-1])
	sessions := listSessions(t, db)
	if len(sessions) != 1 || sessions[0].Source != "proxy" || sessions[0].Proxy == nil || sessions[0].Proxy.Requests != 3 {
		t.Fatalf("after two turns, sessions %+v", sessions)
	}
	sid := sessions[0].SessionID
	if sessions[0].Title != firstPrompt {
		t.Errorf("the session's title is %q, want the first prompt", sessions[0].Title)
	}

	// The operator digests turn 1, from its prompt to its answer.
	start, _ := find(t, db, sid, firstPrompt)
	end, _ := find(t, db, sid, ranText)
	var dg struct {
		OperationID string `json:"operation_id"`
	}
	weftCall(t, db, "digest_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "summary": summary}, &dg)

	// Turn 3: the request carries the summary in place of turn 1.
	third := c.run(t, "turn3", "resume", first.threadID, thirdPrompt)
	if len(third.messages) == 0 {
		t.Fatalf("turn 3: no answer: %s", third.stdout)
	}
	got = up.Exchanges()
	after := readRequest(t, got[len(got)-1])
	at := slices.IndexFunc(after.items, func(it inputItem) bool {
		return it.Type == "message" && it.Role == "developer" && it.text() == summary
	})
	if at < 0 {
		t.Fatalf("turn 3's request does not carry the summary as a developer message:\n%s", after.fields["input"])
	}
	if after.find(firstPrompt) >= 0 || after.find(ranText) >= 0 || slices.ContainsFunc(after.items, func(it inputItem) bool {
		return it.Type == "function_call" || it.Type == "function_call_output" || it.Type == "reasoning"
	}) {
		t.Errorf("turn 3's request still holds turn 1:\n%s", after.fields["input"])
	}
	if after.find(secondPrompt) < 0 || after.find(thirdPrompt) < 0 {
		t.Errorf("turn 3's request lost what came after the digest:\n%s", after.fields["input"])
	}
	// What came before the digest is as Codex sent it in turn 2, item
	// for item; and every other field of the request is Codex's own.
	if i := before.find(firstPrompt); i != at {
		t.Errorf("the summary is item %d, where turn 1 began (%d)", at, i)
	}
	for i := 0; i < at && i < len(before.input); i++ {
		if !bytes.Equal(compact(t, before.input[i]), compact(t, after.input[i])) {
			t.Errorf("item %d changed: %s\nthen %s", i, before.input[i], after.input[i])
		}
	}
	for _, name := range []string{"model", "instructions", "tools", "tool_choice", "store", "include", "reasoning", "stream"} {
		if !bytes.Equal(compact(t, before.fields[name]), compact(t, after.fields[name])) {
			t.Errorf("field %s differs from turn 2's: %s, then %s", name, before.fields[name], after.fields[name])
		}
	}
	answered(t, db, third.messages[len(third.messages)-1])
	if b, _ := os.ReadFile(filepath.Join(dir, "serve.log")); bytes.Contains(b, []byte("not stored")) || bytes.Contains(b, []byte("broke off")) {
		t.Errorf("weft's log says an answer was lost:\n%s", b)
	}
	sessions = listSessions(t, db)
	if len(sessions) != 1 || sessions[0].Proxy == nil || sessions[0].Proxy.SentTokens >= sessions[0].Proxy.RawTokens {
		t.Fatalf("after the digest, sessions %+v", sessions)
	}
	st := sessions[0].Proxy
	report := fmt.Sprintf("codex: %d requests through weft, one session of %d messages; after the digest of items %d-%d, the last request's thread: %d tokens as Codex sent it, %d sent upstream (%d saved)\n",
		len(got), sessions[0].MessageCount, start, end, st.RawTokens, st.SentTokens, st.RawTokens-st.SentTokens)
	t.Log(report)
	if root := os.Getenv(logsEnv); root != "" {
		os.WriteFile(filepath.Join(root, "report.txt"), []byte(report), 0o644)
	}
}

func compact(t *testing.T, raw []byte) []byte {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return b.Bytes()
}
