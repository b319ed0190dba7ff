package mcpserver

import (
	"context"
	"net/http"
	"strings"
	"time"

	"weft/formats"
	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/reads"
)

// The holder's events, for the wefts that relay to it: GET /events is a
// stream of ops.Event, one JSON object a line, for as long as the client
// reads it. A relay turns them into news for its own clients, as the
// holder's server does for its own.

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
	// The events are taken off the service as they come and written by
	// this handler, as many as are waiting before each flush: a client
	// on a slow connection, or a burst of writes, does not hold up the
	// service's subscriber (which would drop events when it fell
	// behind).
	queue := make(chan ops.Event, eventQueue)
	take := func(ev ops.Event) {
		select {
		case queue <- ev:
		default: // further behind than the queue: the client sees the version jump
		}
	}
	// Subscribed before the stream answers: a write the client makes
	// once it is open is heard.
	s.follow(ctx, take)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	// A body read as it comes has no read deadline to meet.
	_ = rc.SetWriteDeadline(time.Time{})
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-queue:
			for more := true; more; {
				b, err := formats.Encode(ev)
				if err == nil {
					if _, err := w.Write(append(b, '\n')); err != nil {
						return
					}
				}
				select {
				case ev = <-queue:
				default:
					more = false
				}
			}
			_ = rc.Flush()
		}
	}
}

// eventQueue is how many events /events holds for a client that has not
// taken them yet.
const eventQueue = 16384

// apiContext is the context of a tool called through /api: the author,
// origin and result cap its headers name. A cap that does not read is
// refused.
func apiContext(r *http.Request) (context.Context, error) {
	ctx := ops.WithAuthor(r.Context(), httpx.Author(r))
	if o := strings.TrimSpace(r.Header.Get(httpx.OriginHeader)); o != "" {
		ctx = ops.WithOrigin(ctx, httpx.APIOrigin+o)
	}
	if h := r.Header.Get(httpx.ResultCapHeader); h != "" {
		c, err := reads.ParseCap(h)
		if err != nil {
			return nil, ops.Invalidf("%s: %v", httpx.ResultCapHeader, err)
		}
		ctx = reads.WithCap(ctx, c)
	}
	return ctx, nil
}
