package mcpserver

import (
	"encoding/json"
	"testing"

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
	for _, c := range []struct {
		client   string
		opts     Options
		maxBytes int // what the client passes whole, with a tenth to spare
		budget   int // max_tokens the results say, 0: any
	}{
		{client: "claude-code", maxBytes: 45_000},
		{client: "codex-mcp-client", maxBytes: 10_800},
		{client: "codex", maxBytes: 10_800},
		{client: "measure", opts: Options{MaxResultTokens: 3000}, budget: 3000},
	} {
		cs := connect(t, New(tools.Local{Service: svc}, c.opts), c.client, nil)
		for _, r := range heavyReads(sid) {
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
