package proxy

import (
	"bytes"
	"slices"
	"sync"

	"weft/formats"
	"weft/formats/export"
	"weft/model"
	"weft/ops"
)

// The effective thread a proxied session sends upstream is the same
// from one request to the next up to its last messages: an agent sends
// its whole conversation each time, one turn longer. Exporting and
// encoding it all again for every request would cost more than the rest
// of what weft does for it, so the engine keeps, for each session, the
// head of the thread it last sent (export.AnthropicHead: its messages
// exported and encoded), with what the head was made of: the view's
// items it covers, the synthetic items among them, and the identity of
// the request's messages its stored items were read from. A request
// whose thread has those same items (an edit that changes any of them
// changes the view's items or their synthetic items; another client's
// message changes the request's) exports and encodes only the items
// after the head; any other exports the thread whole, and keeps a new
// head.

const (
	// headMargin keeps the view's last items out of a head: a client
	// marks its latest messages for its provider's cache
	// (cache_control), and a message of the head that gets a mark is
	// encoded again.
	headMargin = 8
	// headStep is how many items more a new head must cover than the
	// one it replaces: each new head copies what the one before holds.
	headStep = 32
	// headsBytes bounds what the heads kept hold together.
	headsBytes = 64 << 20
)

// proxyHead is a session's head, and what it was made of.
type proxyHead struct {
	head *export.AnthropicHead
	// items are the view's items the head covers; synth the synthetic
	// ones among them, as they were.
	items []model.Item
	synth []model.Synthetic
	// reads is how many of the request's messages the stored items
	// among them were read from (the highest seq), key the identity of
	// those messages (Places.KeyOf).
	reads int
	key   ops.PlaceKey
	size  int
	used  uint64
}

// proxyHeads are the heads kept, by session.
type proxyHeads struct {
	mu    sync.Mutex
	m     map[string]*proxyHead
	bytes int
	uses  uint64
}

func (hs *proxyHeads) get(sessionID string) *proxyHead {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	e := hs.m[sessionID]
	if e != nil {
		hs.uses++
		e.used = hs.uses
	}
	return e
}

// put keeps a session's head in place of the one before, and lets go of
// the heads used least lately while they hold more than headsBytes.
func (hs *proxyHeads) put(sessionID string, e *proxyHead) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = map[string]*proxyHead{}
	}
	if old, ok := hs.m[sessionID]; ok {
		hs.bytes -= old.size
	}
	hs.uses++
	e.used = hs.uses
	hs.m[sessionID] = e
	hs.bytes += e.size
	for hs.bytes > headsBytes && len(hs.m) > 1 {
		oldest := ""
		for id, x := range hs.m {
			if oldest == "" || x.used < hs.m[oldest].used {
				oldest = id
			}
		}
		hs.bytes -= hs.m[oldest].size
		delete(hs.m, oldest)
	}
}

// newProxyHead records what head was made of: v's first items, their
// stored messages read as the request's (msgs, from places). It is nil
// when a stored item was not read from the request.
func newProxyHead(head *export.AnthropicHead, v *model.View, places ops.Places, msgs int) *proxyHead {
	n := head.Items()
	e := &proxyHead{head: head, items: v.Items[:n:n]}
	for _, it := range e.items {
		switch {
		case it.Synth >= 0:
			e.synth = append(e.synth, v.Synth[it.Synth])
		case it.Seq > uint64(msgs):
			return nil
		default:
			e.reads = max(e.reads, int(it.Seq))
		}
	}
	if e.reads > 0 {
		var ok bool
		if e.key, ok = places.KeyOf(e.reads - 1); !ok {
			return nil
		}
	}
	e.size = head.Size() + 16*n
	for _, sy := range e.synth {
		e.size += len(sy.Content) + len(sy.Parts) + 64
	}
	return e
}

// fits reports whether the thread of v, read from places, starts with
// the items the head was made of.
func (e *proxyHead) fits(v *model.View, places ops.Places) bool {
	n := len(e.items)
	if v.Len() < n || !slices.Equal(v.Items[:n], e.items) {
		return false
	}
	k := 0
	for _, it := range e.items {
		if it.Synth < 0 {
			continue
		}
		if int(it.Synth) >= len(v.Synth) || !sameSynthetic(&v.Synth[it.Synth], &e.synth[k]) {
			return false
		}
		k++
	}
	if e.reads > 0 {
		if key, ok := places.KeyOf(e.reads - 1); !ok || key != e.key {
			return false
		}
	}
	return true
}

// sameSynthetic reports whether two synthetic items are exported the
// same: what the exporters read of them is the same.
func sameSynthetic(a, b *model.Synthetic) bool {
	return a.OpID == b.OpID && a.K == b.K && a.OpType == b.OpType && a.Role == b.Role &&
		a.Content == b.Content && a.Name == b.Name && bytes.Equal(a.Parts, b.Parts)
}

// anthropicTurn writes into turn the effective thread for the Messages
// API: after the session's head when the thread starts with it, else
// whole; and keeps the head made for the next request. v is the
// session's view, stored its message count, msgs the request's; a
// sessionID "" keeps no head.
func (e *Engine) anthropicTurn(turn *Turn, sessionID string, v *model.View, stored int, msgs []ops.CallerMessage, places ops.Places) error {
	// The Messages API takes system turns in the conversation: an
	// agent's own stay where they were, and a summary is one, also one
	// that opens the thread (the client's system prompt is its own).
	o := export.AnthropicOptions{SystemTurns: true, PromptApart: true}
	// The items the next request may not have as they are: the new
	// messages (the next one's are stored, perhaps elsewhere) and the
	// latest few.
	limit := v.Len() - headMargin
	var part export.AnthropicPart
	done := false
	var kept *proxyHead
	if sessionID != "" {
		kept = e.heads.get(sessionID)
	}
	if kept != nil && kept.fits(v, places) {
		if items, ok := proxyItems(v, kept.head.Items(), msgs, stored); ok {
			part, done = export.AnthropicFrom(kept.head, items, o, limit, headStep)
		}
	}
	if !done {
		items, err := e.effectiveItems(v, stored, msgs)
		if err != nil {
			return err
		}
		part, _ = export.AnthropicFrom(nil, items, o, limit, headStep)
	}
	if part.Head != nil && sessionID != "" && (kept == nil || part.Head != kept.head) {
		if h := newProxyHead(part.Head, v, places, len(msgs)); h != nil {
			e.heads.put(sessionID, h)
		}
	}
	turn.Anthropic, turn.AnthropicHead, turn.Adjustments = &part.Body, part.Head, part.Report.Folded
	return nil
}

// effectiveItems are the items of the thread sent: v's, and the
// request's messages past the stored ones.
func (e *Engine) effectiveItems(v *model.View, stored int, msgs []ops.CallerMessage) ([]formats.Item, error) {
	if items, ok := proxyItems(v, 0, msgs, stored); ok {
		return items, nil
	}
	items, err := e.svc.ThreadItems(v, msgs)
	if err != nil {
		return nil, err
	}
	for k, m := range msgs[stored:] {
		items = append(items, newItem(stored+k, &m))
	}
	return items, nil
}

// proxyItems are the items of the thread sent from v's item from on: v's
// stored items are the request's messages (msgs; they continue the
// session), and msgs past the stored ones follow. It is false when an
// item must be read from the store.
func proxyItems(v *model.View, from int, msgs []ops.CallerMessage, stored int) ([]formats.Item, bool) {
	items := make([]formats.Item, 0, v.Len()-from+len(msgs)-stored)
	for _, it := range v.Items[from:] {
		switch {
		case it.Synth >= 0:
			items = append(items, ops.SynthItem(v, it))
		case it.Seq == 0 || it.Seq > uint64(len(msgs)):
			return nil, false
		default:
			items = append(items, ops.CallerItem(v, it, &msgs[it.Seq-1]))
		}
	}
	for k := range msgs[stored:] {
		items = append(items, newItem(stored+k, &msgs[stored+k]))
	}
	return items, true
}

// newItem is the item of a request's message that is not stored yet,
// the k-th (from 0) of the thread.
func newItem(k int, m *ops.CallerMessage) formats.Item {
	nm := &m.Message
	return formats.Item{ID: model.MessageID(uint64(k + 1)), Role: nm.Role, Content: nm.Content, Name: nm.Name, Parts: m.Parts, Tokens: nm.Tokens}
}
