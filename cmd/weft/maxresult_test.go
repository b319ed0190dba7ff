package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMaxResultTokensFlag: --max-result-tokens is the budget of a read
// called without max_tokens, over weft mcp and weft serve; an explicit
// max_tokens still wins; a budget no read takes is refused.
func TestMaxResultTokensFlag(t *testing.T) {
	t.Parallel()
	db, sid := seededDB(t)
	budgetOf := func(cs *mcp.ClientSession, args map[string]any) int {
		var r struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.Unmarshal([]byte(toolText(t, cs, "get_conversation_context", args)), &r); err != nil {
			t.Fatal(err)
		}
		return r.MaxTokens
	}
	// weft mcp, over stdio.
	cmd := weftProcess("--db", db, "mcp", "--max-result-tokens", "3000", "--no-mcp")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "some-client", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("weft mcp: %v", err)
	}
	if got := budgetOf(cs, map[string]any{"session_id": sid, "turns": 5}); got != 3000 {
		t.Errorf("weft mcp --max-result-tokens 3000: max_tokens %d", got)
	}
	if got := budgetOf(cs, map[string]any{"session_id": sid, "turns": 5, "max_tokens": 5000}); got != 5000 {
		t.Errorf("weft mcp, max_tokens 5000 given: max_tokens %d", got)
	}
	cs.Close()
	// weft serve, over Streamable HTTP.
	db2, sid2 := seededDB(t)
	_, url, _ := startServe(t, db2, "--addr", "127.0.0.1:0", "--max-result-tokens", "2000")
	hs, err := mcp.NewClient(&mcp.Implementation{Name: "some-client", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	if got := budgetOf(hs, map[string]any{"session_id": sid2, "turns": 5}); got != 2000 {
		t.Errorf("weft serve --max-result-tokens 2000: max_tokens %d", got)
	}
	// A budget no read takes is refused when weft starts.
	out, err := weftProcess("--db", db, "serve", "--max-result-tokens", "10").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--max-result-tokens") {
		t.Errorf("--max-result-tokens 10: %v\n%s", err, out)
	}
}
