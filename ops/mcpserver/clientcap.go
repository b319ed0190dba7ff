package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/reads"
)

// A client passes a tool result to its model whole only up to a size of
// its own, and does something else with more: Claude Code 2.1.328 passes
// about 50 kB of text and gives the model a 2 kB preview of a larger
// result; Codex CLI 0.169.0 keeps about 12 kB and cuts the middle out, so
// a next_cursor at the tail points past rows the model never saw. A read
// called without max_tokens is fitted to the client that called it:
// a budget of tokens, and a cap on the result's bytes, the JSON of tool
// outputs being byte-heavy (about 4.3 bytes a token), with a fifth to
// spare. Other clients get reads.DefaultMaxTokens. An explicit max_tokens
// wins, and Options.MaxResultTokens sets the tokens for every client.

// Clients' caps, as measured (see above), with a fifth to spare.
var (
	claudeCodeCap = reads.Cap{Tokens: 10_000, Bytes: 40_000}
	codexCap      = reads.Cap{Tokens: 2_500, Bytes: 9_000}
)

// resultCapFor is the cap for a client by the name it gave in
// initialize: Claude Code calls itself "claude-code"; Codex CLI
// "codex-mcp-client", matched by its prefix "codex" for the names other
// releases may give. maxTokens, when not 0, sets the tokens.
func resultCapFor(client string, maxTokens int) reads.Cap {
	c := reads.Cap{Tokens: reads.DefaultMaxTokens}
	switch n := strings.ToLower(strings.TrimSpace(client)); {
	case strings.HasPrefix(n, "claude-code"):
		c = claudeCodeCap
	case strings.HasPrefix(n, "codex"):
		c = codexCap
	}
	if maxTokens > 0 {
		c.Tokens = maxTokens
	}
	return c
}

// withClientCap is ctx for a tool called by req's client: the reads it
// makes without max_tokens fit the client's cap (reads.WithCap; a relay
// passes it on to the weft it calls).
func (s *Server) withClientCap(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	name := ""
	if info := req.ClientInfo(); info != nil {
		name = info.Name
	}
	return reads.WithCap(ctx, resultCapFor(name, s.maxResultTokens))
}
