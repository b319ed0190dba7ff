package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/formats"
	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/internal/facetest"
	"weft/ops/listen"
	"weft/ops/reads"
	"weft/ops/relay"
	"weft/ops/summary"
	"weft/ops/tools"
	"weft/store/boltstore"
)

// apiOptions are what a test asks of the listener (Token, Origins) and
// of the server (SessionTimeout).
type apiOptions struct {
	Token          string
	Origins        []string
	SessionTimeout time.Duration
}

// api serves svc's MCP server behind the listener's guard (ops/listen),
// as cmd/weft wires it, on a loopback test server.
func api(t *testing.T, svc *ops.Service, o apiOptions) (*httptest.Server, *Server) {
	t.Helper()
	srv := New(tools.Local{Service: svc}, Options{SessionTimeout: o.SessionTimeout})
	ts := httptest.NewServer(listen.Handler(listen.Options{Token: o.Token, Origins: o.Origins, Faces: []httpx.Face{srv.Face()}}))
	t.Cleanup(func() {
		for ss := range srv.MCP().Sessions() {
			ss.Close()
		}
		ts.Close()
	})
	return ts, srv
}

// listening serves svc's MCP server on a listener of its own
// (ops/listen), as cmd/weft does; it closes when the test ends.
func listening(t *testing.T, svc *ops.Service, o listen.Options) *listen.Listener {
	t.Helper()
	srv := New(tools.Local{Service: svc}, Options{Logger: o.Logger})
	o.Entry = httpx.MCPPath
	o.Faces = append(o.Faces, srv.Face())
	l, err := listen.Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// do and errorOf are facetest's, by the names these tests use.
var (
	do      = facetest.Do
	errorOf = facetest.ErrorOf
)

func TestAPICall(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, _ := api(t, svc, apiOptions{})
	ctx := context.Background()

	status, h, body := do(t, "POST", ts.URL+"/api/get_message_range", `{"start_idx":0,"end_idx":19}`, nil)
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("get_message_range: %d %s\n%s", status, h.Get("Content-Type"), body)
	}
	var got reads.MessageRangeResult
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	zero, nineteen := 0, 19
	want, err := reads.GetMessageRange(svc, ctx, reads.MessageRangeArgs{StartIdx: &zero, EndIdx: &nineteen})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := formats.Encode(want)
	if strings.TrimSpace(string(body)) != string(wantJSON) {
		t.Errorf("HTTP result differs from the in-process one")
	}
	if got.SessionID != sid || len(got.Messages) != 20 {
		t.Errorf("session %s, %d messages", got.SessionID, len(got.Messages))
	}

	// An empty body is no arguments.
	if status, _, body := do(t, "POST", ts.URL+"/api/list_sessions", "", nil); status != 200 || !bytes.Contains(body, []byte(sid)) {
		t.Errorf("list_sessions without a body: %d %s", status, body)
	}

	// Edits are the header's author's, else "http".
	var op ops.OpResult
	_, _, body = do(t, "POST", ts.URL+"/api/snip_messages", `{"start_idx":0,"end_idx":0}`, map[string]string{httpx.AuthorHeader: "ci-bot"})
	json.Unmarshal(body, &op)
	var op2 ops.OpResult
	_, _, body = do(t, "POST", ts.URL+"/api/snip_messages", `{"start_idx":0,"end_idx":0}`, nil)
	json.Unmarshal(body, &op2)
	list, err := reads.ListOperations(svc, ctx, reads.ListOperationsArgs{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	authors := map[string]string{}
	for _, o := range list.Operations {
		authors[o.OperationID] = o.Author
	}
	if authors[op.OperationID] != "ci-bot" || authors[op2.OperationID] != "http" {
		t.Errorf("authors %q and %q, want ci-bot and http", authors[op.OperationID], authors[op2.OperationID])
	}
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, _ := api(t, svc, apiOptions{})
	info, _, _ := svc.View(sid)
	stale := info.Version - 1
	direct := func(tool, args string) string {
		tt, _ := tools.Lookup(tool)
		_, err := tt.Call(context.Background(), svc, json.RawMessage(args))
		return err.Error()
	}
	tests := []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"wrong type", "POST", "/api/snip_messages", `{"start_idx":"x"}`, 400, direct("snip_messages", `{"start_idx":"x"}`)},
		{"not JSON", "POST", "/api/snip_messages", `{"start_idx":`, 400, direct("snip_messages", `{"start_idx":`)},
		{"not an object", "POST", "/api/snip_messages", `[1,2]`, 400, direct("snip_messages", `[1,2]`)},
		{"unknown session", "POST", "/api/get_message_range", `{"session_id":"nosuch","start_idx":0,"end_idx":1}`, 404, `session "nosuch" not found`},
		{"stale version", "POST", "/api/snip_messages", fmt.Sprintf(`{"start_idx":0,"end_idx":1,"expected_version":%d}`, stale), 409,
			direct("snip_messages", fmt.Sprintf(`{"start_idx":0,"end_idx":1,"expected_version":%d}`, stale))},
		{"wrong method", "GET", "/api/snip_messages", "", 405, "call a tool with POST"},
		{"unknown tool", "POST", "/api/no_such_tool", `{}`, 404, `no tool "no_such_tool": GET /api lists the tools`},
		{"nothing there", "GET", "/nothing", "", 404, "nothing at /nothing"},
		{"list with POST", "POST", "/api", "", 405, "GET /api lists the tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := do(t, tt.method, ts.URL+tt.path, tt.body, nil)
			if status != tt.status {
				t.Errorf("status %d, want %d: %s", status, tt.status, body)
			}
			if msg := errorOf(t, body); !strings.Contains(msg, tt.says) {
				t.Errorf("error %q does not say %q", msg, tt.says)
			}
			if status == 405 && h.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		})
	}
	// The unknown-tool answer lists no tools (GET /api does).
	_, _, body := do(t, "POST", ts.URL+"/api/no_such_tool", `{}`, nil)
	if bytes.Contains(body, []byte("snip_messages")) {
		t.Errorf("unknown tool lists tools: %s", body)
	}
	if after, _, _ := svc.View(sid); after.Version != info.Version {
		t.Errorf("refused requests changed the session")
	}
}

func TestAPIListAndHealth(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, _ := api(t, svc, apiOptions{})
	status, _, body := do(t, "GET", ts.URL+"/api", "", nil)
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			Path        string         `json:"path"`
			Arguments   []string       `json:"arguments"`
			InputSchema map[string]any `json:"input_schema"`
			ReadOnly    bool           `json:"read_only"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &list); status != 200 || err != nil {
		t.Fatalf("GET /api: %d %v", status, err)
	}
	if len(list.Tools) != len(tools.All()) {
		t.Errorf("GET /api lists %d tools, the registry has %d", len(list.Tools), len(tools.All()))
	}
	for i, tool := range tools.All() {
		got := list.Tools[i]
		if got.Name != tool.Name || got.Path != "/api/"+tool.Name || !slices.Equal(got.Arguments, tool.ArgNames()) || got.InputSchema["type"] != "object" || got.ReadOnly != tool.ReadOnly {
			t.Errorf("GET /api: %+v for %s", got, tool.Name)
		}
	}

	status, _, body = do(t, "GET", ts.URL+"/healthz", "", nil)
	var h health
	if err := json.Unmarshal(body, &h); status != 200 || err != nil || !h.OK || h.Sessions != 1 || h.Tools != len(tools.All()) || h.Version == "" || h.Schema != boltstore.SchemaVersion {
		t.Errorf("healthz: %d %s", status, body)
	}
	if status, _, _ := do(t, "POST", ts.URL+"/healthz", "", nil); status != 405 {
		t.Errorf("POST /healthz: %d", status)
	}
}

func TestMCPOverHTTP(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, srv := api(t, svc, apiOptions{})
	ctx := context.Background()
	mcpHeaders := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

	// Malformed JSON-RPC gets a JSON-RPC error, and the server serves on.
	for _, bad := range []string{`{"jsonrpc":"2.0","id":1,"method":`, `[]`, `{"jsonrpc":"2.0","id":1}`} {
		status, _, body := do(t, "POST", ts.URL+"/mcp", bad, mcpHeaders)
		var resp struct {
			JSONRPC string `json:"jsonrpc"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &resp); err != nil || resp.Error == nil || resp.Error.Code >= 0 || status < 400 {
			t.Errorf("malformed %q: %d %s", bad, status, body)
		}
	}

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Agents(); n != 1 {
		t.Errorf("%d agents with one connected", n)
	}
	listed, err := cs.ListTools(ctx, nil)
	if err != nil || len(listed.Tools) != len(tools.All()) {
		t.Fatalf("tools/list over HTTP: %d tools, %v", len(listed.Tools), err)
	}
	var op ops.OpResult
	callOK(t, cs, "digest_messages", map[string]any{"start_idx": 3, "end_idx": 6, "summary": "over HTTP"}, &op)
	list, _ := reads.ListOperations(svc, ctx, reads.ListOperationsArgs{SessionID: sid})
	if last := list.Operations[len(list.Operations)-1]; last.OperationID != op.OperationID || last.Author != "http-agent" {
		t.Errorf("last operation %+v", last)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: URISessions}); err != nil {
		t.Errorf("resources/read over HTTP: %v", err)
	}
	cs.Close()
	// The DELETE that Close sends ends the session on the server.
	deadline := time.Now().Add(5 * time.Second)
	for srv.Agents() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := srv.Agents(); n != 0 {
		t.Errorf("%d agents after the client left", n)
	}
}

func TestSessionTimeout(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, srv := api(t, svc, apiOptions{SessionTimeout: 50 * time.Millisecond})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "idle"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// An idle session is closed by the server, so it stops counting.
	deadline := time.Now().Add(10 * time.Second)
	for srv.Agents() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.Agents(); n != 0 {
		t.Fatalf("%d agents after the idle timeout", n)
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Errorf("a timed-out session still answers")
	}
}

// A summary model that fails is a bad gateway: weft was fine, the model
// it asked was not.
func TestAPISummarySourceFailureIs502(t *testing.T) {
	t.Parallel()
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	defer model.Close()
	svc, _ := seeded(t, ops.WithSummaryEndpoint(summary.Endpoint{URL: model.URL + "/v1"}))
	ts, _ := api(t, svc, apiOptions{})
	status, _, body := do(t, "POST", ts.URL+"/api/summarize_message_range", `{"start_idx":0,"end_idx":5,"source":"endpoint"}`, nil)
	if status != http.StatusBadGateway || !strings.Contains(errorOf(t, body), "overloaded") {
		t.Fatalf("%d %s", status, body)
	}
}

// relayTo is the MCP server weft mcp runs when another weft holds the
// file: its tools run there, through ops/relay.
func relayTo(target, token string) (*Server, error) {
	r, err := relay.Dial(target, relay.Options{Token: token})
	if err != nil {
		return nil, err
	}
	return New(r, Options{}), nil
}
