package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/e2e/internal/rig"
)

// clientTap stands between a client and weft: it passes everything on
// (a stream flushed as it comes) and keeps each request as the client
// sent it, to set beside what reached the stand-in behind weft.
type clientTap struct {
	url   string
	proxy *httputil.ReverseProxy
	log   io.Writer

	mu   sync.Mutex
	sent []exchange
}

func newClientTap(t *testing.T, target, logPath string) *clientTap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	tap := &clientTap{log: f}
	// Rewrite, not Director: the request goes on with the client's
	// headers only (no X-Forwarded-For of the tap's own).
	tap.proxy = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, FlushInterval: -1}
	srv := httptest.NewServer(tap)
	tap.url = srv.URL
	t.Cleanup(func() { srv.Close(); f.Close() })
	return tap
}

func (c *clientTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	ex := exchange{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Headers: r.Header.Clone()}
	ex.Headers.Del("X-Api-Key")
	ex.Headers.Del("Authorization")
	if json.Valid(body) {
		ex.Request = body
	}
	c.mu.Lock()
	c.sent = append(c.sent, ex)
	b, _ := json.Marshal(ex)
	c.log.Write(append(b, '\n'))
	c.mu.Unlock()
	c.proxy.ServeHTTP(w, r)
}

// requests are the requests the tap passed on to path so far.
func (c *clientTap) requests(path string) []exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []exchange
	for _, ex := range c.sent {
		if ex.Path == path {
			out = append(out, ex)
		}
	}
	return out
}

// loopRun is what one run of claude -p through weft left.
type loopRun struct {
	output claudeOutput
	stdout []byte
	stderr []byte
	err    error
	took   time.Duration
}

// loopClaude is Claude Code as a user runs it with weft in the loop:
// ANTHROPIC_BASE_URL at weft, a home of its own kept across runs (its
// transcripts are what --resume reads; dir/NAME), in a project folder
// (work), offline but for loopback; its logs go to dir, named after its
// home.
type loopClaude struct {
	bin, dir, home, work, baseURL string
	guard                         *rig.OfflineGuard
	runs                          int
}

func newLoopClaude(t *testing.T, dir, name, baseURL string) *loopClaude {
	t.Helper()
	// The project folder is a temporary one, outside any git repository
	// (the logs may be inside one): Claude Code says more of a project
	// in git (its status), which would make what it sends depend on
	// where the test runs.
	c := &loopClaude{bin: needClaude(t), dir: dir, home: filepath.Join(dir, name), work: filepath.Join(t.TempDir(), "work"), baseURL: baseURL, guard: &rig.OfflineGuard{}}
	for _, d := range []string{filepath.Join(c.home, ".claude"), c.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(c.home, ".claude", ".claude.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// run runs claude -p prompt with flags in c.work, its output as JSON.
func (c *loopClaude) run(t *testing.T, prompt string, flags ...string) loopRun {
	t.Helper()
	c.runs++
	guard := httptest.NewServer(c.guard)
	defer guard.Close()
	ctx, cancel := context.WithTimeout(context.Background(), claudeTimeout)
	defer cancel()
	name := filepath.Join(c.dir, fmt.Sprintf("%s-claude-%d", filepath.Base(c.home), c.runs))
	all := append([]string{"-p", prompt, "--output-format", "json", "--debug-file", name + "-debug.log"}, flags...)
	cmd := exec.CommandContext(ctx, c.bin, all...)
	cmd.Dir = c.work
	cmd.Env = claudeEnviron(c.home, c.baseURL, guard.URL)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := loopRun{stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err, took: time.Since(start)}
	os.WriteFile(name+".stdout", r.stdout, 0o644)
	os.WriteFile(name+".stderr", r.stderr, 0o644)
	json.Unmarshal(bytes.TrimSpace(r.stdout), &r.output)
	if reached := c.guard.Seen(); len(reached) > 0 {
		t.Fatalf("Claude Code reached beyond this machine: %s", strings.Join(reached, "; "))
	}
	if r.err != nil || r.output.IsError {
		t.Fatalf("claude %s: %v, result %+v\nstderr: %s\nstdout: %s", strings.Join(all, " "), r.err, r.output, r.stderr, r.stdout)
	}
	return r
}

// lastUserText is the user's last prompt in a Messages API request.
func lastUserText(req messagesRequest) string {
	_, text := lastPrompt(req)
	return text
}

// freshLogsDir is logsDir emptied: a run starts from nothing, even where
// an earlier run left its files.
func freshLogsDir(t *testing.T) string {
	t.Helper()
	dir := logsDir(t)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	return dir
}
