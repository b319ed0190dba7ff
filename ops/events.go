package ops

import (
	"context"
	"sync"
	"time"

	"weft/model"
)

// Event announces a write. Every face can subscribe: the TUI refreshes and
// says who did what, the MCP server notifies clients.
type Event struct {
	SessionID string `json:"session_id"`
	// Title is the session's title as the write left it, so a face can
	// name the session without reading it again.
	Title   string       `json:"title,omitempty"`
	Version uint64       `json:"version"`
	Kind    EventKind    `json:"kind"`
	OpID    string       `json:"operation_id,omitempty"`
	OpType  model.OpType `json:"op_type,omitempty"`
	Author  string       `json:"author"`
	// What says it in words: "digest of 12–40", "appended 3 messages".
	What string    `json:"what"`
	At   time.Time `json:"at"`
	// Origin is the opaque name of the connection the write came through
	// (WithOrigin), so a face can tell a client of the edits of others
	// without echoing its own; "" for writes that name none.
	Origin string `json:"origin,omitempty"`
}

type originKey struct{}

// WithOrigin returns a context whose writes announce origin in their
// events: a face's name for the connection they came through (an MCP
// session), which it never shows.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

// OriginFrom returns the origin a context carries, or "".
func OriginFrom(ctx context.Context) string {
	o, _ := ctx.Value(originKey{}).(string)
	return o
}

// EventKind is what kind of write an event reports.
type EventKind string

// The kinds of writes.
const (
	EventSessionCreated EventKind = "session_created" // a session was made (by create_session or an import)
	EventAppended       EventKind = "appended"        // messages were stored at the end
	EventOpCreated      EventKind = "op_created"      // an operation was made
	EventOpChanged      EventKind = "op_changed"      // toggled, reverted or restored
	EventTagsSet        EventKind = "tags_set"        // the session's active tags changed
	EventSessionChanged EventKind = "session_changed" // its record changed (a new title)
	EventSessionDeleted EventKind = "session_deleted" // it is gone from the file
	// EventPreferences: pending context preferences were set or used;
	// the thread and its version are as they were.
	EventPreferences EventKind = "preferences"
)

// bus is an in-process publish/subscribe. A slow subscriber misses events
// rather than slowing writers down; every event carries the session's
// version, so a subscriber that missed one still knows to refresh.
type bus struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
}

// subscriberBuffer is how far a subscriber may fall behind before it
// misses events: a burst of writes (thousands of appends through two
// wefts at once, the other weft's arriving in a rush after a long write
// here) is held whole; an event costs about 160 bytes.
const subscriberBuffer = 8192

func (b *bus) subscribe() (<-chan Event, func()) {
	ch := make(chan Event, subscriberBuffer)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[chan Event]struct{})
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, ch)
			b.mu.Unlock()
			close(ch)
		})
	}
}

func (b *bus) publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- e:
		default:
		}
	}
}
