package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/formats"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/tools"
	"weft/store/boltstore"
)

// The measure: a 300-message thread in which 100 messages are
// tool results of 16 KB, read with every read tool's and resource's
// defaults, must give results that fit a client's 25k-token cap with room
// to spare.

// heavyT0 is when the tool-heavy thread starts; a message a minute.
var heavyT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// toolOutput is about 16 KB of Go-like source, as a Read or Bash tool
// returns it: lines of code, many with "return".
func toolOutput(k int) string {
	var b strings.Builder
	for line := 0; b.Len() < 16<<10; line++ {
		switch line % 4 {
		case 0:
			fmt.Fprintf(&b, "func handler%d_%d(w http.ResponseWriter, r *http.Request) error {\n", k, line)
		case 1:
			fmt.Fprintf(&b, "\tif err := limiter.Allow(r.Context(), \"bucket-%d\"); err != nil {\n", line)
		case 2:
			b.WriteString("\t\treturn fmt.Errorf(\"rate limited: %w\", err)\n")
		default:
			b.WriteString("\t}\n\treturn nil\n}\n")
		}
	}
	return b.String()
}

// toolHeavy returns a service over a file holding one session of 300
// messages: 100 rounds of a user's request, the assistant's tool call
// and the tool's 16 KB result, shaped as an import stores them (the
// result's text both in the content and in a part).
func toolHeavy(t testing.TB) (*ops.Service, string) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "weft.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := ops.New(st)
	ctx := context.Background()
	created, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "tool-heavy thread", Source: "claude-code", Room: "review", Interface: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []model.NewMessage
	at := func() time.Time { return heavyT0.Add(time.Duration(len(msgs)) * time.Minute) }
	for k := range 100 {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("Look at handlers_%d.go and tell me where the limiter returns early.", k), CreatedAt: at()})
		call := []model.Part{
			{Type: model.PartText, Text: fmt.Sprintf("I'll read handlers_%d.go first.", k)},
			{Type: model.PartToolCall, ToolCallID: fmt.Sprintf("call_%d", k), ToolName: "Read", Input: json.RawMessage(fmt.Sprintf(`{"file_path":"/src/handlers_%d.go"}`, k))},
		}
		msgs = append(msgs, model.NewMessage{Role: model.RoleAssistant, Content: formats.RenderContent(call), Parts: model.EncodeParts(call), CreatedAt: at()})
		result := []model.Part{{Type: model.PartToolResult, ToolCallID: fmt.Sprintf("call_%d", k), Text: toolOutput(k)}}
		msgs = append(msgs, model.NewMessage{Role: model.RoleTool, Name: "Read", Content: formats.RenderContent(result), Parts: model.EncodeParts(result), CreatedAt: at()})
	}
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: created.SessionID, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	// A few edits, so list_operations has something to list, and a
	// digest of the first ten rounds, so the reads have a summary.
	for i := range 3 {
		start, end := 30*i+30, 30*i+32
		if _, err := svc.TagMessages(ctx, ops.TagArgs{Selection: ops.Selection{SessionID: created.SessionID, StartIdx: &start, EndIdx: &end}, Tags: []string{"reviewed"}}); err != nil {
			t.Fatal(err)
		}
	}
	start, end := 0, 29
	summary := "The first ten handlers: each returns early when the limiter refuses, with a wrapped error; none retries."
	if _, err := svc.DigestMessages(ctx, ops.DigestArgs{Selection: ops.Selection{SessionID: created.SessionID, StartIdx: &start, EndIdx: &end}, Summary: summary}); err != nil {
		t.Fatal(err)
	}
	return svc, created.SessionID
}

// heavyRead is one read of the measure: a tool with its arguments, or a
// resource (tool empty). Every tool the registry marks read-only is
// here, and every resource.
type heavyRead struct {
	name string
	tool string
	args map[string]any
	uri  string
	// bounded: a read small by construction (a policy, counts of
	// tiers), or with a budget of its own (format_history_for_prompt's
	// max_tokens is the history's): it says no result_tokens, but its
	// size is held to the clients' caps all the same.
	bounded bool
}

func heavyReads(sid string) []heavyRead {
	mid := heavyT0.Add(150 * time.Minute).Format(time.RFC3339)
	return []heavyRead{
		{name: "get_conversation_context turns=200", tool: "get_conversation_context", args: map[string]any{"turns": 200}},
		{name: "get_conversation_context turns=10", tool: "get_conversation_context", args: map[string]any{"turns": 10}},
		{name: "get_turns_since (start)", tool: "get_turns_since", args: map[string]any{"timestamp": heavyT0.Format(time.RFC3339)}},
		{name: "get_turns_since stored", tool: "get_turns_since", args: map[string]any{"timestamp": heavyT0.Format(time.RFC3339), "include_summaries": false}},
		{name: "get_turns_around count=40", tool: "get_turns_around", args: map[string]any{"timestamp": mid}},
		{name: "get_message_range 0..270", tool: "get_message_range", args: map[string]any{"start_idx": 0, "end_idx": 270}},
		{name: "get_message_range 0..299 raw", tool: "get_message_range", args: map[string]any{"start_idx": 0, "end_idx": 299, "view": "raw"}},
		{name: "get_startup_context", tool: "get_startup_context", args: map[string]any{}},
		{name: "search_session_history return", tool: "search_session_history", args: map[string]any{"query": "return"}},
		{name: "search_session_history fuzzy", tool: "search_session_history", args: map[string]any{"query": "limiter", "mode": "fuzzy"}},
		{name: "search_sessions return", tool: "search_sessions", args: map[string]any{"query": "return"}},
		{name: "get_session_history", tool: "get_session_history", args: map[string]any{}},
		{name: "get_session_history markdown", tool: "get_session_history", args: map[string]any{"format": "markdown"}},
		{name: "get_session_history json", tool: "get_session_history", args: map[string]any{"format": "json"}},
		{name: "list_sessions", tool: "list_sessions", args: map[string]any{}},
		{name: "get_session_by_room", tool: "get_session_by_room", args: map[string]any{"room": "review"}},
		{name: "list_operations", tool: "list_operations", args: map[string]any{}},
		{name: "diff_session", tool: "diff_session", args: map[string]any{}},
		{name: "get_memory_policy", tool: "get_memory_policy", args: map[string]any{}, bounded: true},
		{name: "get_tiered_history", tool: "get_tiered_history", args: map[string]any{}, bounded: true},
		{name: "format_history_for_prompt", tool: "format_history_for_prompt", args: map[string]any{}, bounded: true},
		{name: "weft://sessions", uri: URISessions},
		{name: "weft://sessions/recent", uri: URIRecent},
		{name: "weft://sessions/{id}", uri: URISessions + "/" + sid},
		{name: "weft://sessions/{id}/context", uri: URISessions + "/" + sid + "/context"},
		{name: "weft://rooms/{room}", uri: uriRooms + "review"},
		{name: "weft://search/{query}", uri: uriSearch + "return"},
	}
}

// heavySize is what one read of the measure gave: the body of POST
// /api/<tool> (none for a resource), the JSON-RPC result over MCP, and
// the text a model is fed (the tool result's text content, or the
// resource's text).
type heavySize struct {
	read       heavyRead
	httpBytes  int
	httpTokens int
	mcpBytes   int
	text       string
	tokens     int
	structured string // the structured content's JSON, for a tool
}

// measureHeavy makes every read of the measure with its defaults, over
// MCP (an SDK client, in memory) and, for the tools, over POST /api.
func measureHeavy(t *testing.T) []heavySize {
	t.Helper()
	svc, sid := toolHeavy(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "measure", nil)
	ts, _ := api(t, svc, apiOptions{})
	ctx := context.Background()
	var out []heavySize
	for _, r := range heavyReads(sid) {
		m := heavySize{read: r}
		if r.tool == "" {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.uri})
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			wire, _ := json.Marshal(res)
			m.mcpBytes, m.text = len(wire), res.Contents[0].Text
		} else {
			args := heavyArgs(r, sid)
			res := callOK(t, cs, r.tool, args, nil)
			wire, _ := json.Marshal(res)
			m.mcpBytes, m.text = len(wire), text(res)
			if res.StructuredContent != nil {
				b, _ := json.Marshal(res.StructuredContent)
				m.structured = string(b)
			}
			body := heavyHTTP(t, ts.URL, r.tool, args)
			m.httpBytes, m.httpTokens = len(body), tokens.Count(body)
		}
		m.tokens = tokens.Count(m.text)
		out = append(out, m)
	}
	return out
}

// heavyArgs are a read's arguments, with the session.
func heavyArgs(r heavyRead, sid string) map[string]any {
	args := map[string]any{"session_id": sid}
	if r.tool == "list_sessions" || r.tool == "search_sessions" || r.tool == "get_session_by_room" {
		args = map[string]any{}
	}
	for k, v := range r.args {
		args[k] = v
	}
	return args
}

// logSizes logs the size of every read of the measure with its
// defaults (seen with -v): bytes and o200k tokens over HTTP, bytes of
// the JSON-RPC result over MCP, the tokens of the text a model is fed,
// and what each result says it left out and cut.
func logSizes(t *testing.T, sizes []heavySize) {
	t.Logf("| %-36s | %10s | %10s | %10s | %10s | %-16s |", "read (defaults)", "HTTP bytes", "HTTP tok", "MCP bytes", "model tok", "left out, cut")
	for _, m := range sizes {
		// What a fitted result says it left out and cut ("-" where
		// results do not say).
		var fit struct {
			Omitted *int `json:"omitted"`
			Cut     *int `json:"cut"`
			Context *struct {
				Omitted *int `json:"omitted"`
				Cut     *int `json:"cut"`
			} `json:"context"`
		}
		said := "-"
		if json.Unmarshal([]byte(m.text), &fit) == nil {
			if fit.Omitted == nil && fit.Context != nil {
				fit.Omitted, fit.Cut = fit.Context.Omitted, fit.Context.Cut
			}
			if fit.Omitted != nil && fit.Cut != nil {
				said = fmt.Sprintf("%d, %d", *fit.Omitted, *fit.Cut)
			}
		}
		t.Logf("| %-36s | %10d | %10d | %10d | %10d | %-16s |", m.read.name, m.httpBytes, m.httpTokens, m.mcpBytes, m.tokens, said)
	}
}

// heavyHTTP calls a tool over POST /api and returns the body.
func heavyHTTP(t *testing.T, base, tool string, args map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(args)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/"+tool, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/%s: %d %s %v", tool, resp.StatusCode, body, err)
	}
	return string(body)
}
