package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/progress"
	"weft/ops/tools"
)

// News of edits: weft tells its MCP clients what changed, as it changes.
//
//   - A client subscribed to weft://sessions/{id} or its /context hears
//     notifications/resources/updated on every write to that session (and
//     one subscribed to weft://sessions, weft://sessions/recent, a room or
//     a search on every write to any: any may change what they list).
//   - Every client hears notifications/resources/list_changed when a
//     session is created, renamed or deleted.
//   - A client that set a logging level hears notifications/message (at
//     info) of the edits of others: who, what, the new version. Its own
//     edits it knows of already.
//
// The news comes from the backend's events (ops's bus in-process, the
// holding weft's /events through a relay), watched while any client is
// connected.

// logLevels are MCP's logging levels, least severe first.
//
//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// editLevel is the level edits are logged at.
//
//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
const editLevel mcp.LoggingLevel = "info"

// news is what a Server keeps to tell its clients of writes.
type news struct {
	mu sync.Mutex
	// subs are the subscribed URIs: for each, the session it names (""
	// for the lists of sessions, which every write changes) and the
	// clients subscribed to it.
	subs map[string]*subscription
	// clients are the connected sessions this server has seen, with the
	// origin their writes carry.
	clients map[*mcp.ServerSession]string
	serial  int
	// stop ends the watch of events; nil while nobody is connected.
	stop func()
}

type subscription struct {
	sessionID string
	by        map[*mcp.ServerSession]bool
}

// addNews wires subscriptions, logging levels and the watch of events into
// the SDK server.
func (s *Server) addNews(opts *mcp.ServerOptions) {
	s.news = &news{subs: map[string]*subscription{}, clients: map[*mcp.ServerSession]string{}}
	opts.SubscribeHandler = s.subscribe
	opts.UnsubscribeHandler = s.unsubscribe
}

// newsMiddleware notes every client that sends anything, so that the
// watch runs while one is connected and its edits carry its origin; and
// it refuses a logging level that is none of MCP's (the SDK takes any).
func (s *Server) newsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			s.track(ss)
		}
		if method == "logging/setLevel" {
			//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil && !validLevel(p.Level) {
				names := make([]string, len(logLevels))
				for i, l := range logLevels {
					names[i] = string(l)
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: level %q is not a logging level: use one of %s", p.Level, strings.Join(names, ", "))}
			}
		}
		return next(ctx, method, req)
	}
}

//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
func validLevel(l mcp.LoggingLevel) bool {
	for _, v := range logLevels {
		if v == l {
			return true
		}
	}
	return false
}

// track notes a connected client, starting the watch for the first; the
// client is forgotten when its session ends.
func (s *Server) track(ss *mcp.ServerSession) {
	n := s.news
	n.mu.Lock()
	if _, ok := n.clients[ss]; ok {
		n.mu.Unlock()
		return
	}
	n.serial++
	n.clients[ss] = fmt.Sprintf("mcp-%d", n.serial)
	if n.stop == nil {
		n.stop = s.watch()
	}
	n.mu.Unlock()
	go func() {
		_ = ss.Wait()
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.clients, ss)
		for uri, sub := range n.subs {
			if delete(sub.by, ss); len(sub.by) == 0 {
				delete(n.subs, uri)
			}
		}
		if len(n.clients) == 0 && n.stop != nil {
			n.stop()
			n.stop = nil
		}
	}()
}

// originOf is the origin the writes of a client carry.
func (s *Server) originOf(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	s.track(ss)
	s.news.mu.Lock()
	defer s.news.mu.Unlock()
	return s.news.clients[ss]
}

// watch follows the backend's events until the returned function is
// called.
func (s *Server) watch() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := s.follow(ctx, s.announce)
	return func() {
		cancel()
		<-done
	}
}

// follow calls fn with the backend's events until ctx ends; done closes
// then. A backend in this process is subscribed to before follow
// returns, and a remote one's stream has opened (or failed, or has
// not opened for a while), so a write made once it has returned is
// never missed: a stream that opens later than that, or again after a
// break, says a gap.
func (s *Server) follow(ctx context.Context, fn func(ops.Event)) (done <-chan struct{}) {
	closed := make(chan struct{})
	if w, ok := s.backend.(interface {
		WatchOpened(ctx context.Context, fn func(ops.Event), ready func() bool)
	}); ok {
		var mu sync.Mutex
		waiting, opened := true, make(chan struct{})
		go func() {
			defer close(closed)
			w.WatchOpened(ctx, fn, func() bool {
				mu.Lock()
				defer mu.Unlock()
				if waiting {
					close(opened)
				}
				return waiting
			})
		}()
		select {
		case <-opened:
		case <-time.After(streamWait):
			// No longer waited for: a stream that opens later says a
			// gap.
			mu.Lock()
			waiting = false
			mu.Unlock()
		}
		return closed
	}
	sub, ok := s.backend.(interface {
		Subscribe() (<-chan ops.Event, func())
	})
	if !ok {
		go func() {
			defer close(closed)
			s.backend.Watch(ctx, fn)
		}()
		return closed
	}
	events, stop := sub.Subscribe()
	go func() {
		defer close(closed)
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-events:
				if !ok {
					return
				}
				fn(ev)
			}
		}
	}()
	return closed
}

// streamWait bounds how long follow waits for a remote backend's stream
// to open.
const streamWait = 2 * time.Second

// announce tells the clients of one write.
func (s *Server) announce(ev ops.Event) {
	if ev.Kind == ops.EventPreferences || ev.Kind == tools.EventLost {
		return // the thread and its version are as they were; a break is told by the gap after it
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch ev.Kind {
	case ops.EventSessionCreated, ops.EventSessionDeleted, ops.EventSessionChanged:
		s.listChanged()
	case tools.EventGap:
		// Writes were missed: whatever was subscribed may have changed,
		// and so may the list; who did what is not known.
		s.listChanged()
		s.news.mu.Lock()
		uris := slices.Collect(maps.Keys(s.news.subs))
		s.news.mu.Unlock()
		for _, uri := range uris {
			_ = s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		return
	}
	n := s.news
	n.mu.Lock()
	var uris []string
	for uri, sub := range n.subs {
		if sub.sessionID == "" || sub.sessionID == ev.SessionID {
			uris = append(uris, uri)
		}
	}
	var others []*mcp.ServerSession
	for ss, origin := range n.clients {
		if ev.Origin == "" || origin != ev.Origin {
			others = append(others, ss)
		}
	}
	n.mu.Unlock()
	for _, uri := range uris {
		_ = s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
	if len(others) == 0 {
		return
	}
	data := map[string]any{
		"session_id": ev.SessionID, "version": ev.Version, "kind": ev.Kind,
		"author": ev.Author, "what": ev.What, "at": ev.At.UTC().Format(time.RFC3339),
	}
	if ev.OpID != "" {
		data["operation_id"], data["op_type"] = ev.OpID, ev.OpType
	}
	for _, ss := range others {
		// Log sends nothing to a client that set no level, or a level
		// above info.
		//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: editLevel, Logger: "weft", Data: data}); err != nil {
			s.logger.Debug("could not tell a client of an edit", "error", err)
		}
	}
}

// listChanged tells every client that the list of sessions changed. The
// SDK announces a change of its resources itself (debounced, and only to
// the clients of the newer protocol that listen for it), so weft
// registers its list of sessions again.
func (s *Server) listChanged() {
	s.mcp.AddResource(sessionsResource(), s.readSessions)
}

// subscribe accepts a subscription to a resource weft serves, resolving
// the session it names once: a title or prefix that later names another
// session does not move it.
func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	sessionID := ""
	r, err := parseResourceURI(uri)
	if err != nil {
		return resourceError(uri, err)
	}
	if r.kind == resSession || r.kind == resContext {
		info, err := s.findSession(ctx, r.ref)
		if err != nil {
			return resourceError(uri, err)
		}
		sessionID = info.SessionID
	}
	if req.Session == nil {
		return errors.New("a subscription needs a session")
	}
	s.track(req.Session)
	n := s.news
	n.mu.Lock()
	defer n.mu.Unlock()
	sub := n.subs[uri]
	if sub == nil {
		sub = &subscription{sessionID: sessionID, by: map[*mcp.ServerSession]bool{}}
		n.subs[uri] = sub
	}
	sub.by[req.Session] = true
	return nil
}

func (s *Server) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	n := s.news
	n.mu.Lock()
	defer n.mu.Unlock()
	if sub := n.subs[req.Params.URI]; sub != nil {
		if delete(sub.by, req.Session); len(sub.by) == 0 {
			delete(n.subs, req.Params.URI)
		}
	}
	return nil
}

// callContext is the context a tool call runs in: the calling client is
// the author and origin of any edit, and a client that sent a
// progressToken hears how far a long call has come.
func (s *Server) callContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	ctx = ops.WithAuthor(ctx, clientName(req))
	if req.Session == nil {
		return ctx
	}
	ctx = ops.WithOrigin(ctx, s.originOf(req.Session))
	if token := req.Params.GetProgressToken(); token != nil {
		ctx = progress.With(ctx, progressTo(ctx, req.Session, token))
	}
	return ctx
}

// progressTo sends a call's progress to its client, each report greater
// than the last as MCP asks.
func progressTo(ctx context.Context, ss *mcp.ServerSession, token any) progress.Func {
	last := -1
	return func(done, total int, message string) {
		if done <= last {
			return
		}
		last = done
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(done), Total: float64(total), Message: message})
	}
}
