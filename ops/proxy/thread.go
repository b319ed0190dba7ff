package proxy

import (
	"encoding/json"
	"slices"

	"weft/formats/export"
)

// The Messages API thread a proxied request sends: the exporter's
// messages, the client's cache breakpoints on the blocks they marked,
// and its messages' fields of their own on the messages that carry
// their content. A session's thread starts with the head the engine
// keeps of it (export.AnthropicHead), whose messages were encoded when
// it was made: they are copied as they were, and only a message of the
// head that gets a breakpoint or fields is encoded again. The rest, a
// few messages, is encoded for each request.

// anThread is a thread's "messages" as the proxy writes them.
type anThread struct {
	head *export.AnthropicHead
	// hmsgs are the head's messages; marks the breakpoints on their
	// blocks, by message and block.
	hmsgs []export.AnthropicMessage
	marks map[[2]int]json.RawMessage
	// tail are the messages after the head's.
	tail []anMessage
	// own are the fields of their own the messages get, by index in the
	// thread.
	own map[int][]byte
}

// anthropicThread is the thread turn sends, with the request's cache
// breakpoints and messages' own fields in their places.
func (b *proxyBody) anthropicThread(turn *Turn) *anThread {
	t := &anThread{head: turn.AnthropicHead, tail: make([]anMessage, len(turn.Anthropic.Messages))}
	if t.head != nil {
		t.hmsgs = t.head.Messages()
	}
	for k, m := range turn.Anthropic.Messages {
		t.tail[k] = anMessage{Role: m.Role, Content: make([]anBlock, len(m.Content))}
		for j, blk := range m.Content {
			t.tail[k].Content[j] = anBlock{AnthropicBlock: blk}
		}
	}
	for _, mk := range b.cacheMarks(turn.CacheMarked) {
		t.mark(mk)
	}
	if len(b.own) > 0 {
		t.own = b.placeFields(len(t.hmsgs)+len(t.tail), t.role, t.says)
	}
	return t
}

// block is block j of message m of the thread, and its breakpoint.
func (t *anThread) block(m, j int) (*export.AnthropicBlock, json.RawMessage) {
	if h := len(t.hmsgs); m >= h {
		blk := &t.tail[m-h].Content[j]
		return &blk.AnthropicBlock, blk.CacheControl
	}
	return &t.hmsgs[m].Content[j], t.marks[[2]int{m, j}]
}

func (t *anThread) blocks(m int) int {
	if h := len(t.hmsgs); m >= h {
		return len(t.tail[m-h].Content)
	}
	return len(t.hmsgs[m].Content)
}

func (t *anThread) role(m int) string {
	if h := len(t.hmsgs); m >= h {
		return t.tail[m-h].Role
	}
	return t.hmsgs[m].Role
}

// mark puts a breakpoint on the latest block of its type that says what
// its block said (a text's text, a call's or result's ID) and has none
// yet; a breakpoint whose block is no longer sent is dropped.
func (t *anThread) mark(mk marked) {
	for m := len(t.hmsgs) + len(t.tail) - 1; m >= 0; m-- {
		for j := t.blocks(m) - 1; j >= 0; j-- {
			blk, cc := t.block(m, j)
			if cc != nil || blk.Type != mk.typ || blockKey(blk) != mk.key {
				continue
			}
			if h := len(t.hmsgs); m >= h {
				t.tail[m-h].Content[j].CacheControl = mk.cacheControl
			} else {
				if t.marks == nil {
					t.marks = map[[2]int]json.RawMessage{}
				}
				t.marks[[2]int{m, j}] = mk.cacheControl
			}
			return
		}
	}
}

// says reports whether message m of the thread is of o's role and has
// a block of o's type that says what o's said.
func (t *anThread) says(m int, o *ownMsg) bool {
	if t.role(m) != o.role {
		return false
	}
	for j := range t.blocks(m) {
		if blk, _ := t.block(m, j); blk.Type == o.typ && blockKey(blk) == o.key {
			return true
		}
	}
	return false
}

// appendJSON appends the thread as a JSON list: the head's messages as
// they were encoded, but for those that got a breakpoint or fields,
// encoded again; then the rest.
func (t *anThread) appendJSON(out []byte) ([]byte, error) {
	out = append(out, '[')
	var err error
	if t.head != nil {
		var changed []int
		for m := range t.own {
			if m < len(t.hmsgs) {
				changed = append(changed, m)
			}
		}
		for at := range t.marks {
			if !slices.Contains(changed, at[0]) {
				changed = append(changed, at[0])
			}
		}
		slices.Sort(changed)
		enc := t.head.JSON()
		from := 0
		for _, m := range changed {
			start, end := t.head.Span(m)
			out = append(out, enc[from:start]...)
			msg := anMessage{Role: t.hmsgs[m].Role, Content: make([]anBlock, len(t.hmsgs[m].Content))}
			for j, blk := range t.hmsgs[m].Content {
				msg.Content[j] = anBlock{AnthropicBlock: blk, CacheControl: t.marks[[2]int{m, j}]}
			}
			if out, err = t.appendMessage(out, m, &msg); err != nil {
				return nil, err
			}
			from = end
		}
		out = append(out, enc[from:]...)
	}
	for k := range t.tail {
		if len(t.hmsgs) > 0 || k > 0 {
			out = append(out, ',')
		}
		if out, err = t.appendMessage(out, len(t.hmsgs)+k, &t.tail[k]); err != nil {
			return nil, err
		}
	}
	return append(out, ']'), nil
}

// appendMessage appends message m of the thread, with its own fields
// after its role and content.
func (t *anThread) appendMessage(out []byte, m int, msg *anMessage) ([]byte, error) {
	out, err := export.AppendJSON(out, msg)
	if err != nil {
		return nil, err
	}
	return appendFields(out, t.own[m]), nil
}
