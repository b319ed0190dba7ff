package export

import (
	"encoding/json"
	"io"
	"strings"
	"unicode"

	"weft/formats"
	"weft/model"
)

// Anthropic Messages API.

type xaMessage struct {
	Role    string    `json:"role"`
	Content []xaBlock `json:"content"`
}

// xaBlock is any content block; each type sets its own fields.
type xaBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Source    *xaSource       `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content of a tool_result: a string, or text and image blocks.
	Content any  `json:"content,omitempty"`
	IsError bool `json:"is_error,omitempty"`
}

type xaSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// xaMsg is a message being written: the items' blocks bl[lo:hi] (of one
// or more consecutive items of its role).
type xaMsg struct {
	role   model.Role
	lo, hi int32
}

// WriteAnthropic writes {"system": "...", "messages": [...]} as the
// Messages API takes it.
//
// The leading system messages are the system prompt; later ones (digest
// summaries, inserted notes) are user text "[system] ...". Tool messages
// are user messages of tool_result blocks. Messages alternate, starting
// with a user's: consecutive messages of one role are merged, and a
// thread that starts with the assistant gets a user "(continued)" first.
// Every tool_use is answered in the next message, every tool_result
// answers a tool_use of the message before (results first in their
// message); a call or result that is not is folded into text. Thinking
// is kept where it is signed, and dropped otherwise.
func WriteAnthropic(w io.Writer, items []formats.Item) (Report, error) {
	x := xpRead(items, xpAnthropic)
	j := xpNewLines(w)

	var system strings.Builder
	start := 0
	for ; start < len(x.xi); start++ {
		xi := &x.xi[start]
		if !xi.live() {
			continue
		}
		if xi.role != model.RoleSystem {
			break
		}
		xpPara(&system, x.bl[xi.lo].text)
	}
	msgs := make([]xaMsg, 0, len(x.xi)-start)
	for i := start; i < len(x.xi); i++ {
		xi := &x.xi[i]
		if !xi.live() {
			continue
		}
		role := model.RoleUser
		switch xi.role {
		case model.RoleAssistant:
			role = model.RoleAssistant
		case model.RoleSystem:
			x.bl[xi.lo].text = "[system] " + x.bl[xi.lo].text
		}
		if n := len(msgs); n > 0 && msgs[n-1].role == role {
			msgs[n-1].hi = xi.hi
			continue
		}
		msgs = append(msgs, xaMsg{role: role, lo: xi.lo, hi: xi.hi})
	}
	x.pairAnthropic(msgs)
	x.noteCalls()

	j.w.WriteString("{")
	if system.Len() > 0 {
		j.w.WriteString(`"system":`)
		if err := j.value(system.String()); err != nil {
			return x.report(), err
		}
		j.w.WriteString(",")
	}
	j.w.WriteString(`"messages":[`)
	if len(msgs) > 0 && msgs[0].role == model.RoleAssistant {
		i := int(x.bl[msgs[0].lo].item)
		x.note(i, "%s: the thread starts with an assistant message: added a user message \"(continued)\" before it", x.itemRef(i))
		m := xaMessage{Role: "user", Content: []xaBlock{{Type: "text", Text: "(continued)"}}}
		if err := j.elem(&m); err != nil {
			return x.report(), err
		}
	}
	var blocks []xaBlock
	var m xaMessage // one value, reused: nothing is allocated per message
	for k := range msgs {
		blocks = x.anBlocks(&msgs[k], blocks[:0])
		if k == len(msgs)-1 && msgs[k].role == model.RoleAssistant {
			// A final assistant message is a prefill: it may not end
			// in whitespace.
			if last := &blocks[len(blocks)-1]; last.Type == "text" {
				last.Text = strings.TrimRightFunc(last.Text, unicode.IsSpace)
			}
		}
		m = xaMessage{Role: string(msgs[k].role), Content: blocks}
		if err := j.elem(&m); err != nil {
			return x.report(), err
		}
	}
	return x.report(), j.end()
}

// pairAnthropic pairs each tool_result with a tool_use of the message
// right before its own; the rest are folded.
func (x *xpThread) pairAnthropic(msgs []xaMsg) {
	var calls []int32
	for k := range msgs {
		m := &msgs[k]
		if m.role != model.RoleUser {
			continue
		}
		calls = calls[:0]
		if k > 0 {
			prev := &msgs[k-1]
			for b := prev.lo; b < prev.hi; b++ {
				if x.bl[b].kind == xpCall {
					calls = append(calls, b)
				}
			}
		}
		for b := m.lo; b < m.hi; b++ {
			if x.bl[b].kind == xpResult && !x.match(calls, b) {
				x.foldResult(b)
			}
		}
	}
	for k := range msgs {
		if m := &msgs[k]; m.role == model.RoleAssistant {
			for b := m.lo; b < m.hi; b++ {
				if blk := &x.bl[b]; blk.kind == xpCall && blk.pair < 0 {
					x.foldCall(b)
				}
			}
		}
	}
}

// anBlocks appends a message's content blocks: in a user message, the
// tool results first.
func (x *xpThread) anBlocks(m *xaMsg, blocks []xaBlock) []xaBlock {
	if m.role == model.RoleUser {
		for b := m.lo; b < m.hi; b++ {
			if blk := &x.bl[b]; blk.kind == xpResult && !blk.folded {
				blocks = append(blocks, x.anResult(b))
			}
		}
	}
	for b := m.lo; b < m.hi; b++ {
		blk := &x.bl[b]
		switch blk.kind {
		case xpText:
			blocks = append(blocks, xaBlock{Type: "text", Text: blk.text})
		case xpThinking:
			if blk.redacted != "" {
				blocks = append(blocks, xaBlock{Type: "redacted_thinking", Data: blk.redacted})
			} else {
				blocks = append(blocks, xaBlock{Type: "thinking", Thinking: &blk.text, Signature: blk.signature})
			}
		case xpImage:
			blocks = append(blocks, blk.img.xaBlock())
		case xpCall:
			if blk.folded {
				blocks = append(blocks, xaBlock{Type: "text", Text: blk.foldedText()})
			} else {
				blocks = append(blocks, xaBlock{Type: "tool_use", ID: blk.id, Name: blk.name, Input: blk.input})
			}
		case xpResult:
			if blk.folded {
				// Its images follow as blocks of their own.
				blocks = append(blocks, xaBlock{Type: "text", Text: blk.foldedText()})
			} else {
				b += x.attachedCount(b)
			}
		}
	}
	return blocks
}

// anResult is a paired result's tool_result block, with its images.
func (x *xpThread) anResult(b int32) xaBlock {
	blk := &x.bl[b]
	r := xaBlock{Type: "tool_result", ToolUseID: x.bl[blk.pair].id, IsError: blk.isErr}
	text := strings.TrimSpace(blk.text) != ""
	n := x.attachedCount(b)
	if n == 0 {
		if text {
			r.Content = &blk.text
		}
		return r
	}
	content := make([]xaBlock, 0, n+1)
	if text {
		content = append(content, xaBlock{Type: "text", Text: blk.text})
	}
	for a := b + 1; a <= b+n; a++ {
		content = append(content, x.bl[a].img.xaBlock())
	}
	r.Content = content
	return r
}

func (s *xpImageSource) xaBlock() xaBlock {
	if s.url != "" {
		return xaBlock{Type: "image", Source: &xaSource{Type: "url", URL: s.url}}
	}
	return xaBlock{Type: "image", Source: &xaSource{Type: "base64", MediaType: s.mediaType, Data: s.data}}
}
