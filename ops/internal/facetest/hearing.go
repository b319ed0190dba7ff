package facetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Hearing is what one MCP client was told (resources updated, the list
// of resources changed, log messages, progress), gathered by its
// handlers (Options).
type Hearing struct {
	mu       sync.Mutex
	Updated  []string
	Listed   int
	Logs     []map[string]any
	Progress []float64
	signal   chan struct{}
}

// NewHearing is a Hearing of nothing yet.
func NewHearing() *Hearing { return &Hearing{signal: make(chan struct{}, 1024)} }

func (h *Hearing) note(f func()) {
	h.mu.Lock()
	f()
	h.mu.Unlock()
	h.signal <- struct{}{}
}

// Locked runs f under the hearing's lock, to change what was heard.
func (h *Hearing) Locked(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
}

// Heard is how often uri was told updated so far.
func (h *Hearing) Heard(uri string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Count(h.Updated, uri)
}

// ListChanges is how often the list of resources was told changed so far.
func (h *Hearing) ListChanges() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.Listed
}

// LogsSoFar is a copy of the logs heard so far.
func (h *Hearing) LogsSoFar() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.Logs...)
}

// Options are a client's options with the handlers that hear.
func (h *Hearing) Options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			h.note(func() { h.Updated = append(h.Updated, r.Params.URI) })
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			h.note(func() { h.Listed++ })
		},
		//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			data, _ := r.Params.Data.(map[string]any)
			h.note(func() { h.Logs = append(h.Logs, data) })
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			h.note(func() { h.Progress = append(h.Progress, r.Params.Progress) })
		},
	}
}

// Await waits until cond holds of what was heard (read under the
// hearing's lock), or fails after a while.
func (h *Hearing) Await(t *testing.T, what string, cond func() bool) {
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
			t.Fatalf("never heard %s: updated %v, list changed %d times, logs %v", what, h.Updated, h.Listed, h.Logs)
		}
	}
}

// Quiet checks that cond does not come to hold for a moment.
func (h *Hearing) Quiet(t *testing.T, what string, cond func() bool) {
	t.Helper()
	time.Sleep(150 * time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	if cond() {
		t.Fatalf("heard %s: updated %v, logs %v", what, h.Updated, h.Logs)
	}
}

// Count counts s in list.
func Count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
