package mcpserver

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/tools"
)

// The holder's events, for the wefts that relay to it: GET /events is a
// stream of ops.Event, one JSON object a line, for as long as the client
// reads it. A relay turns them into news for its own clients, as the
// holder's server does for its own.

const (
	// eventsRetry is how long a relay waits before it opens the stream
	// again after it broke.
	eventsRetry = time.Second
	// heldOrigin starts the origin of a write a relay did not send.
	heldOrigin = "held/"
)

// serveEvents streams the backend's events until the client goes or the
// listener closes.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		httpx.WriteError(w, http.StatusMethodNotAllowed, "GET /events streams the writes, one JSON object a line")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	// A body read as it comes has no read deadline to meet.
	rc.SetWriteDeadline(time.Time{})
	s.backend.Watch(ctx, func(ev ops.Event) {
		b, err := tools.Encode(ev)
		if err != nil {
			return
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			cancel()
			return
		}
		rc.Flush()
	})
}

// apiContext is the context of a tool called through /api: the author
// and origin its headers name.
func apiContext(r *http.Request) context.Context {
	author := httpx.CleanAuthor(r.Header.Get(httpx.AuthorHeader))
	if author == "" {
		author = "http"
	}
	ctx := ops.WithAuthor(r.Context(), author)
	if o := strings.TrimSpace(r.Header.Get(httpx.OriginHeader)); o != "" {
		ctx = ops.WithOrigin(ctx, httpx.APIOrigin+o)
	}
	return ctx
}

// newRelayID names a relay process among those that write through one
// holder.
func newRelayID() string { return "relay-" + rand.Text()[:10] }

// readEvents reads one stream of events until it ends, calling opened
// once it is open; read says whether it was.
func (b *remoteBackend) readEvents(ctx context.Context, opened func(), fn func(ops.Event)) (read bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.target()+httpx.EventsPath, nil)
	if err != nil {
		return false, err
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s answered %s", httpx.EventsPath, resp.Status)
	}
	opened()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var ev ops.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			fn(ev)
		}
	}
	return true, sc.Err()
}
