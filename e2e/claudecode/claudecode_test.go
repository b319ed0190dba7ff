package claudecode

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
	claudeEnv  = "WEFT_CLAUDE"         // the claude binary; unset skips the tests
	requireEnv = "WEFT_CLAUDE_REQUIRE" // set: a missing claude fails instead of skipping
	weftEnv    = "WEFT_BIN"            // a built weft; unset builds one
	logsEnv    = "WEFT_CLAUDE_LOGS"    // where the logs and the report go; unset: a temporary folder
	// teeEnv and teeArgvEnv make this test binary the stdio tee between
	// Claude Code and weft mcp (see TestMain).
	teeEnv     = "WEFT_CLAUDECODE_TEE"
	teeArgvEnv = "WEFT_CLAUDECODE_TEE_ARGV"
)

// claudeTimeout bounds one run of Claude Code: a run takes seconds, and a
// run that waits for something that never comes must fail, not hang CI.
const claudeTimeout = 90 * time.Second

func TestMain(m *testing.M) {
	if logPath := os.Getenv(teeEnv); logPath != "" {
		var argv []string
		if err := json.Unmarshal([]byte(os.Getenv(teeArgvEnv)), &argv); err != nil || len(argv) == 0 {
			fmt.Fprintf(os.Stderr, "tee: %s is not a JSON list of arguments: %v\n", teeArgvEnv, err)
			os.Exit(2)
		}
		os.Exit(teeStdio(argv, logPath))
	}
	code := m.Run()
	rig.Cleanup()
	os.Exit(code)
}

func needClaude(t *testing.T) string {
	t.Helper()
	return rig.Need(t, claudeEnv, os.Getenv(claudeEnv), requireEnv, os.Getenv(requireEnv) != "", ".ci/claude-code installs Claude Code and runs these tests")
}

// weftBinary is WEFT_BIN, or cmd/weft built once for the run.
func weftBinary(t *testing.T) string {
	t.Helper()
	return rig.Weft(t, os.Getenv(weftEnv))
}

// logsDir is where one test keeps its logs: under WEFT_CLAUDE_LOGS when
// set (CI keeps them for the report), else in a temporary folder.
func logsDir(t *testing.T) string {
	t.Helper()
	return rig.LogsDir(t, os.Getenv(logsEnv))
}

// weftRun runs weft with args and returns its stdout.
func weftRun(t *testing.T, args ...string) []byte {
	t.Helper()
	return rig.Run(t, weftBinary(t), args...)
}

// threadMessage is one message of interop/thread.json.
type threadMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	CreatedAt string `json:"created_at"`
}

// fixture is a prepared file: one session holding interop/thread.json's
// 24 messages.
type fixture struct {
	db       string
	session  string
	messages []threadMessage
	// firstFour is what weft call get_message_range gives for messages
	// 0-3: what Claude Code must hand its model for the same call.
	firstFour []byte
}

func prepare(t *testing.T) fixture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "interop", "thread.json"))
	if err != nil {
		t.Fatal(err)
	}
	var thread struct {
		Messages []threadMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &thread); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "base.db")
	sid := strings.TrimSpace(string(weftRun(t, "--db", db, "new", "claude code thread")))
	args, _ := json.Marshal(map[string]any{"session_id": sid, "messages": thread.Messages})
	weftRun(t, "--db", db, "call", "append_messages", string(args))
	// Claude Code's call gives no max_tokens, and weft fits the read to
	// it: 10,000 tokens (ops/mcpserver/clientcap.go).
	firstFour := weftRun(t, "--db", db, "call", "get_message_range", fmt.Sprintf(`{"session_id":%q,"start_idx":0,"end_idx":3,"max_tokens":10000}`, sid))
	return fixture{db: db, session: sid, messages: thread.Messages, firstFour: firstFour}
}

// copyTo copies the fixture's file to dir, for one run to change.
func (f fixture) copyTo(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(f.db)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "weft.db")
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return db
}

// weftUnderTest is weft as Claude Code's MCP server for one run: the
// server entry of Claude Code's --mcp-config, the log of what went
// between them, and weft's HTTP API for another client to edit through.
type weftUnderTest struct {
	db     string
	server map[string]any // the mcpServers entry
	wire   string         // the MCP log (wireLines)
	api    func() string  // weft's HTTP API base, once it is up
	token  string
	stop   func() // ends weft serve; nil for stdio, where Claude Code ends weft mcp
}

// release waits until no weft holds the file, so that what the test runs
// next reads it directly: weft serve is stopped; weft mcp ends when
// Claude Code closes its stdin, and takes its address file along.
func (w *weftUnderTest) release(t *testing.T) {
	t.Helper()
	if w.stop != nil {
		w.stop()
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(w.db + ".addr"); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("weft mcp still holds %s 10 s after Claude Code exited", w.db)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stdioWeft is weft mcp over stdio, through the tee that logs it.
func stdioWeft(t *testing.T, dir, db string) *weftUnderTest {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal([]string{weftBinary(t), "--db", db, "mcp"})
	w := &weftUnderTest{db: db, wire: filepath.Join(dir, "mcp.jsonl")}
	w.server = map[string]any{
		"type": "stdio", "command": self, "args": []string{},
		"env": map[string]string{teeEnv: w.wire, teeArgvEnv: string(argv)},
	}
	// weft mcp listens for other wefts and writes its MCP endpoint next
	// to the file; its HTTP API is beside it.
	w.api = func() string {
		b, _ := os.ReadFile(db + ".addr")
		return strings.TrimSuffix(strings.TrimSpace(string(b)), "/mcp")
	}
	return w
}

// httpWeft is weft serve with a token, behind the proxy that logs what
// passes between it and Claude Code.
func httpWeft(t *testing.T, dir, db string) *weftUnderTest {
	token := fmt.Sprintf("claude-code-%d", time.Now().UnixNano())
	base, stop := serveWeft(t, dir, db, token)
	wireFile, err := os.Create(filepath.Join(dir, "mcp.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(&loggingProxy{target: base + "/mcp", log: &wireLog{w: wireFile}})
	t.Cleanup(func() { proxy.Close(); wireFile.Close() })
	return &weftUnderTest{
		db:     db,
		server: map[string]any{"type": "http", "url": proxy.URL + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + token}},
		wire:   wireFile.Name(), api: func() string { return base }, token: token,
		stop: stop,
	}
}

// serveWeft is rig.Serve with this run's weft.
func serveWeft(t *testing.T, dir, db, token string, extra ...string) (string, func()) {
	t.Helper()
	return rig.Serve(t, weftBinary(t), dir, db, token, extra...)
}

// claudeRun is what one run of Claude Code left.
type claudeRun struct {
	output    claudeOutput
	stdout    []byte
	stderr    []byte
	err       error
	took      time.Duration
	exchanges []exchange
	results   []toolResult
	toolNames []string
	problems  []string
	wire      []wireLine
	debugLog  string // Claude Code's --debug-file
}

// claudeOutput is claude -p --output-format json's result.
type claudeOutput struct {
	Type     string `json:"type"`
	Subtype  string `json:"subtype"`
	IsError  bool   `json:"is_error"`
	Result   string `json:"result"`
	NumTurns int    `json:"num_turns"`
	// SessionID is Claude Code's session: what --resume takes.
	SessionID string `json:"session_id"`
}

// runClaude runs claude -p prompt with weft as its only MCP server, named
// weft, against a stand-in that asks for calls.
func runClaude(t *testing.T, dir string, w *weftUnderTest, prompt string, s *standIn) claudeRun {
	t.Helper()
	claude := needClaude(t)
	apiLog, err := os.Create(filepath.Join(dir, "messages-api.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer apiLog.Close()
	s.Log = apiLog
	api := httptest.NewServer(s)
	defer api.Close()

	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	for _, d := range []string{filepath.Join(home, ".claude"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// An empty global config: without one Claude Code logs an error as it
	// creates it, which would hide a real error in its debug log.
	if err := os.WriteFile(filepath.Join(home, ".claude", ".claude.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	guard := &rig.OfflineGuard{}
	proxy := httptest.NewServer(guard)
	defer proxy.Close()
	config, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"weft": w.server}})
	ctx, cancel := context.WithTimeout(context.Background(), claudeTimeout)
	defer cancel()
	args := []string{"-p", prompt,
		"--output-format", "json",
		"--mcp-config", string(config), "--strict-mcp-config",
		"--allowedTools", "mcp__weft",
		"--no-session-persistence",
		"--debug-file", filepath.Join(dir, "claude-debug.log"),
	}
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir = work
	cmd.Env = claudeEnviron(home, api.URL, proxy.URL)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	run := claudeRun{stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err, took: time.Since(start)}
	os.WriteFile(filepath.Join(dir, "claude.stdout"), run.stdout, 0o644)
	os.WriteFile(filepath.Join(dir, "claude.stderr"), run.stderr, 0o644)
	json.Unmarshal(bytes.TrimSpace(run.stdout), &run.output)
	run.exchanges, run.results, run.toolNames, run.problems = s.snapshot()
	run.wire = readWire(t, w.wire)
	run.debugLog = filepath.Join(dir, "claude-debug.log")
	if reached := guard.Seen(); len(reached) > 0 {
		run.fail(t, dir, "Claude Code reached beyond this machine (through the proxy that refuses everything): %s", strings.Join(reached, "; "))
	}
	return run
}

// claudeEnviron is the whole environment Claude Code runs with: a home
// of its own, the stand-in as the API, everything that would reach out to
// the network (telemetry, error reports, update checks, feature flags) or
// wait for a person (login, trust) turned off, and guard as the proxy for
// any address but loopback.
func claudeEnviron(home, apiURL, guard string) []string {
	env := []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + apiURL,
		"ANTHROPIC_API_KEY=stand-in",
		// MCP tools are sent to the model directly, not behind ToolSearch
		// (the default only for Anthropic's own API host).
		"ENABLE_TOOL_SEARCH=false",
		// Telemetry, error reports, update checks, release notes, model
		// capabilities and feature flags: all of it is traffic the run
		// does not need (this one variable covers the next four).
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_BUG_COMMAND=1",
		// Generous limits for a loaded CI machine, below claudeTimeout.
		"MCP_TIMEOUT=30000",
		"MCP_TOOL_TIMEOUT=30000",
		"NO_COLOR=1",
	}
	env = append(env, rig.ProxyEnv(guard)...)
	for _, k := range []string{"PATH", "TMPDIR", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func readWire(t *testing.T, path string) []wireLine {
	t.Helper()
	wire, err := parseWire(path)
	if err != nil {
		t.Fatal(err)
	}
	return wire
}

// parseWire reads an MCP log; a line being written as it reads is left
// for the next read.
func parseWire(path string) ([]wireLine, error) {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var out []wireLine
	for line := range bytes.Lines(b) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break
		}
		var l wireLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("%s: %v: %s", path, err, line)
		}
		out = append(out, l)
	}
	return out, nil
}

// rpc is a JSON-RPC message as far as the checks read it.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// messages are the JSON-RPC messages one side sent, batches unpacked.
func messages(wire []wireLine, from string) []rpc {
	var out []rpc
	for _, l := range wire {
		if l.From != from || len(l.Msg) == 0 {
			continue
		}
		var batch []rpc
		if json.Unmarshal(l.Msg, &batch) == nil {
			out = append(out, batch...)
			continue
		}
		var m rpc
		if json.Unmarshal(l.Msg, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// methods lists the distinct methods one side sent, in first-sent order.
func methods(wire []wireLine, from string) []string {
	var out []string
	for _, m := range messages(wire, from) {
		if m.Method != "" && !slices.Contains(out, m.Method) {
			out = append(out, m.Method)
		}
	}
	return out
}

// fail reports a failed check with what the run saw, so a red CI says
// why without digging.
func (r claudeRun) fail(t *testing.T, dir, format string, args ...any) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, format, args...)
	fmt.Fprintf(&b, "\n--- claude exited: %v after %s; its result: %+v (all of it in claude.stdout)", r.err, r.took.Round(time.Millisecond), r.output)
	if s := bytes.TrimSpace(r.stderr); len(s) > 0 {
		fmt.Fprintf(&b, "\n--- claude stderr:\n%s", s)
	}
	fmt.Fprintf(&b, "\n--- the stand-in got %d requests:", len(r.exchanges))
	for _, ex := range r.exchanges {
		fmt.Fprintf(&b, "\n    %s %s -> %d %s", ex.Method, ex.Path, ex.Status, ex.Answered)
	}
	for _, p := range r.problems {
		fmt.Fprintf(&b, "\n    problem: %s", p)
	}
	fmt.Fprintf(&b, "\n--- tool results: %d", len(r.results))
	for _, res := range r.results {
		fmt.Fprintf(&b, "\n    %s error=%v: %.400s", res.tool, res.isError, res.text)
	}
	fmt.Fprintf(&b, "\n--- MCP: the client sent %v; the server sent %v", methods(r.wire, "client"), methods(r.wire, "server"))
	fmt.Fprintf(&b, "\n--- logs in %s", dir)
	t.Fatal(b.String())
}
