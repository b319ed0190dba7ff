package mcpserver

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/reads"
	"weft/ops/tools"
)

// A client passes a tool result to its model whole only up to a size of
// its own, and does something else with more: Claude Code 2.1.328 passes
// about 50 kB of text and gives the model a 2 kB preview of a larger
// result; Codex CLI 0.169.0 keeps about 12 kB and cuts the middle out, so
// a next_cursor at the tail points past rows the model never saw. A read
// called without max_tokens is fitted to the client that called it:
// a budget of tokens, and a cap on the result's bytes, the JSON of tool
// outputs being byte-heavy (about 4.3 bytes a token), with a fifth to
// spare. Other clients get the read's own default. An explicit max_tokens
// wins, and Options.MaxResultTokens sets the tokens for every client.

// resultCap is what a read called without max_tokens fits in: tokens,
// and bytes of its JSON (0: no cap but the tokens).
type resultCap struct {
	tokens, bytes int
}

// Clients' caps, as measured (see above), with a fifth to spare.
var (
	claudeCodeCap = resultCap{tokens: 10_000, bytes: 40_000}
	codexCap      = resultCap{tokens: 2_500, bytes: 9_000}
)

// resultCapFor is the cap for a client by the name it gave in
// initialize: Claude Code calls itself "claude-code"; Codex CLI
// "codex-mcp-client", matched by its prefix "codex" for the names other
// releases may give. maxTokens, when not 0, sets the tokens.
func resultCapFor(client string, maxTokens int) resultCap {
	c := resultCap{tokens: reads.DefaultMaxTokens}
	switch n := strings.ToLower(strings.TrimSpace(client)); {
	case strings.HasPrefix(n, "claude-code"):
		c = claudeCodeCap
	case strings.HasPrefix(n, "codex"):
		c = codexCap
	}
	if maxTokens > 0 {
		c.tokens = maxTokens
	}
	return c
}

// takesBudget says whether a tool is a read that takes max_tokens: only
// those are fitted to the client (and called again when over its cap:
// they change nothing).
func takesBudget(t *tools.Tool) bool {
	if !t.ReadOnly {
		return false
	}
	sc := schemasOf(t)
	if sc.err != nil || sc.input == nil {
		return false
	}
	_, ok := sc.input.Properties["max_tokens"]
	return ok
}

// withMaxTokens returns args with max_tokens set to n, and false (args
// as they are) when they give max_tokens already or are not an object.
func withMaxTokens(args json.RawMessage, n int) (json.RawMessage, bool) {
	m := map[string]json.RawMessage{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &m); err != nil || m == nil {
			return args, false
		}
	}
	if _, given := m["max_tokens"]; given {
		return args, false
	}
	b, _ := json.Marshal(n)
	m["max_tokens"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return args, false
	}
	return out, true
}

// callFitted calls a read for a client: without max_tokens, with the
// client's budget, and again with less while the result is over the
// client's bytes (the budget scaled by how far over it was).
func (s *Server) callFitted(call func(args json.RawMessage) (json.RawMessage, any, error), t *tools.Tool, req *mcp.CallToolRequest) (json.RawMessage, any, error) {
	args := req.Params.Arguments
	if !takesBudget(t) {
		return call(args)
	}
	name := ""
	if info := req.ClientInfo(); info != nil {
		name = info.Name
	}
	c := resultCapFor(name, s.maxResultTokens)
	budget := c.tokens
	fitted, ok := withMaxTokens(args, budget)
	if !ok {
		return call(args)
	}
	out, value, err := call(fitted)
	for range 4 {
		if err != nil || c.bytes == 0 || len(out) <= c.bytes {
			break
		}
		next := min(int(int64(budget)*int64(c.bytes)*9/10/int64(len(out))), budget*9/10)
		if next < reads.MinMaxTokens {
			break
		}
		budget = next
		fitted, _ = withMaxTokens(args, budget)
		out, value, err = call(fitted)
	}
	return out, value, err
}
