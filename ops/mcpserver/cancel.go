package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
)

// A call its client cancelled (notifications/cancelled; over the HTTP
// API, a request the client dropped) ends weft's work for it: its
// context is done, and what weft was waiting on with that context — the
// client's model (sampling/createMessage), the summary endpoint — is
// cancelled with it. Such a call did not fail, so it is not logged as a
// failure.

// unrelatedOnceDone is a call's context that, once the call is over,
// carries none of its values. The SDK relates what a server sends during a
// call to the client's request through the context, and over Streamable
// HTTP sends it on that request's stream. A client that cancels a call
// stops reading that stream, so the cancellation of a sampling request
// weft made for the call would go where nobody reads it; without the
// call's values it goes out on the session's own stream, which the
// client still reads.
type unrelatedOnceDone struct{ context.Context }

func (c unrelatedOnceDone) Value(key any) any {
	if c.Context.Err() != nil {
		return nil
	}
	return c.Context.Value(key)
}

// logFailure logs a tool's error that is weft's, not the request's: a
// refusal (*ops.Error) is the caller's to read, and a call whose context
// ended was cancelled, not failed.
func logFailure(logger *slog.Logger, ctx context.Context, tool string, err error) {
	var opsErr *ops.Error
	switch {
	case errors.As(err, &opsErr):
	case ctx.Err() != nil:
		logger.Debug("tool call cancelled", "tool", tool, "reason", context.Cause(ctx))
	default:
		logger.Error("tool failed", "tool", tool, "error", err)
	}
}

// errSessionEnded is why the calls of a session that ended were
// cancelled.
var errSessionEnded = errors.New("the MCP session ended")

// callsInFlight are the tool calls running, by MCP session, so that the
// end of a session (DELETE, expiry, the listener closing) cancels them:
// the SDK waits for a session's calls to finish before it closes it, and
// a call waiting on the model of a client that left would wait for ever.
type callsInFlight struct {
	mu sync.Mutex
	by map[*mcp.ServerSession]map[*context.CancelCauseFunc]bool
}

// inFlight returns the context a session's tool call runs in, and the
// function that marks the call done.
func (s *Server) inFlight(ctx context.Context, ss *mcp.ServerSession) (context.Context, func()) {
	if ss == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	c := &s.calls
	c.mu.Lock()
	if c.by == nil {
		c.by = map[*mcp.ServerSession]map[*context.CancelCauseFunc]bool{}
	}
	if c.by[ss] == nil {
		c.by[ss] = map[*context.CancelCauseFunc]bool{}
	}
	c.by[ss][&cancel] = true
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		if delete(c.by[ss], &cancel); len(c.by[ss]) == 0 {
			delete(c.by, ss)
		}
		c.mu.Unlock()
		cancel(nil)
	}
}

// endCalls cancels the tool calls in flight of the sessions match picks.
func (s *Server) endCalls(match func(*mcp.ServerSession) bool) {
	c := &s.calls
	c.mu.Lock()
	var cancels []*context.CancelCauseFunc
	for ss, calls := range c.by {
		if match(ss) {
			for cancel := range calls {
				cancels = append(cancels, cancel)
			}
		}
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		(*cancel)(errSessionEnded)
	}
}

// closeSession ends an MCP session, its calls in flight first.
func (s *Server) closeSession(ss *mcp.ServerSession) {
	s.endCalls(func(x *mcp.ServerSession) bool { return x == ss })
	_ = ss.Close()
}

// endingSessions cancels the calls in flight of a session a client ends
// (DELETE with its Mcp-Session-Id) before the SDK closes it.
func (s *Server) endingSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			s.endCalls(func(ss *mcp.ServerSession) bool { return ss.ID() == id })
		}
		next.ServeHTTP(w, r)
	})
}
