package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/internal/facetest"
	"weft/ops/tools"
)

// TestSubscribersHearEdits: one client subscribes to a session and its
// context, another edits; the first is told of every write.
func TestSubscribersHearEdits(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := facetest.NewHearing()
	listener, _ := connectAt(t, srv, "listener", legacyVersion, h.Options())
	editor, _ := connectAt(t, srv, "editor", legacyVersion, nil)
	ctx := context.Background()

	caps := listener.InitializeResult().Capabilities.Resources
	if caps == nil || !caps.Subscribe || !caps.ListChanged {
		t.Fatalf("resources capability %+v: want subscribe and listChanged", caps)
	}
	session, context := URISessions+"/"+sid, URISessions+"/"+sid+"/context"
	for _, uri := range []string{session, context} {
		if err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}

	start, end := 1, 2
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"seen"}}, nil)
	h.Await(t, "the tag", func() bool { return facetest.Count(h.Updated, session) == 1 && facetest.Count(h.Updated, context) == 1 })
	callOK(t, editor, "append_messages", map[string]any{"session_id": sid, "messages": []map[string]string{{"role": "user", "content": "more"}}}, nil)
	h.Await(t, "the append", func() bool { return facetest.Count(h.Updated, session) == 2 && facetest.Count(h.Updated, context) == 2 })

	// Another session's writes are not this subscription's news.
	var created ops.CreateSessionResult
	callOK(t, editor, "create_session", map[string]any{"title": "elsewhere"}, &created)
	callOK(t, editor, "append_messages", map[string]any{"session_id": created.SessionID, "messages": []map[string]string{{"role": "user", "content": "x"}}}, nil)
	h.Quiet(t, "another session's append", func() bool { return len(h.Updated) != 4 })

	// After unsubscribing, nothing.
	if err := listener.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: session}); err != nil {
		t.Fatal(err)
	}
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"again"}}, nil)
	h.Await(t, "the context's update", func() bool { return facetest.Count(h.Updated, context) == 3 })
	h.Quiet(t, "the unsubscribed session", func() bool { return facetest.Count(h.Updated, session) != 2 })

	// A subscription names a session that exists.
	err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: URISessions + "/nosuchsession"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("subscribing to a missing session: %v, want resource not found", err)
	}
}

// TestListChangedOnSessionsMadeAndGone: every client hears that the list
// of sessions changed when one is created, renamed or deleted.
func TestListChangedOnSessionsMadeAndGone(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := facetest.NewHearing()
	connectAt(t, srv, "listener", legacyVersion, h.Options())
	editor, _ := connectAt(t, srv, "editor", legacyVersion, nil)

	var created ops.CreateSessionResult
	callOK(t, editor, "create_session", map[string]any{"title": "new"}, &created)
	h.Await(t, "the new session", func() bool { return h.Listed >= 1 })
	n := h.ListChanges()
	callOK(t, editor, "rename_session", map[string]any{"session_id": created.SessionID, "title": "renamed"}, nil)
	h.Await(t, "the rename", func() bool { return h.Listed > n })
	n = h.ListChanges()
	callOK(t, editor, "delete_session", map[string]any{"session_id": created.SessionID}, nil)
	h.Await(t, "the deletion", func() bool { return h.Listed > n })
}

// TestLogsTellOfOthersEdits: a client that set a logging level hears of
// the edits of others (who, what, the new version), not of its own.
func TestLogsTellOfOthersEdits(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := facetest.NewHearing()
	listener, _ := connectAt(t, srv, "listener", legacyVersion, h.Options())
	editor, _ := connectAt(t, srv, "editor", legacyVersion, nil)
	ctx := context.Background()

	// Before a level is set, a client hears no logs.
	start, end := 1, 2
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"a"}}, nil)
	h.Quiet(t, "a log before any level was set", func() bool { return len(h.Logs) > 0 })

	//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
	if err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	var tagged ops.TagResult
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"b"}}, &tagged)
	h.Await(t, "the editor's tag", func() bool { return len(h.Logs) == 1 })
	got := h.LogsSoFar()[0]
	if got["author"] != "editor" || got["session_id"] != sid || got["version"] != float64(tagged.Version) || !strings.Contains(fmt.Sprint(got["what"]), "tag") {
		t.Fatalf("log of the editor's tag: %v (version %d)", got, tagged.Version)
	}

	// Its own edits it knows of already.
	callOK(t, listener, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"c"}}, nil)
	h.Quiet(t, "the listener's own edit", func() bool { return len(h.Logs) != 1 })

	// A level above info hears no edits; an operator's edit is heard at info.
	//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
	if err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"d"}}, nil)
	h.Quiet(t, "an edit above the level", func() bool { return len(h.Logs) != 1 })
	//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
	listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
	if _, err := svc.TagMessages(context.Background(), ops.TagArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end}, Tags: []string{"op"}}); err != nil {
		t.Fatal(err)
	}
	h.Await(t, "the operator's edit", func() bool { return len(h.Logs) == 2 && h.Logs[1]["author"] == "operator" })

	// A level that is none of the eight is invalid params.
	//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
	err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "loud"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "debug") {
		t.Fatalf("logging/setLevel loud: %v, want invalid params naming the levels", err)
	}
}

// TestProgressOfALongAppend: a call with a progressToken hears how far it
// has come.
func TestProgressOfALongAppend(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := facetest.NewHearing()
	cs, _ := connectAt(t, srv, "appender", legacyVersion, h.Options())
	msgs := make([]map[string]string, 10000)
	for i := range msgs {
		msgs[i] = map[string]string{"role": "user", "content": fmt.Sprintf("message %d", i)}
	}
	params := &mcp.CallToolParams{Name: "append_messages", Arguments: map[string]any{"session_id": sid, "messages": msgs}}
	params.SetProgressToken("append-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("append: %v %v", err, res)
	}
	h.Await(t, "progress to the end", func() bool { return len(h.Progress) >= 5 && h.Progress[len(h.Progress)-1] == 10001 })

	// Without a token, none.
	h.Locked(func() { h.Progress = nil })
	callOK(t, cs, "append_messages", map[string]any{"session_id": sid, "messages": msgs}, nil)
	h.Quiet(t, "progress without a token", func() bool { return len(h.Progress) > 0 })
}

// TestSubscribersHearEditsOverHTTP: the same, with both clients on
// Streamable HTTP: the news comes on the listener's GET stream.
func TestSubscribersHearEditsOverHTTP(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, _ := api(t, svc, apiOptions{})
	ctx := context.Background()
	join := func(name string, opts *mcp.ClientOptions) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{}}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	h := facetest.NewHearing()
	listener := join("listener", h.Options())
	editor := join("editor", nil)
	uri := URISessions + "/" + sid
	if err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
	if err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	start, end := 0, 1
	callOK(t, editor, "snip_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end}, nil)
	h.Await(t, "the snip", func() bool { return facetest.Count(h.Updated, uri) == 1 && len(h.Logs) == 1 })
	callOK(t, editor, "create_session", map[string]any{"title": "another"}, nil)
	h.Await(t, "the new session", func() bool { return h.Listed >= 1 })
}
