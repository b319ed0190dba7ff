package mcpserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/relay"
	"weft/ops/tools"
)

// TestReadsFitTheCallingClient: a read with its defaults fits what the
// client that called it passes to its model whole, counted in bytes of
// the tool result as the client receives it: Claude Code passes about
// 50 kB and keeps a 2 kB preview of more, Codex keeps about 12 kB and
// cuts the middle. An explicit max_tokens still wins, and
// MaxResultTokens sets the default.
func TestReadsFitTheCallingClient(t *testing.T) {
	t.Parallel()
	svc, sid := toolHeavy(t)
	// assemble_context is fitted too, though it is no read (it uses
	// pending preferences once, so it cannot be called again to fit).
	calls := append(heavyReads(sid),
		heavyRead{name: "assemble_context", tool: "assemble_context", args: map[string]any{}},
		heavyRead{name: "assemble_context anthropic", tool: "assemble_context", args: map[string]any{"format": "anthropic"}},
	)
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0"})
	for _, c := range []struct {
		client   string
		opts     Options
		relayed  bool // weft mcp on a file another weft holds
		maxBytes int  // what the client passes whole, with a tenth to spare
		budget   int  // max_tokens the results say, 0: any
	}{
		{client: "claude-code", maxBytes: 45_000},
		{client: "codex-mcp-client", maxBytes: 10_800},
		{client: "codex", maxBytes: 10_800},
		{client: "codex", relayed: true, maxBytes: 10_800},
		{client: "measure", opts: Options{MaxResultTokens: 3000}, budget: 3000},
	} {
		var backend tools.Backend = tools.Local{Service: svc}
		if c.relayed {
			r, err := relay.Dial(l.Addr(), relay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			backend, c.client = r, c.client+" (relayed)"
		}
		cs := connect(t, New(backend, c.opts), strings.TrimSuffix(c.client, " (relayed)"), nil)
		for _, r := range calls {
			if r.tool == "" {
				continue
			}
			res := callOK(t, cs, r.tool, heavyArgs(r, sid), nil)
			txt := text(res)
			sc, _ := json.Marshal(res.StructuredContent)
			var fit struct {
				MaxTokens int  `json:"max_tokens"`
				Complete  bool `json:"complete"`
			}
			_ = json.Unmarshal([]byte(txt), &fit)
			if c.maxBytes > 0 && (len(txt) > c.maxBytes || len(sc) > c.maxBytes) {
				t.Errorf("%s, %s: %d bytes of text, %d structured, over the %d it passes whole (max_tokens %d)", c.client, r.name, len(txt), len(sc), c.maxBytes, fit.MaxTokens)
			}
			if c.budget > 0 && fit.MaxTokens != c.budget {
				t.Errorf("%s, %s: max_tokens %d, want %d", c.client, r.name, fit.MaxTokens, c.budget)
			}
		}
		// An explicit max_tokens wins.
		args := map[string]any{"session_id": sid, "turns": 20, "max_tokens": 20000}
		var got struct {
			MaxTokens int `json:"max_tokens"`
		}
		callOK(t, cs, "get_conversation_context", args, &got)
		if got.MaxTokens != 20000 {
			t.Errorf("%s: max_tokens 20000 asked, the result says %d", c.client, got.MaxTokens)
		}
	}
}

// A relay passes its client's cap on in a header of /api; one that does
// not read is refused, and a good one fits the read to it.
func TestAPIResultCapHeader(t *testing.T) {
	t.Parallel()
	svc, sid := toolHeavy(t)
	ts, _ := api(t, svc, apiOptions{})
	args := `{"session_id":"` + sid + `","turns":200}`
	status, _, body := do(t, "POST", ts.URL+"/api/get_conversation_context", args, map[string]string{httpx.ResultCapHeader: "tokens=lots"})
	if status != http.StatusBadRequest || !strings.Contains(errorOf(t, body), httpx.ResultCapHeader) {
		t.Errorf("a cap that does not read: %d %s", status, body)
	}
	status, _, body = do(t, "POST", ts.URL+"/api/get_conversation_context", args, map[string]string{httpx.ResultCapHeader: "tokens=2500 bytes=9000"})
	var got struct {
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(body, &got); status != http.StatusOK || err != nil || got.MaxTokens != 2500 || len(body) > 9000 {
		t.Errorf("cap tokens=2500 bytes=9000: %d, max_tokens %d, %d bytes", status, got.MaxTokens, len(body))
	}
}
