package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/tools"
)

// hearing is what one client was told, gathered by its handlers.
type hearing struct {
	mu       sync.Mutex
	updated  []string
	listed   int
	logs     []map[string]any
	progress []float64
	signal   chan struct{}
}

func newHearing() *hearing { return &hearing{signal: make(chan struct{}, 1024)} }

func (h *hearing) note(f func()) {
	h.mu.Lock()
	f()
	h.mu.Unlock()
	h.signal <- struct{}{}
}

func (h *hearing) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			h.note(func() { h.updated = append(h.updated, r.Params.URI) })
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			h.note(func() { h.listed++ })
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			data, _ := r.Params.Data.(map[string]any)
			h.note(func() { h.logs = append(h.logs, data) })
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			h.note(func() { h.progress = append(h.progress, r.Params.Progress) })
		},
	}
}

// await waits until cond holds of what was heard, or fails after a while.
func (h *hearing) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		h.mu.Lock()
		ok := cond()
		h.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-h.signal:
		case <-deadline:
			h.mu.Lock()
			defer h.mu.Unlock()
			t.Fatalf("never heard %s: updated %v, list changed %d times, logs %v", what, h.updated, h.listed, h.logs)
		}
	}
}

// quiet checks that nothing more is heard for a moment.
func (h *hearing) quiet(t *testing.T, what string, cond func() bool) {
	t.Helper()
	time.Sleep(150 * time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	if cond() {
		t.Fatalf("heard %s: updated %v, logs %v", what, h.updated, h.logs)
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestSubscribersHearEdits: one client subscribes to a session and its
// context, another edits; the first is told of every write.
func TestSubscribersHearEdits(t *testing.T) {
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := newHearing()
	listener, _ := connectAt(t, srv, "listener", legacyVersion, h.options())
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
	h.await(t, "the tag", func() bool { return count(h.updated, session) == 1 && count(h.updated, context) == 1 })
	callOK(t, editor, "append_messages", map[string]any{"session_id": sid, "messages": []map[string]string{{"role": "user", "content": "more"}}}, nil)
	h.await(t, "the append", func() bool { return count(h.updated, session) == 2 && count(h.updated, context) == 2 })

	// Another session's writes are not this subscription's news.
	var created ops.CreateSessionResult
	callOK(t, editor, "create_session", map[string]any{"title": "elsewhere"}, &created)
	callOK(t, editor, "append_messages", map[string]any{"session_id": created.SessionID, "messages": []map[string]string{{"role": "user", "content": "x"}}}, nil)
	h.quiet(t, "another session's append", func() bool { return len(h.updated) != 4 })

	// After unsubscribing, nothing.
	if err := listener.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: session}); err != nil {
		t.Fatal(err)
	}
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"again"}}, nil)
	h.await(t, "the context's update", func() bool { return count(h.updated, context) == 3 })
	h.quiet(t, "the unsubscribed session", func() bool { return count(h.updated, session) != 2 })

	// A subscription names a session that exists.
	err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: URISessions + "/nosuchsession"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeResourceNotFound {
		t.Fatalf("subscribing to a missing session: %v, want resource not found", err)
	}
}

// TestListChangedOnSessionsMadeAndGone: every client hears that the list
// of sessions changed when one is created, renamed or deleted.
func TestListChangedOnSessionsMadeAndGone(t *testing.T) {
	svc, _ := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := newHearing()
	connectAt(t, srv, "listener", legacyVersion, h.options())
	editor, _ := connectAt(t, srv, "editor", legacyVersion, nil)

	var created ops.CreateSessionResult
	callOK(t, editor, "create_session", map[string]any{"title": "new"}, &created)
	h.await(t, "the new session", func() bool { return h.listed >= 1 })
	n := h.listed
	callOK(t, editor, "rename_session", map[string]any{"session_id": created.SessionID, "title": "renamed"}, nil)
	h.await(t, "the rename", func() bool { return h.listed > n })
	n = h.listed
	callOK(t, editor, "delete_session", map[string]any{"session_id": created.SessionID}, nil)
	h.await(t, "the deletion", func() bool { return h.listed > n })
}

// TestLogsTellOfOthersEdits: a client that set a logging level hears of
// the edits of others (who, what, the new version), not of its own.
func TestLogsTellOfOthersEdits(t *testing.T) {
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := newHearing()
	listener, _ := connectAt(t, srv, "listener", legacyVersion, h.options())
	editor, _ := connectAt(t, srv, "editor", legacyVersion, nil)
	ctx := context.Background()

	// Before a level is set, a client hears no logs.
	start, end := 1, 2
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"a"}}, nil)
	h.quiet(t, "a log before any level was set", func() bool { return len(h.logs) > 0 })

	if err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	var tagged ops.TagResult
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"b"}}, &tagged)
	h.await(t, "the editor's tag", func() bool { return len(h.logs) == 1 })
	got := h.logs[0]
	if got["author"] != "editor" || got["session_id"] != sid || got["version"] != float64(tagged.Version) || !strings.Contains(fmt.Sprint(got["what"]), "tag") {
		t.Fatalf("log of the editor's tag: %v (version %d)", got, tagged.Version)
	}

	// Its own edits it knows of already.
	callOK(t, listener, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"c"}}, nil)
	h.quiet(t, "the listener's own edit", func() bool { return len(h.logs) != 1 })

	// A level above info hears no edits; an operator's edit is heard at info.
	if err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	callOK(t, editor, "tag_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end, "tags": []string{"d"}}, nil)
	h.quiet(t, "an edit above the level", func() bool { return len(h.logs) != 1 })
	listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
	if _, err := svc.TagMessages(context.Background(), ops.TagArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end}, Tags: []string{"op"}}); err != nil {
		t.Fatal(err)
	}
	h.await(t, "the operator's edit", func() bool { return len(h.logs) == 2 && h.logs[1]["author"] == "operator" })

	// A level that is none of the eight is invalid params.
	err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "loud"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "debug") {
		t.Fatalf("logging/setLevel loud: %v, want invalid params naming the levels", err)
	}
}

// TestProgressOfALongAppend: a call with a progressToken hears how far it
// has come.
func TestProgressOfALongAppend(t *testing.T) {
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := newHearing()
	cs, _ := connectAt(t, srv, "appender", legacyVersion, h.options())
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
	h.await(t, "progress to the end", func() bool { return len(h.progress) >= 5 && h.progress[len(h.progress)-1] == 10001 })

	// Without a token, none.
	h.mu.Lock()
	h.progress = nil
	h.mu.Unlock()
	callOK(t, cs, "append_messages", map[string]any{"session_id": sid, "messages": msgs}, nil)
	h.quiet(t, "progress without a token", func() bool { return len(h.progress) > 0 })
}

// TestSubscribersHearEditsOverHTTP: the same, with both clients on
// Streamable HTTP: the news comes on the listener's GET stream.
func TestSubscribersHearEditsOverHTTP(t *testing.T) {
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
	h := newHearing()
	listener := join("listener", h.options())
	editor := join("editor", nil)
	uri := URISessions + "/" + sid
	if err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if err := listener.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	start, end := 0, 1
	callOK(t, editor, "snip_messages", map[string]any{"session_id": sid, "start_idx": start, "end_idx": end}, nil)
	h.await(t, "the snip", func() bool { return count(h.updated, uri) == 1 && len(h.logs) == 1 })
	callOK(t, editor, "create_session", map[string]any{"title": "another"}, nil)
	h.await(t, "the new session", func() bool { return h.listed >= 1 })
}
