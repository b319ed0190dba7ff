package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"weft/ops/reads"
)

func TestServe(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	cmd, url, log := startServe(t, db, "--addr", "127.0.0.1:0", "--token", "serve-token")
	base := strings.TrimSuffix(url, "/mcp")

	get := func(path, token string) (int, []byte) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, []byte(b.String())
	}
	if status, _ := get("/healthz", ""); status != 401 {
		t.Errorf("healthz without the token: %d", status)
	}
	status, body := get("/healthz", "serve-token")
	var h struct {
		OK       bool `json:"ok"`
		Sessions int  `json:"sessions"`
	}
	if err := json.Unmarshal(body, &h); status != 200 || err != nil || !h.OK || h.Sessions != 1 {
		t.Errorf("healthz: %d %s", status, body)
	}

	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/api/get_message_range", strings.NewReader(`{"start_idx":0,"end_idx":19}`))
	req.Header.Set("Authorization", "Bearer serve-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var res reads.MessageRangeResult
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != 200 || res.SessionID != sid || len(res.Messages) != 20 {
		t.Errorf("get_message_range: %d, %d messages", resp.StatusCode, len(res.Messages))
	}

	cmd.Process.Signal(syscall.SIGINT)
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("weft serve on SIGINT: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "weft stopped") {
		t.Errorf("no stop in the log:\n%s", log.String())
	}
	if out := cmd.Stdout.(*syncBuffer).String(); out != "" {
		t.Errorf("weft serve wrote to stdout: %q", out)
	}
	if _, err := os.Stat(db + ".addr"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("address file left after weft serve stopped")
	}
}

func TestServeRefusals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "weft.db")
	t.Setenv("WEFT_TOKEN", "")
	tests := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, 1, "needs a bearer token: 0.0.0.0:0 can be reached from other machines; give a token, or listen on 127.0.0.1 (--token T or WEFT_TOKEN)"},
		{[]string{"serve", "--addr", "nonsense"}, 1, `"nonsense" is not host:port`},
		{[]string{"serve", "extra"}, 2, "serve takes no arguments"},
		{[]string{"serve", "--port", "1"}, 2, "unknown flag: --port"},
		{[]string{"mcp", "extra"}, 2, "mcp takes no arguments"},
	}
	for _, tt := range tests {
		_, code, err := weft(t, db, tt.args...)
		if code != tt.code || err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("weft %v: exit %d (%v), want %d saying %q", tt.args, code, err, tt.code, tt.says)
		}
	}
	if _, err := os.Stat(db + ".addr"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused serve left an address file")
	}
}

// A token from the environment is the token.
func TestServeTokenFromEnv(t *testing.T) {
	t.Parallel()
	db, _ := seededDB(t)
	cmd, url, log := startServeEnv(t, db, []string{"WEFT_TOKEN=env-token"}, "--addr", "0.0.0.0:0")
	req, _ := http.NewRequestWithContext(t.Context(), "GET", strings.TrimSuffix(url, "/mcp")+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer env-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz with $WEFT_TOKEN: %d", resp.StatusCode)
	}
	if !strings.Contains(log.String(), "token=true") {
		t.Errorf("the log does not say a token is required:\n%s", log.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("exit: %v", err)
	}
}
