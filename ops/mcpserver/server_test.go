package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/demo"
	"weft/ops"
	"weft/ops/internal/facetest"
	"weft/ops/reads"
	"weft/ops/tools"
)

// The helpers the faces' tests share (ops/internal/facetest), by the
// names these tests use.
var (
	seeded  = facetest.Seeded
	callOK  = facetest.CallOK
	callErr = facetest.CallErr
	text    = facetest.Text
)

// legacyVersion is the protocol version today's clients negotiate.
const legacyVersion = facetest.LegacyVersion

// connect joins an SDK client named name to srv over in-memory transports,
// at the SDK's latest protocol version.
func connect(t testing.TB, srv *Server, name string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectAt(t, srv, name, "", opts)
	return cs
}

// connectAt joins a client at a given protocol version ("" for the
// latest) and returns the server's side too.
func connectAt(t testing.TB, srv *Server, name, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	return facetest.Connect(t, srv.MCP(), name, version, opts)
}

func TestListTools(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "lister", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	if len(res.Tools) != len(tools.All()) {
		t.Errorf("%d tools listed, the registry has %d", len(res.Tools), len(tools.All()))
	}
	for _, want := range tools.All() {
		got := byName[want.Name]
		if got == nil {
			t.Errorf("%s is not listed", want.Name)
			continue
		}
		if got.Description != want.Description {
			t.Errorf("%s: description %q, want %q", want.Name, got.Description, want.Description)
		}
		a := got.Annotations
		if a == nil || a.ReadOnlyHint != want.ReadOnly || a.IdempotentHint != want.Idempotent ||
			a.DestructiveHint == nil || *a.DestructiveHint != want.Destructive || a.OpenWorldHint == nil || *a.OpenWorldHint != want.OpenWorld {
			t.Errorf("%s: annotations %+v do not match the registry's hints", want.Name, a)
		}
		schema, _ := got.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		if schema["type"] != "object" {
			t.Errorf("%s: input schema %v is not an object", want.Name, schema)
		}
		for _, arg := range want.ArgNames() {
			p, ok := props[arg].(map[string]any)
			if !ok {
				t.Errorf("%s: argument %s is missing from the input schema", want.Name, arg)
				continue
			}
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s: session_id has no description: %v", want.Name, p)
			}
		}
		if got.OutputSchema == nil {
			t.Errorf("%s: no output schema", want.Name)
		}
		// The generated schema must describe the arguments the decoder
		// takes: no argument is missing, none is invented.
		if len(props) != len(want.ArgNames()) {
			t.Errorf("%s: schema has %d properties, the tool takes %d arguments", want.Name, len(props), len(want.ArgNames()))
		}
	}
}

// toolState carries what earlier calls made, for later calls' arguments.
type toolState struct {
	sid, digestOp, insertOp, timestamp string
	scratch                            string // the session create_session made
	hookSession                        string
}

// newToolState is the state the sample calls start from on the demo
// thread sid: a timestamp inside it and a second session for the hooks.
func newToolState(t *testing.T, svc *ops.Service, sid string) *toolState {
	t.Helper()
	ctx := context.Background()
	zero, twenty := 0, 20
	first, err := reads.GetMessageRange(svc, ctx, reads.MessageRangeArgs{SessionID: sid, StartIdx: &zero, EndIdx: &twenty})
	if err != nil {
		t.Fatal(err)
	}
	hook, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "hook"})
	if err != nil {
		t.Fatal(err)
	}
	return &toolState{sid: sid, timestamp: first.Messages[15].CreatedAt, hookSession: hook.SessionID}
}

// sampleArgs are arguments each known tool must accept on the demo thread,
// in the order the test calls them. Tools added to the registry later and
// missing here are still called (with the session only) and must answer
// with a result or a tool error, never a protocol error.
var sampleArgs = []struct {
	tool string
	args func(st *toolState) map[string]any
}{
	{"list_sessions", func(*toolState) map[string]any { return map[string]any{} }},
	{"get_message_range", func(*toolState) map[string]any { return map[string]any{"start_idx": 0, "end_idx": 4} }},
	{"get_conversation_context", func(*toolState) map[string]any { return map[string]any{"turns": 10} }},
	{"get_turns_since", func(*toolState) map[string]any { return map[string]any{"timestamp": "2020-01-01", "limit": 5} }},
	{"get_turns_around", func(st *toolState) map[string]any { return map[string]any{"timestamp": st.timestamp, "count": 10} }},
	{"search_session_history", func(*toolState) map[string]any { return map[string]any{"query": "redis", "limit": 3} }},
	{"get_startup_context", func(*toolState) map[string]any { return map[string]any{"summaries": 1} }},
	{"append_messages", func(*toolState) map[string]any {
		return map[string]any{"messages": []map[string]any{{"role": "user", "content": "Is the <limiter> & burst logic done?"}}}
	}},
	{"add_turn", func(*toolState) map[string]any {
		return map[string]any{"query": "And tests?", "response": "All green."}
	}},
	{"tag_messages", func(*toolState) map[string]any {
		return map[string]any{"start_idx": 0, "end_idx": 1, "tags": []string{"intro"}}
	}},
	{"digest_messages", func(*toolState) map[string]any {
		return map[string]any{"start_idx": 2, "end_idx": 5, "summary": "Early questions, answered."}
	}},
	{"revise_messages", func(*toolState) map[string]any {
		return map[string]any{"start_idx": 8, "end_idx": 8, "replacements": []map[string]any{{"role": "assistant", "content": "Shorter."}}}
	}},
	{"snip_messages", func(*toolState) map[string]any { return map[string]any{"start_idx": 10, "end_idx": 11} }},
	{"resequence_messages", func(*toolState) map[string]any { return map[string]any{"new_order": []int{21, 20}} }},
	{"insert_messages", func(*toolState) map[string]any {
		return map[string]any{"after_idx": -1, "messages": []map[string]any{{"role": "system", "content": "Be brief."}}}
	}},
	{"list_operations", func(*toolState) map[string]any { return map[string]any{} }},
	{"diff_session", func(*toolState) map[string]any { return map[string]any{"max_tokens": 2000} }},
	{"toggle_operation", func(st *toolState) map[string]any {
		return map[string]any{"operation_id": st.insertOp, "active": false}
	}},
	{"revert_operation", func(st *toolState) map[string]any { return map[string]any{"operation_id": st.digestOp} }},
	{"set_active_tags", func(*toolState) map[string]any { return map[string]any{"tags": []string{"intro"}} }},
	{"request_context_slice", func(*toolState) map[string]any {
		return map[string]any{"start_message_index": 0, "end_message_index": 3}
	}},
	{"assemble_context", func(*toolState) map[string]any { return map[string]any{"format": "anthropic", "max_tokens": 2000} }},
	{"summarize_message_range", func(*toolState) map[string]any {
		return map[string]any{"start_idx": 30, "end_idx": 40, "source": "extractive"}
	}},
	{"apply_context_operations", func(st *toolState) map[string]any {
		// The hook sends a whole thread: a fresh session's.
		return map[string]any{"session_id": st.hookSession, "messages": []map[string]any{{"role": "user", "content": "A thread from a hook."}}}
	}},
	{"get_memory_policy", func(*toolState) map[string]any { return map[string]any{} }},
	{"get_tiered_history", func(*toolState) map[string]any { return map[string]any{} }},
	{"format_history_for_prompt", func(*toolState) map[string]any { return map[string]any{"max_tokens": 500} }},
	{"summarize_conversation", func(*toolState) map[string]any { return map[string]any{} }},
	{"set_memory_policy", func(*toolState) map[string]any { return map[string]any{"max_active_turns": 400} }},
	{"search_sessions", func(*toolState) map[string]any { return map[string]any{"query": "limiter"} }},
	{"get_session_history", func(*toolState) map[string]any { return map[string]any{"limit": 5, "format": "markdown"} }},
	{"fork_session", func(*toolState) map[string]any { return map[string]any{"at_idx": 3} }},
	{"create_session", func(*toolState) map[string]any {
		return map[string]any{"title": "scratch", "room": "sample room", "interface": "cli"}
	}},
	{"get_session_by_room", func(*toolState) map[string]any { return map[string]any{"room": "sample room", "interface": "cli"} }},
	{"rename_session", func(st *toolState) map[string]any {
		return map[string]any{"session_id": st.scratch, "title": "scratch, renamed"}
	}},
	{"delete_session", func(st *toolState) map[string]any { return map[string]any{"session_id": st.scratch} }},
}

// validator checks structured results against a tool's advertised output
// schema, as strict clients do.
func validator(t *testing.T, tool *mcp.Tool) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(tool.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: output schema does not resolve: %v", tool.Name, err)
	}
	return r
}

func TestCallEveryTool(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "tester", nil)
	ctx := context.Background()
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*mcp.Tool{}
	for _, tool := range listed.Tools {
		schemas[tool.Name] = tool
	}

	st := newToolState(t, svc, sid)

	called := map[string]bool{}
	check := func(name string, args map[string]any) map[string]any {
		t.Helper()
		tool, _ := tools.Lookup(name)
		if _, set := args["session_id"]; !set && slices.Contains(tool.ArgNames(), "session_id") && name != "revert_operation" && name != "toggle_operation" {
			args["session_id"] = sid
		}
		res := callOK(t, cs, name, args, nil)
		called[name] = true
		// The text is the JSON of the structured result, and both are
		// what a direct call would encode.
		var structured map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &structured); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
		var fromText map[string]any
		if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
			t.Fatalf("%s: text is not JSON: %v", name, err)
		}
		if fmt.Sprint(structured) != fmt.Sprint(fromText) {
			t.Errorf("%s: structured content and text differ", name)
		}
		if err := validator(t, schemas[name]).Validate(structured); err != nil {
			t.Errorf("%s: result does not match its output schema: %v\n%s", name, err, text(res))
		}
		return structured
	}
	for _, s := range sampleArgs {
		if _, ok := tools.Lookup(s.tool); !ok {
			t.Errorf("sample for %s, which the registry does not have", s.tool)
			continue
		}
		out := check(s.tool, s.args(st))
		switch s.tool {
		case "digest_messages":
			st.digestOp = out["operation_id"].(string)
		case "insert_messages":
			st.insertOp = out["operation_id"].(string)
		case "create_session":
			st.scratch = out["session_id"].(string)
		}
	}
	for _, tool := range tools.All() {
		if called[tool.Name] {
			continue
		}
		args := map[string]any{}
		if slices.Contains(tool.ArgNames(), "session_id") {
			args["session_id"] = sid
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
		if err != nil {
			t.Errorf("%s: protocol error %v; tools answer with results or tool errors", tool.Name, err)
			continue
		}
		if res.IsError && text(res) == "" {
			t.Errorf("%s: a tool error without a message", tool.Name)
		}
		t.Logf("%s (no sample arguments yet) with session only: error=%v %.120s", tool.Name, res.IsError, text(res))
	}

	// What the tools did is in the operation log.
	var opsRes reads.ListOperationsResult
	callOK(t, cs, "list_operations", map[string]any{"session_id": sid}, &opsRes)
	types := map[string]int{}
	for _, op := range opsRes.Operations {
		if op.Author == "tester" {
			types[string(op.OpType)]++
		}
	}
	for _, want := range []string{"tag", "digest", "revise", "snip", "resequence", "insert"} {
		if types[want] != 1 {
			t.Errorf("%d %s operations by tester, want 1 (%v)", types[want], want, types)
		}
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "tester", nil)
	ctx := context.Background()

	// The message is the one the tool gives in-process, word for word.
	direct := func(name, args string) string {
		tool, _ := tools.Lookup(name)
		_, err := tool.Call(ctx, svc, json.RawMessage(args))
		if err == nil {
			t.Fatalf("%s %s succeeds in-process", name, args)
		}
		return err.Error()
	}
	info, _, err := svc.View(sid)
	if err != nil {
		t.Fatal(err)
	}
	stale := info.Version - 1
	tests := []struct {
		name, tool, args string
		kind             error
	}{
		{"wrong type", "snip_messages", `{"start_idx":"x","end_idx":3}`, ops.ErrInvalid},
		{"unknown argument", "snip_messages", `{"begin":1}`, ops.ErrInvalid},
		{"past the end", "get_message_range", `{"start_idx":0,"end_idx":99999}`, ops.ErrInvalid},
		{"unknown session", "get_message_range", `{"session_id":"nosuch","start_idx":0,"end_idx":1}`, ops.ErrNotFound},
		{"unknown operation", "revert_operation", `{"operation_id":"op-nosuch"}`, ops.ErrNotFound},
		{"stale version", "snip_messages", fmt.Sprintf(`{"start_idx":0,"end_idx":1,"expected_version":%d}`, stale), ops.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
			got := callErr(t, cs, tt.tool, args)
			want := direct(tt.tool, tt.args)
			if got != want {
				t.Errorf("MCP says %q, in-process %q", got, want)
			}
			tool, _ := tools.Lookup(tt.tool)
			if _, err := tool.Call(ctx, svc, json.RawMessage(tt.args)); !errors.Is(err, tt.kind) {
				t.Errorf("in-process error %v is not %v", err, tt.kind)
			}
		})
	}
	after, _, _ := svc.View(sid)
	if after.Version != info.Version {
		t.Errorf("refused calls changed the session: version %d -> %d", info.Version, after.Version)
	}
	// An unknown tool is the protocol's error, not a tool's.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestAuthorIsClientName(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	for _, tt := range []struct{ client, version, author string }{
		{"claude-code", legacyVersion, "claude-code"},
		{"claude-code", "", "claude-code"},
		{"", legacyVersion, "mcp"},
		{"  cursor\x07 ", "", "cursor"},
	} {
		cs, _ := connectAt(t, srv, tt.client, tt.version, nil)
		var op ops.OpResult
		callOK(t, cs, "snip_messages", map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 0}, &op)
		var list reads.ListOperationsResult
		callOK(t, cs, "list_operations", map[string]any{"session_id": sid}, &list)
		i := slices.IndexFunc(list.Operations, func(o reads.OperationOut) bool { return o.OperationID == op.OperationID })
		if i < 0 {
			t.Fatalf("operation %s is not listed", op.OperationID)
		}
		if got := list.Operations[i].Author; got != tt.author {
			t.Errorf("client %q: author %q, want %q", tt.client, got, tt.author)
		}
	}
}

func TestAgentsCountsSessions(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	if n := srv.Agents(); n != 0 {
		t.Fatalf("%d agents before any connects", n)
	}
	a, aServer := connectAt(t, srv, "a", legacyVersion, nil)
	connect(t, srv, "b", nil)
	if n := srv.Agents(); n != 2 {
		t.Errorf("%d agents with two connected", n)
	}
	a.Close()
	// The server notices the hang-up when its read loop ends.
	aServer.Wait()
	if n := srv.Agents(); n != 1 {
		t.Errorf("%d agents after one left", n)
	}
}

func TestResources(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "reader", nil)
	ctx := context.Background()

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The fixed resources, then the sessions (picker_test.go).
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
		if r.MIMEType != "application/json" || r.Description == "" {
			t.Errorf("%s: mime %q, description %q", r.URI, r.MIMEType, r.Description)
		}
	}
	if !slices.Equal(uris, []string{URISessions, URIRecent, URISessions + "/" + sid}) {
		t.Errorf("resources %v", uris)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tmpls []string
	for _, r := range templates.ResourceTemplates {
		tmpls = append(tmpls, r.URITemplate)
	}
	slices.Sort(tmpls)
	if !slices.Equal(tmpls, []string{URIRoomTemplate, URISearchTemplate, uriRecentQuery, URIContextTemplate, URISessionTemplate, uriSessionsQuery}) {
		t.Errorf("templates %v", tmpls)
	}

	read := func(uri string, out any) {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" || res.Contents[0].URI != uri {
			t.Fatalf("read %s: contents %+v", uri, res.Contents)
		}
		if err := json.Unmarshal([]byte(res.Contents[0].Text), out); err != nil {
			t.Fatalf("read %s: %v\n%s", uri, err, res.Contents[0].Text)
		}
	}

	// A second, empty session shows up too.
	if _, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "empty one"}); err != nil {
		t.Fatal(err)
	}
	var sessions reads.ListSessionsResult
	read(URISessions, &sessions)
	if sessions.Total != 2 || len(sessions.Sessions) != 2 {
		t.Errorf("weft://sessions: %+v", sessions)
	}

	var recent struct {
		Sessions []struct {
			SessionID string             `json:"session_id"`
			Messages  []reads.MessageOut `json:"latest_messages"`
		} `json:"sessions"`
	}
	read(URIRecent, &recent)
	if len(recent.Sessions) != 2 {
		t.Fatalf("weft://sessions/recent: %+v", recent)
	}
	for _, r := range recent.Sessions {
		want := 0
		if r.SessionID == sid {
			want = recentMessages
		}
		if len(r.Messages) != want {
			t.Errorf("recent %s: %d messages, want %d", r.SessionID, len(r.Messages), want)
		}
	}
	_, view, _ := svc.View(sid)
	if got := recent.Sessions[1].Messages; recent.Sessions[1].SessionID == sid && got[len(got)-1].Index != view.Len()-1 {
		t.Errorf("recent messages end at %d, the thread at %d", got[len(got)-1].Index, view.Len()-1)
	}

	var one struct {
		Session ops.SessionOut                  `json:"session"`
		Context reads.ConversationContextResult `json:"context"`
	}
	read("weft://sessions/"+sid, &one)
	if one.Session.SessionID != sid || one.Session.Title != demo.Title || len(one.Context.RawTurns) == 0 {
		t.Errorf("weft://sessions/ID: %+v", one.Session)
	}
	// A unique prefix names the session as well.
	read("weft://sessions/"+sid[:len(sid)-2], &one)
	if one.Session.SessionID != sid {
		t.Errorf("by prefix: %s", one.Session.SessionID)
	}

	var pkg struct {
		Session           ops.SessionOut `json:"session"`
		Summaries         []reads.SummaryOut
		Unsummarized      []reads.MessageOut
		UnsummarizedCount int    `json:"unsummarized_count"`
		Omitted           int    `json:"omitted"`
		NextURI           string `json:"next_uri"`
	}
	read("weft://sessions/"+sid+"/context", &pkg)
	direct, err := reads.GetStartupContext(svc, ctx, reads.StartupContextArgs{SessionID: sid, MaxTokens: new(reads.NoLimit)})
	if err != nil {
		t.Fatal(err)
	}
	// The package is fitted to the default budget: the latest turns,
	// and the URI that reads the older ones.
	listed := len(pkg.Unsummarized)
	if pkg.Session.SessionID != sid || pkg.UnsummarizedCount != direct.UnsummarizedCount || listed == 0 || listed+pkg.Omitted != len(direct.Unsummarized) || len(pkg.Summaries) != len(direct.Summaries) {
		t.Errorf("context: %d unsummarized (%d listed, %d left out), %d summaries; want %d, %d", pkg.UnsummarizedCount, listed, pkg.Omitted, len(pkg.Summaries), direct.UnsummarizedCount, len(direct.Summaries))
	} else if pkg.Unsummarized[listed-1].ID != direct.Unsummarized[len(direct.Unsummarized)-1].ID || !strings.HasPrefix(pkg.NextURI, "weft://sessions/"+sid+"/context?cursor=") {
		t.Errorf("context: ends at %s, want the latest turn %s; next_uri %q", pkg.Unsummarized[listed-1].ID, direct.Unsummarized[len(direct.Unsummarized)-1].ID, pkg.NextURI)
	}

	for _, uri := range []string{"weft://sessions/nosuch", "weft://sessions/nosuch/context"} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), `"nosuch" not found`) {
			t.Errorf("read %s: %v, want the service's not-found message", uri, err)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weft://sessions/a/b/c"}); err == nil {
		t.Errorf("weft://sessions/a/b/c reads as a resource")
	}
}

func TestStartupPrompt(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "reader", nil)
	ctx := context.Background()
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "startup" || len(prompts.Prompts[0].Arguments) != 3 {
		t.Fatalf("prompts: %+v", prompts.Prompts)
	}
	direct, err := reads.GetStartupContext(svc, ctx, reads.StartupContextArgs{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	get := func(args map[string]string) (string, error) {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "startup", Arguments: args})
		if err != nil {
			return "", err
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("prompt messages: %+v", res.Messages)
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text, nil
	}
	got, err := get(nil)
	if err != nil {
		t.Fatal(err)
	}
	last := direct.Unsummarized[len(direct.Unsummarized)-1]
	for _, want := range []string{demo.Title, fmt.Sprintf("Unsummarized turns (%d)", direct.UnsummarizedCount), strings.TrimSpace(last.Content), "## Summaries"} {
		if !strings.Contains(got, want) {
			t.Errorf("startup prompt lacks %q", want)
		}
	}
	if len(direct.Summaries) > 0 && !strings.Contains(got, strings.TrimSpace(direct.Summaries[0].Content)) {
		t.Errorf("startup prompt lacks the summary")
	}
	got, err = get(map[string]string{"session_id": sid[:len(sid)-2], "summaries": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "## Summaries") {
		t.Errorf("summaries=0 still lists summaries")
	}
	if _, err := get(map[string]string{"summaries": "two"}); err == nil || !strings.Contains(err.Error(), "not a whole number") {
		t.Errorf("summaries=two: %v", err)
	}
	if _, err := get(map[string]string{"session_id": "nosuch"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown session: %v", err)
	}
}

// addSampleTool adds a test-only tool that asks the caller's model the
// way registry tools do, through the sampling the handler lends.
func addSampleTool(srv *Server) {
	srv.MCP().AddTool(&mcp.Tool{Name: "sample_test", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sp := newSampling(req)
			if sp == nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no sampler"}}}, nil
			}
			out, model, err := sp.sample(ctx, "Summarize: hello", 50)
			if len(sp.pending) > 0 {
				return &mcp.CallToolResult{InputRequests: sp.pending}, nil
			}
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: model + ": " + out}}}, nil
		})
}

func TestSampling(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	addSampleTool(srv)
	var asked atomic.Int32
	var prompt atomic.Value
	//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
	sampling := &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		asked.Add(1)
		if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
			prompt.Store(tc.Text)
		}
		//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
		return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "SAMPLED: the limiter is done"}}, nil
	}}

	for _, version := range []string{legacyVersion, ""} {
		t.Run("sampler at "+cmp.Or(version, "latest"), func(t *testing.T) {
			cs, _ := connectAt(t, srv, "sampler-client", version, sampling)
			before := asked.Load()
			res := callOK(t, cs, "sample_test", map[string]any{}, nil)
			if got := text(res); got != "test-model: SAMPLED: the limiter is done" || prompt.Load() != "Summarize: hello" {
				t.Errorf("sampled %q from prompt %v", got, prompt.Load())
			}
			if n := asked.Load() - before; n != 1 {
				t.Errorf("the client's model was asked %d times, want once", n)
			}
			plain, _ := connectAt(t, srv, "plain-client", version, nil)
			if got := callErr(t, plain, "sample_test", map[string]any{}); got != "no sampler" {
				t.Errorf("a client without sampling got a sampler: %q", got)
			}
		})
	}

	t.Run("summarize_message_range", func(t *testing.T) {
		if _, ok := tools.Lookup("summarize_message_range"); !ok {
			t.Skip("summarize_message_range is not in the registry yet")
		}
		for _, version := range []string{legacyVersion, ""} {
			cs, _ := connectAt(t, srv, "sampler-client", version, sampling)
			before := asked.Load()
			var sum ops.SummarizeResult
			res := callOK(t, cs, "summarize_message_range", map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 5}, &sum)
			if asked.Load() == before {
				t.Errorf("%s: summarize_message_range did not ask the client's model", cmp.Or(version, "latest"))
			}
			if !strings.Contains(sum.Summary, "SAMPLED: the limiter is done") {
				t.Errorf("%s: summary does not use the sampled text: %s", cmp.Or(version, "latest"), text(res))
			}
			// The result says where the summary came from: the client's model.
			if sum.Source != ops.SourceSampling || sum.Model != "test-model" {
				t.Errorf("%s: source %q, model %q; want %q, test-model", cmp.Or(version, "latest"), sum.Source, sum.Model, ops.SourceSampling)
			}
		}
	})
}
