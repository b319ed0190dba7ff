package export

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"unicode"

	"weft/formats"
	"weft/model"
)

// AnthropicBody is the body of a Messages API request, as far as the
// thread goes: the system prompt and the messages.
type AnthropicBody struct {
	System   string             `json:"system,omitempty"`
	Messages []AnthropicMessage `json:"messages"`
}

// AnthropicMessage is one message of the Messages API.
type AnthropicMessage struct {
	Role    string           `json:"role"`
	Content []AnthropicBlock `json:"content"`
}

// AnthropicBlock is a content block: text, thinking, redacted_thinking,
// image, tool_use or tool_result; each type sets its own fields.
type AnthropicBlock struct {
	Type      string           `json:"type"`
	Text      string           `json:"text,omitempty"`
	Thinking  *string          `json:"thinking,omitempty"`
	Signature string           `json:"signature,omitempty"`
	Data      string           `json:"data,omitempty"`
	Source    *AnthropicSource `json:"source,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	// Input of a tool_use: a JSON object.
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content of a tool_result: a string, or []AnthropicBlock of text
	// and images.
	Content any  `json:"content,omitempty"`
	IsError bool `json:"is_error,omitempty"`
}

// AnthropicSource is an image's data (base64, with its media type) or
// its URL.
type AnthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Anthropic converts items into a Messages API body, and says in the
// Report what it had to change.
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
func Anthropic(items []formats.Item) (AnthropicBody, Report) {
	return AnthropicWith(items, AnthropicOptions{})
}

// AnthropicOptions change how Anthropic writes a thread.
type AnthropicOptions struct {
	// SystemTurns keeps a system message after the thread began (a
	// digest's summary, an agent's mid-conversation system turn) as a
	// message of role system, as the Messages API takes them, rather
	// than user text "[system] ..."; a tool call is answered across
	// such turns.
	SystemTurns bool
	// PromptApart: the request's system prompt is its own, apart from
	// the items (the context proxy's): a system message that opens the
	// thread (a digest's summary) is a system turn too, not part of the
	// prompt. With SystemTurns only.
	PromptApart bool
	// Within: the items are a stretch inside a thread, between messages
	// the caller sends as they came (the context proxy's): no
	// "(continued)" before an assistant message that opens them.
	Within bool
}

// AnthropicWith is Anthropic with options.
func AnthropicWith(items []formats.Item, o AnthropicOptions) (AnthropicBody, Report) {
	an := planAnthropic(items, o)
	body := AnthropicBody{System: an.system, Messages: make([]AnthropicMessage, 0, len(an.msgs)+1)}
	_ = an.each(func(m *AnthropicMessage) error {
		body.Messages = append(body.Messages, m.own())
		return nil
	})
	return body, an.x.report()
}

// WriteAnthropic writes {"system": "...", "messages": [...]}, the body
// Anthropic converts items into, a message a line.
func WriteAnthropic(w io.Writer, items []formats.Item) (Report, error) {
	an := planAnthropic(items, AnthropicOptions{})
	j := newLines(w)
	_, _ = j.w.WriteString("{")
	if an.system != "" {
		_, _ = j.w.WriteString(`"system":`)
		if err := j.value(an.system); err != nil {
			return an.x.report(), err
		}
		_, _ = j.w.WriteString(",")
	}
	_, _ = j.w.WriteString(`"messages":[`)
	if err := an.each(func(m *AnthropicMessage) error { return j.elem(m) }); err != nil {
		return an.x.report(), err
	}
	return an.x.report(), j.end()
}

// own is the message with its own copy of the blocks the writer reuses,
// a result's text as a string.
func (m *AnthropicMessage) own() AnthropicMessage {
	c := AnthropicMessage{Role: m.Role, Content: slices.Clone(m.Content)}
	for k := range c.Content {
		if s, ok := c.Content[k].Content.(*string); ok {
			c.Content[k].Content = *s
		}
	}
	return c
}

// xaMsg is a message being written: the items' blocks bl[lo:hi] (of one
// or more consecutive items of its role).
type xaMsg struct {
	role   model.Role
	lo, hi int32
}

// anPlan is a thread read for the Messages API: its system prompt, and
// its messages merged by role and paired.
type anPlan struct {
	x      *xpThread
	system string
	msgs   []xaMsg
	// continued: the thread starts with the assistant.
	continued bool
}

func planAnthropic(items []formats.Item, o AnthropicOptions) *anPlan {
	an := planMessages(items, !(o.PromptApart && o.SystemTurns), o.SystemTurns)
	if o.Within && an.continued {
		an.continued = false
		an.x.dropNote(int(an.x.bl[an.msgs[0].lo].item))
	}
	return an
}

// planMessages reads items as Messages API messages. With systemPrompt,
// the leading system messages are the system prompt and later ones user
// text "[system] ..." (or, with systemTurns, system turns); without it (a
// Claude Code transcript, which has no place for one) every system
// message is a user message as it is, for the writer to label.
func planMessages(items []formats.Item, systemPrompt, systemTurns bool) *anPlan {
	return xpRead(items, xpAnthropic).planMessages(systemPrompt, systemTurns)
}

// planMessages plans the items read as Messages API messages.
func (x *xpThread) planMessages(systemPrompt, systemTurns bool) *anPlan {
	var system strings.Builder
	start := 0
	for ; systemPrompt && start < len(x.xi); start++ {
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
			switch {
			case systemTurns:
				role = model.RoleSystem
			case systemPrompt:
				x.bl[xi.lo].text = "[system] " + x.bl[xi.lo].text
			}
		}
		if n := len(msgs); n > 0 && msgs[n-1].role == role {
			msgs[n-1].hi = xi.hi
			continue
		}
		msgs = append(msgs, xaMsg{role: role, lo: xi.lo, hi: xi.hi})
	}
	x.pairAnthropic(msgs)
	x.noteCalls()
	an := &anPlan{x: x, system: system.String(), msgs: msgs}
	if len(msgs) > 0 && msgs[0].role == model.RoleAssistant {
		i := int(x.bl[msgs[0].lo].item)
		x.note(i, "%s: the thread starts with an assistant message: added a user message \"(continued)\" before it", x.itemRef(i))
		an.continued = true
	}
	return an
}

// each gives yield the messages in order, one value and its blocks
// reused (nothing is allocated per message: BenchmarkWriteAnthropic100k);
// the message is only valid during the call.
func (an *anPlan) each(yield func(*AnthropicMessage) error) error {
	if an.continued {
		m := AnthropicMessage{Role: "user", Content: []AnthropicBlock{{Type: "text", Text: "(continued)"}}}
		if err := yield(&m); err != nil {
			return err
		}
	}
	var m AnthropicMessage
	var blocks []AnthropicBlock
	for k := range an.msgs {
		blocks = an.x.anBlocks(&an.msgs[k], blocks[:0])
		if k == len(an.msgs)-1 && an.msgs[k].role == model.RoleAssistant {
			// A final assistant message is a prefill: it may not end
			// in whitespace.
			if last := &blocks[len(blocks)-1]; last.Type == "text" {
				last.Text = strings.TrimRightFunc(last.Text, unicode.IsSpace)
			}
		}
		m = AnthropicMessage{Role: string(an.msgs[k].role), Content: blocks}
		if err := yield(&m); err != nil {
			return err
		}
	}
	return nil
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
		p := k - 1
		for p >= 0 && msgs[p].role == model.RoleSystem {
			p-- // a system turn between them: the call before it
		}
		if p >= 0 {
			prev := &msgs[p]
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
func (x *xpThread) anBlocks(m *xaMsg, blocks []AnthropicBlock) []AnthropicBlock {
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
			blocks = append(blocks, AnthropicBlock{Type: "text", Text: blk.text})
		case xpThinking:
			if blk.redacted != "" {
				blocks = append(blocks, AnthropicBlock{Type: "redacted_thinking", Data: blk.redacted})
			} else {
				blocks = append(blocks, AnthropicBlock{Type: "thinking", Thinking: &blk.text, Signature: blk.signature})
			}
		case xpImage:
			blocks = append(blocks, blk.img.anBlock())
		case xpCall:
			if blk.folded {
				blocks = append(blocks, AnthropicBlock{Type: "text", Text: blk.foldedText()})
			} else {
				blocks = append(blocks, AnthropicBlock{Type: "tool_use", ID: blk.id, Name: blk.name, Input: blk.input})
			}
		case xpResult:
			if blk.folded {
				// Its images follow as blocks of their own.
				blocks = append(blocks, AnthropicBlock{Type: "text", Text: blk.foldedText()})
			} else {
				b += x.attachedCount(b)
			}
		}
	}
	return blocks
}

// anResult is a paired result's tool_result block, with its images.
func (x *xpThread) anResult(b int32) AnthropicBlock {
	blk := &x.bl[b]
	r := AnthropicBlock{Type: "tool_result", ToolUseID: x.bl[blk.pair].id, IsError: blk.isErr}
	text := strings.TrimSpace(blk.text) != ""
	n := x.attachedCount(b)
	if n == 0 {
		if text {
			r.Content = &blk.text
		}
		return r
	}
	content := make([]AnthropicBlock, 0, n+1)
	if text {
		content = append(content, AnthropicBlock{Type: "text", Text: blk.text})
	}
	for a := b + 1; a <= b+n; a++ {
		content = append(content, x.bl[a].img.anBlock())
	}
	r.Content = content
	return r
}

func (s *xpImageSource) anBlock() AnthropicBlock {
	if s.url != "" {
		return AnthropicBlock{Type: "image", Source: &AnthropicSource{Type: "url", URL: s.url}}
	}
	return AnthropicBlock{Type: "image", Source: &AnthropicSource{Type: "base64", MediaType: s.mediaType, Data: s.data}}
}
