package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/demo"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
	"weft/store/boltstore"
)

// TestMain lets tests run the real weft: the test binary started with
// WEFT_TEST_MAIN=1 is weft itself (main, with the arguments given), so
// stdio and signals are exercised without building a binary.
func TestMain(m *testing.M) {
	if os.Getenv("WEFT_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// weftProcess returns a command that runs weft with args.
func weftProcess(args ...string) *exec.Cmd {
	// The process outlives the test's context: its tests stop it themselves.
	cmd := exec.CommandContext(context.Background(), os.Args[0], args...)
	// Under -race the runtime waits a second at exit unless told not to.
	env := []string{"WEFT_TEST_MAIN=1", "GORACE=atexit_sleep_ms=0 " + os.Getenv("GORACE")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEFT_") && !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

// seededDB writes the demo thread to a new file and returns its path and
// the session's ID.
func seededDB(t *testing.T) (string, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "weft.db")
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sid, err := demo.Seed(context.Background(), ops.New(st))
	if err != nil {
		t.Fatal(err)
	}
	return db, sid
}

// stdioClient launches weft mcp on db as an MCP client named name would.
func stdioClient(t *testing.T, db, name string, stderr io.Writer) *mcp.ClientSession {
	t.Helper()
	cmd := weftProcess("--db", db, "mcp")
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("weft mcp: %v (stderr: %v)", err, stderr)
	}
	return cs
}

func toolText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.(*mcp.TextContent).Text)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, b.String())
	}
	return b.String()
}

func TestMCPStdio(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	var stderr bytes.Buffer
	cs := stdioClient(t, db, "stdio-agent", &stderr)
	ctx := context.Background()

	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Tools) != len(tools.All()) {
		t.Errorf("weft mcp lists %d tools, the registry has %d", len(listed.Tools), len(tools.All()))
	}
	var op ops.OpResult
	if err := json.Unmarshal([]byte(toolText(t, cs, "snip_messages", map[string]any{"start_idx": 3, "end_idx": 4})), &op); err != nil || op.OperationID == "" {
		t.Fatalf("snip over stdio: %v", err)
	}
	var list reads.ListOperationsResult
	json.Unmarshal([]byte(toolText(t, cs, "list_operations", map[string]any{"session_id": sid})), &list)
	if last := list.Operations[len(list.Operations)-1]; last.OperationID != op.OperationID || last.Author != "stdio-agent" {
		t.Errorf("last operation %+v, want %s by stdio-agent", last, op.OperationID)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weft://sessions/" + sid}); err != nil {
		t.Errorf("resources/read over stdio: %v", err)
	}
	// It listens for other wefts while it holds the file.
	if b, err := os.ReadFile(db + ".addr"); err != nil || !strings.HasPrefix(string(b), "http://127.0.0.1:") {
		t.Errorf("weft mcp left no address for other wefts: %q %v", b, err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("weft mcp did not exit cleanly: %v (stderr: %s)", err, stderr.String())
	}
	if _, err := os.Stat(db + ".addr"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("address file left after weft mcp exited")
	}
	if stderr.Len() > 0 {
		t.Errorf("weft mcp wrote to stderr: %s", stderr.String())
	}
}

// postJSON posts body to url as JSON, its header set by the pairs in
// header, and returns the answer with its body read.
func postJSON(tb testing.TB, url string, body []byte, header ...string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

// startServe runs weft serve on db and returns it with its MCP URL, read
// from its log.
// The log so far and what follows is the third result; stdout must stay
// empty and is checked by the caller through cmd.Stdout.
func startServe(t testing.TB, db string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	return startServeEnv(t, db, nil, args...)
}

// startServeEnv is startServe with more environment.
func startServeEnv(t testing.TB, db string, env []string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := weftProcess(append([]string{"--db", db, "serve"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout = &syncBuffer{}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := bufio.NewScanner(pipe)
	url := regexp.MustCompile(`mcp=(http://\S+)`)
	var log strings.Builder
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if m := url.FindStringSubmatch(lines.Text()); m != nil {
			// Keep reading the log so the server never blocks on it.
			rest := &syncBuffer{}
			rest.Write([]byte(log.String()))
			go io.Copy(rest, pipe)
			return cmd, m[1], rest
		}
	}
	t.Fatalf("weft serve did not start:\n%s", log.String())
	return nil, "", nil
}

func TestMCPRelaysToRunningWeft(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	serve, url, _ := startServe(t, db, "--addr", "127.0.0.1:0")
	if got := strings.TrimSpace(readFile(t, db+".addr")); got != url {
		t.Fatalf("address file %q, log %q", got, url)
	}

	var stderr bytes.Buffer
	cs := stdioClient(t, db, "relayed-agent", &stderr)
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(listed.Tools) != len(tools.All()) {
		t.Fatalf("relayed tools/list: %v", err)
	}
	var op ops.OpResult
	json.Unmarshal([]byte(toolText(t, cs, "digest_messages", map[string]any{"start_idx": 5, "end_idx": 9, "summary": "relayed"})), &op)
	if op.OperationID == "" {
		t.Fatal("no operation from the relayed digest")
	}
	if err := cs.Close(); err != nil {
		t.Errorf("relay exit: %v (%s)", err, stderr.String())
	}

	// The edit landed in the serving weft, by the stdio client's name.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, strings.TrimSuffix(url, "/mcp")+"/api/list_operations", strings.NewReader(`{"session_id":"`+sid+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list reads.ListOperationsResult
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if last := list.Operations[len(list.Operations)-1]; last.OperationID != op.OperationID || last.Author != "relayed-agent" {
		t.Errorf("last operation %+v", last)
	}

	// SIGTERM stops weft serve cleanly, and it takes its address along.
	serve.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, serve); err != nil {
		t.Errorf("weft serve on SIGTERM: %v", err)
	}
	if _, err := os.Stat(db + ".addr"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("address file left after weft serve stopped")
	}
}

func TestMCPHeldWithoutListener(t *testing.T) {
	t.Parallel()
	db, _ := seededDB(t)
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// In-process, with the lock wait of runHeld: it refuses before it
	// serves anything.
	r := runHeld(db, "mcp")
	if r.code != 1 {
		t.Fatalf("weft mcp on a held file without a listener: %+v", r)
	}
	if !strings.Contains(r.errOut, "cannot relay") || r.out != "" {
		t.Errorf("stderr %q, stdout %q", r.errOut, r.out)
	}
}

func TestListenConfig(t *testing.T) {
	db := filepath.Join(t.TempDir(), "weft.db")
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := ops.New(st)
	if l, err := (listenConfig{off: true}).start(svc); l != nil || err != nil {
		t.Errorf("--no-mcp started a listener: %v %v", l, err)
	}
	t.Setenv("WEFT_TOKEN", "")
	if _, err := (listenConfig{addr: "0.0.0.0:0"}).start(svc); err == nil || !strings.Contains(err.Error(), "--no-mcp") || !strings.Contains(err.Error(), "WEFT_TOKEN") {
		t.Errorf("non-loopback without a token: %v", err)
	}
	l, err := (listenConfig{addr: "127.0.0.1:0"}).start(svc)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.HasSuffix(l.Addr(), "/mcp") || l.Agents() != 0 || strings.TrimSpace(readFile(t, db+".addr")) != l.Addr() {
		t.Errorf("listener %s with %d agents", l.Addr(), l.Agents())
	}
}

// syncBuffer is a buffer a process's output can be copied into while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitExit waits for a process to end, failing the test if it does not
// within a generous bound.
func waitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the process did not exit")
		return nil
	}
}

// weft call on a file a running weft holds asks that weft, as DESIGN.md's
// storage section says, with the same results and the same refusals.
func TestCallRelaysToRunningWeft(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	serve, _, _ := startServe(t, db, "--addr", "127.0.0.1:0")
	call := func(args ...string) (string, string, error) {
		cmd := weftProcess(append([]string{"--db", db, "call"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, errOut, err := call("snip_messages", "start_idx=2", "end_idx=3", "session_id="+sid)
	var op ops.OpResult
	if err != nil || json.Unmarshal([]byte(out), &op) != nil || op.OperationID == "" {
		t.Fatalf("relayed call: %v\n%s\n%s", err, out, errOut)
	}
	out, _, err = call("list_operations", "session_id="+sid)
	var list reads.ListOperationsResult
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || list.Operations[len(list.Operations)-1].OperationID != op.OperationID {
		t.Fatalf("list_operations through the running weft: %v\n%s", err, out)
	}
	// A refusal keeps its message and its exit status.
	_, errOut, err = call("snip_messages", "start_idx=900", "end_idx=901", "session_id="+sid)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(errOut, "past the end") {
		t.Fatalf("refused relayed call: %v %q", err, errOut)
	}
	serve.Process.Signal(syscall.SIGTERM)
	waitExit(t, serve)
}
