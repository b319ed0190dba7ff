package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// weft serve puts the context proxy in front of the upstream its flags
// name: a request to weft's /v1/messages reaches that upstream, and its
// answer comes back.
func TestServeProxiesToItsUpstream(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			io.WriteString(w, `{"type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hello"}]}`)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/responses") {
			io.WriteString(w, `{"object":"response","status":"completed","model":"m","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}]}`)
			return
		}
		io.WriteString(w, `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`)
	}))
	defer up.Close()
	db, _ := seededDB(t)
	cmd, url, log := startServe(t, db, "--addr", "127.0.0.1:0", "--upstream-anthropic", up.URL, "--upstream-openai", up.URL+"/openai/v1")
	base := strings.TrimSuffix(url, "/mcp")
	for path, body := range map[string]string{
		"/v1/messages":         `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		"/v1/chat/completions": `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		"/v1/responses":        `{"model":"m","input":[{"role":"user","content":"hi"}]}`,
	} {
		resp, b := postJSON(t, base+path, []byte(body))
		if resp.StatusCode != 200 || !strings.Contains(string(b), "hello") || resp.Header.Get("X-Weft-Session") == "" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	mu.Lock()
	got := strings.Join(paths, " ")
	mu.Unlock()
	if !strings.Contains(got, "/v1/messages") || !strings.Contains(got, "/openai/v1/chat/completions") || !strings.Contains(got, "/openai/v1/responses") {
		t.Errorf("the upstream got %s", got)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("weft serve: %v\n%s", err, log.String())
	}
}

func TestUpstreamMustBeAURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"ftp://example.com", "api.anthropic.com", "https://x.example/v1?key=1"} {
		_, errOut, code, _ := runCLI(t.TempDir()+"/w.db", "serve", "--upstream-anthropic", bad)
		if code != 2 || !strings.Contains(errOut, "upstream") {
			t.Errorf("--upstream-anthropic %s: exit %d, %s", bad, code, errOut)
		}
	}
}
