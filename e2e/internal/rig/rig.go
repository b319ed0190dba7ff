// Package rig is what the tests that drive real clients against weft
// (e2e/claudecode, e2e/codex) share: the client they need or skip
// without, weft built once, a folder for a test's logs, weft serve on a
// free loopback port, and the guard that keeps a client offline. It
// reads no environment: the tests pass in what theirs says.
package rig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Need is the client a test drives: val, the path the environment
// variable env names. Unset, the test skips, or fails when required
// (requireEnv is set, as the CI script that installs the client sets
// it); how says what installs the client and runs the test. A path that
// is not there fails the test.
func Need(t testing.TB, env, val, requireEnv string, required bool, how string) string {
	t.Helper()
	if val == "" {
		if required {
			t.Fatalf("%s is not set, and %s asks for this test to run: %s", env, requireEnv, how)
		}
		t.Skipf("skipping: %s is not set (%s)", env, how)
	}
	if _, err := os.Stat(val); err != nil {
		t.Fatalf("%s=%s: %v", env, val, err)
	}
	return val
}

var (
	buildOnce sync.Once
	buildDir  string
	built     string
	buildErr  error
)

// Weft is the weft binary the tests run: prebuilt when it is not empty
// (CI builds one for all its checks), else cmd/weft built once for the
// test binary's run (Cleanup removes it), without the test's GOFLAGS
// (no -race: the binary is the program under test, not the test).
func Weft(t testing.TB, prebuilt string) string {
	t.Helper()
	if prebuilt != "" {
		return prebuilt
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "weft-e2e-bin-")
		if buildErr != nil {
			return
		}
		built = filepath.Join(buildDir, "weft")
		// go test puts its toolchain's bin first on the PATH: this "go" is
		// the one running the tests.
		cmd := exec.CommandContext(t.Context(), "go", "build", "-o", built, "weft/cmd/weft")
		cmd.Env = append(cmd.Environ(), "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build weft/cmd/weft: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// Cleanup removes the weft Weft built, if it built one: TestMain calls
// it once the tests have run.
func Cleanup() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// Run runs weft (the binary) with args and returns what it wrote on
// stdout; a run that fails fails the test, saying what weft wrote on
// stderr.
func Run(t testing.TB, weft string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), weft, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("weft %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// Session is a session as list_sessions gives it while weft runs, with
// what the context proxy took for it.
type Session struct {
	SessionID       string `json:"session_id"`
	Title           string `json:"title"`
	MessageCount    int    `json:"message_count"`
	Tokens          int    `json:"tokens"`
	EffectiveTokens int    `json:"effective_tokens"`
	OpCount         int    `json:"op_count"`
	Source          string `json:"source"`
	// ForkOf is, for a fork, the session it came from and where.
	ForkOf *struct {
		SessionID string `json:"session_id"`
		At        string `json:"at"`
		Index     int    `json:"index"`
	} `json:"fork_of"`
	Proxy *struct {
		Requests   int `json:"requests"`
		RawTokens  int `json:"raw_tokens"`
		SentTokens int `json:"sent_tokens"`
	} `json:"proxy"`
}

// Sessions lists db's sessions with weft call list_sessions, which goes
// through the weft serve that holds the file.
func Sessions(t testing.TB, weft, db string) []Session {
	t.Helper()
	var out struct {
		Sessions []Session `json:"sessions"`
	}
	b := Run(t, weft, "--db", db, "call", "list_sessions")
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("list_sessions: %v: %s", err, b)
	}
	return out.Sessions
}

// LogsDir is where one test keeps its logs: a folder named after the
// test under root when root is set (CI keeps them for the report), else
// a temporary folder.
func LogsDir(t testing.TB, root string) string {
	t.Helper()
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// FreePort finds a free loopback port.
func FreePort(t testing.TB) int {
	t.Helper()
	var lc net.ListenConfig
	l, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// Serve starts weft serve (the binary weft) on db on a free loopback
// port, with token when not empty and the flags in extra, logging to
// dir/serve.log, and waits until it is healthy. It returns the
// listener's base URL and a stop that ends it (also run when the test
// ends).
func Serve(t testing.TB, weft, dir, db, token string, extra ...string) (string, func()) {
	t.Helper()
	port := FreePort(t)
	serveLog, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--db", db, "serve", "--addr", fmt.Sprintf("127.0.0.1:%d", port)}
	if token != "" {
		args = append(args, "--token", token)
	}
	// Not the test's context: stop, at cleanup, interrupts weft and waits.
	cmd := exec.CommandContext(context.Background(), weft, append(args, extra...)...)
	cmd.Stdout, cmd.Stderr = serveLog, serveLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			_ = serveLog.Close()
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/healthz", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(serveLog.Name())
			t.Fatalf("weft serve is not healthy after 15 s (%v)\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return base, stop
}

// OfflineGuard is the proxy a client is given for everything but
// loopback: it refuses every request and remembers it, so a run that
// tries to reach the internet (telemetry, update checks, feature flags,
// the provider's own API) fails and names what it tried, instead of
// depending on whether this machine happens to have a network.
type OfflineGuard struct {
	mu      sync.Mutex
	reached []string
}

// ServeHTTP refuses the request and remembers it.
func (g *OfflineGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.reached = append(g.reached, r.Method+" "+r.Host+r.URL.Path)
	g.mu.Unlock()
	http.Error(w, "the e2e client tests run offline", http.StatusForbidden)
}

// Seen is every request the guard refused so far, as METHOD HOST/PATH.
func (g *OfflineGuard) Seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.reached)
}

// ProxyEnv is the environment that sends a client's traffic for any
// address but loopback to the guard listening at url, in both the upper
// and the lower case spellings clients read.
func ProxyEnv(url string) []string {
	return []string{
		"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "ALL_PROXY=" + url,
		"http_proxy=" + url, "https_proxy=" + url, "all_proxy=" + url,
		"NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1",
	}
}
