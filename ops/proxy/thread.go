package proxy

import (
	"encoding/json"

	"weft/formats/export"
)

// The Messages API thread a proxied request sends, where an operation
// is in the way: the request's messages that go as they came, and
// between them the exporter's messages, the client's cache breakpoints
// on the blocks they marked, and its messages' fields of their own on
// the messages that carry their content (verbatim.go).

// anThread is the messages the proxy writes anew.
type anThread struct {
	msgs []anMessage
	// own are the fields of their own the messages get, by index.
	own map[int][]byte
}

// segThread is a thread in stretches (verbatim.go): the request's
// messages that go as they came, and t's messages, written anew, between
// them.
type segThread struct {
	t    *anThread
	segs []anSeg
	raw  []json.RawMessage
}

// segmentThread is the thread turn sends in stretches: the breakpoints
// and own fields of the messages written anew are placed on them; those
// that go as they came carry their own.
func (b *proxyBody) segmentThread(turn *Turn) *segThread {
	return &segThread{t: b.anthropicThread(turn, turn.goesAsIs), segs: turn.anSegs, raw: b.messages}
}

func (st *segThread) appendJSON(out []byte) ([]byte, error) {
	return appendSegments(out, st.segs, st.raw, st.t.appendMessage)
}

// anthropicThread is the messages turn writes anew, with the request's
// cache breakpoints and messages' own fields in their places; those of
// the request's messages that skip says go as they came are theirs.
func (b *proxyBody) anthropicThread(turn *Turn, skip func(raw int) bool) *anThread {
	t := &anThread{msgs: make([]anMessage, len(turn.Anthropic.Messages))}
	for k, m := range turn.Anthropic.Messages {
		t.msgs[k] = anMessage{Role: m.Role, Content: make([]anBlock, len(m.Content))}
		for j, blk := range m.Content {
			t.msgs[k].Content[j] = anBlock{AnthropicBlock: blk}
		}
	}
	var hits []int
	for _, r := range turn.CacheMarked {
		if !skip(r) {
			hits = append(hits, r)
		}
	}
	for _, mk := range b.cacheMarks(hits) {
		t.mark(mk)
	}
	if len(b.own) > 0 {
		t.own = b.placeFields(len(t.msgs), func(m int) string { return t.msgs[m].Role }, t.says, skip)
	}
	return t
}

// mark puts a breakpoint on the latest block of its type that says what
// its block said (a text's text, a call's or result's ID) and has none
// yet; a breakpoint whose block is no longer sent is dropped.
func (t *anThread) mark(mk marked) {
	for m := len(t.msgs) - 1; m >= 0; m-- {
		for j := len(t.msgs[m].Content) - 1; j >= 0; j-- {
			blk := &t.msgs[m].Content[j]
			if blk.CacheControl != nil || blk.Type != mk.typ || blockKey(&blk.AnthropicBlock) != mk.key {
				continue
			}
			blk.CacheControl = mk.cacheControl
			return
		}
	}
}

// says reports whether message m is of o's role and has a block of o's
// type that says what o's said.
func (t *anThread) says(m int, o *ownMsg) bool {
	if t.msgs[m].Role != o.role {
		return false
	}
	for j := range t.msgs[m].Content {
		if blk := &t.msgs[m].Content[j]; blk.Type == o.typ && blockKey(&blk.AnthropicBlock) == o.key {
			return true
		}
	}
	return false
}

// appendMessage appends message m, with its own fields after its role
// and content.
func (t *anThread) appendMessage(out []byte, m int) ([]byte, error) {
	out, err := export.AppendJSON(out, &t.msgs[m])
	if err != nil {
		return nil, err
	}
	return appendFields(out, t.own[m]), nil
}
