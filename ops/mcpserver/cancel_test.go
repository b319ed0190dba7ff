package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/summary"
	"weft/ops/tools"
)

// logRecorder keeps every record logged.
type logRecorder struct {
	mu      sync.Mutex
	records []string
}

func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelDebug }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool { line += fmt.Sprintf(" %s=%v", a.Key, a.Value); return true })
	r.records = append(r.records, line)
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// at returns the records at level l or above.
func (r *logRecorder) at(l slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		lvl, _, _ := strings.Cut(rec, " ")
		var got slog.Level
		if got.UnmarshalText([]byte(lvl)) == nil && got >= l {
			out = append(out, rec)
		}
	}
	return out
}

// stallingSampler is a client's model that answers nothing until the
// request for it is cancelled, and says when that was.
type stallingSampler struct {
	asked     chan struct{}
	cancelled chan struct{}
	release   chan struct{} // closed when the test ends
}

func newStallingSampler(t *testing.T) *stallingSampler {
	s := &stallingSampler{asked: make(chan struct{}, 8), cancelled: make(chan struct{}, 8), release: make(chan struct{})}
	t.Cleanup(func() { close(s.release) })
	return s
}

func (s *stallingSampler) options() *mcp.ClientOptions {
	//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
	return &mcp.ClientOptions{CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		s.asked <- struct{}{}
		select {
		case <-ctx.Done():
			s.cancelled <- struct{}{}
			return nil, ctx.Err()
		case <-s.release:
			return nil, errors.New("the test is over")
		}
	}}
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// TestCancelledCallCancelsSampling: over HTTP, a client that cancels a
// summary it asked for (notifications/cancelled) also sees weft cancel
// the sampling request weft sent it for that summary, and the
// cancellation is not logged as an error.
func TestCancelledCallCancelsSampling(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	logs := &logRecorder{}
	srv := New(tools.Local{Service: svc}, Options{Logger: slog.New(logs)})
	ts := httptestServer(t, srv)
	model := newStallingSampler(t)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "canceller"}, model.options()).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "summarize_message_range", Arguments: map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 5, "source": "sampling"}})
		done <- err
	}()
	waitFor(t, model.asked, "the sampling request")
	cancel() // the SDK client sends notifications/cancelled
	waitFor(t, model.cancelled, "weft's cancellation of its sampling request")
	if err := <-done; err == nil {
		t.Errorf("the cancelled call answered")
	}
	// The call ended; nothing about it is an error.
	time.Sleep(100 * time.Millisecond)
	if bad := logs.at(slog.LevelWarn); len(bad) > 0 {
		t.Errorf("a cancelled call was logged as a failure: %q", bad)
	}
	// The session goes on.
	callOK(t, cs, "list_sessions", map[string]any{}, nil)

	// A client that ends its session (DELETE) in the middle of a summary
	// ends the call too, and that is no failure either. (The SDK client's
	// Close would wait for its own model's answer first.)
	other, err := mcp.NewClient(&mcp.Implementation{Name: "leaver"}, model.options()).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	go other.CallTool(ctx, &mcp.CallToolParams{Name: "summarize_message_range", Arguments: map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 5, "source": "sampling"}})
	waitFor(t, model.asked, "the second sampling request")
	if status, _, body := do(t, "DELETE", ts.URL+"/mcp", "", map[string]string{"Mcp-Session-Id": other.ID()}); status >= 300 {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(logs.matching("tool call cancelled")) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := logs.matching("tool call cancelled"); len(got) < 2 {
		t.Errorf("the call of a session that ended did not end: %q", logs.at(slog.LevelDebug))
	}
	if bad := logs.at(slog.LevelWarn); len(bad) > 0 {
		t.Errorf("a call whose session ended was logged as a failure: %q", bad)
	}
}

// matching returns the records that hold s.
func (r *logRecorder) matching(s string) []string {
	var out []string
	for _, rec := range r.at(slog.LevelDebug) {
		if strings.Contains(rec, s) {
			out = append(out, rec)
		}
	}
	return out
}

// httptestServer serves srv behind the listener's guard on a loopback
// test server.
func httptestServer(t *testing.T, srv *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(listen.Handler(listen.Options{Faces: []httpx.Face{srv.Face()}}))
	t.Cleanup(func() {
		for ss := range srv.MCP().Sessions() {
			ss.Close()
		}
		ts.Close()
	})
	return ts
}

// TestDroppedAPICallCancelsTheSummary: a client that drops its POST
// /api/summarize_message_range stops the request weft made of the summary
// endpoint for it, and nothing is logged as a failure.
func TestDroppedAPICallCancelsTheSummary(t *testing.T) {
	t.Parallel()
	asked, stopped := make(chan struct{}, 1), make(chan struct{}, 1)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read whole, the request's context ends when weft hangs up.
		io.ReadAll(r.Body)
		asked <- struct{}{}
		select {
		case <-r.Context().Done():
			stopped <- struct{}{}
		case <-time.After(20 * time.Second):
		}
	}))
	defer model.Close()
	logs := &logRecorder{}
	svc, _ := seeded(t, ops.WithSummaryEndpoint(summary.Endpoint{URL: model.URL + "/v1"}), ops.WithLogger(slog.New(logs)))
	srv := New(tools.Local{Service: svc}, Options{Logger: slog.New(logs)})
	ts := httptestServer(t, srv)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/api/summarize_message_range", strings.NewReader(`{"start_idx":0,"end_idx":5,"source":"endpoint"}`))
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, asked, "the request to the summary endpoint")
	cancel()
	waitFor(t, stopped, "the summary request's end")
	<-done
	time.Sleep(100 * time.Millisecond)
	if bad := logs.at(slog.LevelWarn); len(bad) > 0 {
		t.Errorf("a dropped call was logged as a failure: %q", bad)
	}
}

// TestListenerClosesWithASummaryInFlight: closing the listener does not
// wait for the model of a client that is asked for a summary.
func TestListenerClosesWithASummaryInFlight(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0"})
	model := newStallingSampler(t)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "asked"}, model.options()).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.Addr()}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "summarize_message_range", Arguments: map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 5, "source": "sampling"}})
	waitFor(t, model.asked, "the sampling request")
	closed := make(chan struct{})
	go func() {
		l.Close()
		close(closed)
	}()
	waitFor(t, closed, "the listener's close")
}
