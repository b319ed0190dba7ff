package export

import (
	"maps"
	"slices"

	sjson "github.com/segmentio/encoding/json"

	"weft/formats"
	"weft/model"
)

// A thread sent to the Messages API again and again as it grows (the
// context proxy's: an agent sends its whole conversation with every
// request) is the same up to its last messages each time. An
// AnthropicHead keeps the start of such a thread exported and encoded,
// with what reading the rest takes from it, so that the next export
// reads and writes only the items after it (AnthropicFrom).
//
// The start stays as it was when the thread goes on because a head ends
// with a user message and the items after it begin an assistant
// message: messages of one role merge only with their neighbours, and a
// result pairs only with a call of the message before its own, so
// nothing after the cut changes a message before it, nor the system
// prompt, nor the "(continued)" a thread starting with the assistant
// gets. What is left is what the exporter looks up across the whole
// thread: the first call with a result's ID names the result's tool and
// says whether a folded result's call is in the thread; a result
// anywhere says why a call was folded; a call without a usable ID gets a
// generated one that no other call of the thread has. A head records
// what its messages took from the items after it (lookups, unanswered),
// and an export from it checks that the items after it now say the
// same.

// AnthropicHead is the start of a thread exported for the Messages API
// and encoded, kept to export the thread again from its end when the
// thread goes on. It is read only: share it freely.
type AnthropicHead struct {
	xpBefore
	o      AnthropicOptions
	system string
	// msgs are the head's messages; json their encoding (AppendJSON),
	// the elements of a list, comma-separated, ends where each ends in
	// it.
	msgs []AnthropicMessage
	json []byte
	ends []int
	// notes are the report's lines on the head's items, in order.
	notes []string
	// lookups are the call IDs the head looked for in the thread's calls
	// that no call of the head has (those of its results, and those a
	// generated ID of its calls was checked against), with what the
	// thread's calls said: the first one's tool name, and whether there
	// was one. unanswered are the call IDs of the head that no result of
	// the head answers, with whether a result in the thread did.
	lookups    map[string]headLookup
	unanswered map[string]bool
}

type headLookup struct {
	name  string
	found bool
}

// Items is how many items of the thread the head covers.
func (h *AnthropicHead) Items() int { return h.items }

// Messages are the head's messages: read only.
func (h *AnthropicHead) Messages() []AnthropicMessage { return h.msgs }

// JSON is the head's messages encoded as AppendJSON encodes them, the
// elements of the "messages" list (comma-separated, without brackets).
func (h *AnthropicHead) JSON() []byte { return h.json }

// Span is where message k of the head lies in JSON.
func (h *AnthropicHead) Span(k int) (start, end int) {
	if k > 0 {
		start = h.ends[k-1] + 1 // after the comma
	}
	return start, h.ends[k]
}

// Size is about how many bytes the head holds.
func (h *AnthropicHead) Size() int {
	n := 2*len(h.json) + 64*(len(h.calls)+len(h.results)+len(h.used)+len(h.notes))
	for k := range h.msgs {
		n += 48 + 200*len(h.msgs[k].Content)
	}
	return n
}

// AppendJSON appends v encoded as encoding/json encodes it with HTML
// left unescaped, raw JSON values in it trusted as valid: the encoding
// of the bodies weft sends a provider (a thread may be megabytes, and
// this encoder is a few times faster).
func AppendJSON(dst []byte, v any) ([]byte, error) {
	return sjson.Append(dst, v, sjson.TrustRawMessage)
}

// AnthropicPart is a Messages API export of a thread that starts with a
// head.
type AnthropicPart struct {
	// Body holds the thread's system prompt, and the messages after the
	// head's (all of them when Head is nil).
	Body AnthropicBody
	// Report is the whole thread's.
	Report Report
	// Head is the start of the thread, its messages before Body's: the
	// head the export went on from, or one made now. Keep it for the
	// thread's next export.
	Head *AnthropicHead
}

// AnthropicFrom exports a thread for the Messages API as AnthropicWith
// does, going on from head when it is not nil: items are then the items
// after the head's, and the head's own items (the first head.Items() of
// the thread: the caller makes sure they have not changed) are not read
// again. It reports false, exporting nothing, when the items after the
// head cannot be written without reading the head's again: export the
// whole thread then, with head nil.
//
// It makes a new head, ending at the last user message before the
// thread's item limit, when there is none yet, or when the new one would
// cover step items more than head; limit keeps out of it the items that
// may change by the next export.
func AnthropicFrom(head *AnthropicHead, items []formats.Item, o AnthropicOptions, limit, step int) (AnthropicPart, bool) {
	var x *xpThread
	if head != nil {
		if head.o != o {
			return AnthropicPart{}, false
		}
		x = xpReadAfter(&head.xpBefore, items, xpAnthropic)
		if !head.holds(x) {
			return AnthropicPart{}, false
		}
	} else {
		x = xpRead(items, xpAnthropic)
	}
	an := x.planMessages(!(o.PromptApart && o.SystemTurns), o.SystemTurns)
	if head != nil && len(an.msgs) > 0 && an.msgs[0].role != model.RoleAssistant {
		return AnthropicPart{}, false // it would merge with the head's last message
	}
	part := AnthropicPart{Head: head, Body: AnthropicBody{System: an.system}}
	if head != nil {
		part.Body.System = head.system
	}
	part.Body.Messages = make([]AnthropicMessage, 0, len(an.msgs)+1)
	_ = an.each(func(m *AnthropicMessage) error {
		part.Body.Messages = append(part.Body.Messages, m.own())
		return nil
	})
	part.Report = x.report()
	if head != nil {
		part.Report.Folded = append(slices.Clip(head.notes), part.Report.Folded...)
	}
	if next := x.cutHead(head, an, &part.Body, o, limit, step); next != nil {
		part.Body.Messages = part.Body.Messages[len(next.msgs)-headLen(head):]
		part.Head = next
	}
	return part, true
}

func headLen(h *AnthropicHead) int {
	if h == nil {
		return 0
	}
	return len(h.msgs)
}

// holds reports whether the items read after the head (x) say of the
// head's calls and results what the items the head was made with did.
func (h *AnthropicHead) holds(x *xpThread) bool {
	for id, was := range h.lookups {
		name, found := x.callName(id)
		if found != was.found || name != was.name {
			return false
		}
	}
	for id, was := range h.unanswered {
		if x.hasResult(id) != was {
			return false
		}
	}
	return true
}

// cutHead makes the head that ends at the last user message followed by
// an assistant one at or before item limit of the thread, when it
// covers step items more than head (any, when head is nil); nil when
// there is none. x and an are the
// items after head, read and planned; body their messages.
func (x *xpThread) cutHead(head *AnthropicHead, an *anPlan, body *AnthropicBody, o AnthropicOptions, limit, step int) *AnthropicHead {
	off := 0
	if head != nil {
		off = head.items
	}
	k := len(an.msgs) - 1
	for ; k > 0; k-- {
		if an.msgs[k-1].role == model.RoleUser && an.msgs[k].role == model.RoleAssistant && off+int(x.bl[an.msgs[k].lo].item) <= limit {
			break
		}
	}
	if k <= 0 {
		return nil
	}
	cut := int(x.bl[an.msgs[k].lo].item) // the items of the new head are x.items[:cut]
	if head != nil && off+cut < head.items+step {
		return nil
	}
	if head == nil && an.continued {
		k++ // the "(continued)" message is the head's
	}
	h := &AnthropicHead{o: o, system: body.System}
	if head != nil {
		h.calls, h.results, h.used = maps.Clone(head.calls), maps.Clone(head.results), maps.Clone(head.used)
		h.told = maps.Clone(head.told)
		h.notes = slices.Clip(head.notes)
		h.msgs, h.json, h.ends = slices.Clip(head.msgs), slices.Clip(head.json), slices.Clip(head.ends)
	} else {
		h.calls, h.results, h.used = map[string]string{}, map[string]struct{}{}, map[string]struct{}{}
	}
	if h.told == nil {
		h.told = map[string]bool{}
	}
	h.items = off + cut
	for c := range x.bl {
		b := &x.bl[c]
		if int(b.item) >= cut {
			break // blocks are in item order
		}
		if b.kind != xpCall {
			continue
		}
		h.used[b.id] = struct{}{}
		if !b.folded && b.name != b.shown {
			h.told[b.shown] = true
		}
	}
	for i := range x.items[:cut] {
		for k := range x.items[i].Parts {
			p := &x.items[i].Parts[k]
			switch {
			case p.ToolCallID == "":
			case p.Type == model.PartToolCall:
				if _, ok := h.calls[p.ToolCallID]; !ok {
					h.calls[p.ToolCallID] = p.ToolName
				}
			case p.Type == model.PartToolResult:
				h.results[p.ToolCallID] = struct{}{}
			}
		}
	}
	// What the head's messages took from the items after it: kept to
	// be checked against the items after it next time.
	h.lookups, h.unanswered = map[string]headLookup{}, map[string]bool{}
	lookup := func(id string) {
		if _, ok := h.calls[id]; !ok {
			name, found := x.callName(id)
			h.lookups[id] = headLookup{name, found}
		}
	}
	if head != nil {
		for id, was := range head.lookups {
			if _, ok := h.calls[id]; !ok {
				h.lookups[id] = was
			}
		}
		for id, was := range head.unanswered {
			if _, ok := h.results[id]; !ok {
				h.unanswered[id] = was
			}
		}
	}
	for i := range x.items[:cut] {
		for k := range x.items[i].Parts {
			p := &x.items[i].Parts[k]
			switch {
			case p.ToolCallID == "":
			case p.Type == model.PartToolResult:
				lookup(p.ToolCallID)
			case p.Type == model.PartToolCall:
				if _, ok := h.results[p.ToolCallID]; !ok {
					h.unanswered[p.ToolCallID] = x.hasResult(p.ToolCallID)
				}
			}
		}
	}
	for _, p := range x.probes {
		if int(p.item) < cut {
			lookup(p.id)
		}
	}
	for _, n := range x.notes { // sorted by item (report)
		if n.item >= cut {
			break
		}
		h.notes = append(h.notes, n.text)
	}
	var err error
	for j := range body.Messages[:k] {
		if len(h.json) > 0 {
			h.json = append(h.json, ',')
		}
		if h.json, err = AppendJSON(h.json, &body.Messages[j]); err != nil {
			return nil
		}
		h.ends = append(h.ends, len(h.json))
	}
	h.msgs = append(h.msgs, body.Messages[:k]...)
	return h
}
