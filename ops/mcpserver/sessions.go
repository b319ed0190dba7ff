package mcpserver

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Streamable HTTP sessions that survive real use.
//
// The SDK closes a session that sent no POST for its timeout, even while
// the client's GET stream (where the news of edits comes) is open, and a
// client such as Claude Code does not start a new one. weft keeps the
// timeout itself: a session expires once it has had no request open,
// POST or GET, for the timeout. A request for a session that is gone is
// answered with a JSON-RPC error (checkJSONRPC), so a client can read
// that it should initialize again.
//
// Streams are resumable: an event store keeps what was sent, each call's
// stream starts with a priming event whose ID a client can resume from,
// and weft adds a retry time to it, so a dropped stream does not lose an
// in-flight result.

const (
	// codeSessionNotFound is the JSON-RPC error of a request for a session
	// that is not (or no longer) there, as other MCP servers answer it.
	codeSessionNotFound = -32001
	// streamRetry is the reconnection time weft's priming events suggest.
	streamRetry = time.Second
)

// primePrefix starts the SDK's priming event.
var primePrefix = []byte("event: prime\n")

// retryLine is the SSE field weft adds to priming events.
var retryLine = []byte("retry: " + strconv.FormatInt(streamRetry.Milliseconds(), 10) + "\n")

// withRetry returns a priming event with the retry field added, before
// its data; any other write is returned as it is.
func withRetry(p []byte) []byte {
	if !bytes.HasPrefix(p, primePrefix) || bytes.Contains(p, []byte("\nretry:")) {
		return p
	}
	i := bytes.Index(p, []byte("data:"))
	if i < 0 {
		return p
	}
	out := make([]byte, 0, len(p)+len(retryLine))
	out = append(out, p[:i]...)
	out = append(out, retryLine...)
	return append(out, p[i:]...)
}

// sessionKeeper expires the MCP sessions of one handler that have had no
// request open for the timeout.
type sessionKeeper struct {
	server  *Server
	timeout time.Duration

	mu   sync.Mutex
	kept map[string]*keptSession
}

type keptSession struct {
	open  int
	timer *time.Timer
}

func newSessionKeeper(s *Server, timeout time.Duration) *sessionKeeper {
	return &sessionKeeper{server: s, timeout: timeout, kept: map[string]*keptSession{}}
}

// serve runs one request to /mcp with the session it names kept alive
// meanwhile; a session the request created is kept from then on.
func (k *sessionKeeper) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if k.timeout <= 0 {
		next.ServeHTTP(w, r)
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id != "" && k.begin(id) {
		defer k.end(id)
	}
	if id != "" {
		next.ServeHTTP(w, r)
		return
	}
	// The session is kept from the moment its ID is sent: the client may
	// open its GET stream before this request's handler has returned.
	sw := &sessionStart{ResponseWriter: w, keeper: k}
	next.ServeHTTP(sw, r)
	if sw.made != "" {
		k.end(sw.made)
	}
}

// sessionStart notes the session a request creates as its answer's
// headers go out.
type sessionStart struct {
	http.ResponseWriter
	keeper      *sessionKeeper
	wroteHeader bool
	made        string
}

func (w *sessionStart) WriteHeader(code int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		if made := w.Header().Get("Mcp-Session-Id"); made != "" {
			w.made = made
			w.keeper.mu.Lock()
			if w.keeper.kept[made] == nil {
				w.keeper.kept[made] = &keptSession{open: 1}
			}
			w.keeper.mu.Unlock()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionStart) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// FlushError flushes the answer (http.ResponseController finds it).
func (w *sessionStart) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the connection's own writer.
func (w *sessionStart) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// begin notes a request open for a kept session, stopping its clock;
// false for a session it does not keep.
func (k *sessionKeeper) begin(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	ks := k.kept[id]
	if ks == nil {
		return false
	}
	if ks.open++; ks.timer != nil {
		ks.timer.Stop()
	}
	return true
}

// end notes a request done; the last one starts the session's clock.
func (k *sessionKeeper) end(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ks := k.kept[id]
	if ks == nil {
		return
	}
	if ks.open--; ks.open > 0 {
		return
	}
	if ks.timer == nil {
		ks.timer = time.AfterFunc(k.timeout, func() { k.expire(id, ks) })
	} else {
		ks.timer.Reset(k.timeout)
	}
}

// expire closes a session whose clock ran out, unless a request opened
// meanwhile.
func (k *sessionKeeper) expire(id string, ks *keptSession) {
	k.mu.Lock()
	if k.kept[id] != ks || ks.open > 0 {
		k.mu.Unlock()
		return
	}
	delete(k.kept, id)
	k.mu.Unlock()
	for ss := range k.server.mcp.Sessions() {
		if ss.ID() == id {
			k.server.closeSession(ss)
		}
	}
}
