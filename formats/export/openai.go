package export

import (
	"io"
	"slices"
	"strings"

	"weft/formats"
	"weft/model"
)

// OpenAIMessage is a message as chat completions takes it.
type OpenAIMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	// Content is a string, nil (null: an assistant message that only
	// calls tools), or []OpenAIPart (a user message with images).
	Content   any              `json:"content"`
	ToolCalls []OpenAIToolCall `json:"tool_calls,omitempty"`
}

// OpenAIToolCall is one of an assistant message's tool calls.
type OpenAIToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function a tool call calls, its arguments a JSON
// string.
type OpenAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// OpenAIPart is a part of a message's content: text, or an image.
type OpenAIPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	ImageURL *OpenAIImageURL `json:"image_url,omitempty"`
}

// OpenAIImageURL is an image: a link, or a data: URL.
type OpenAIImageURL struct {
	URL string `json:"url"`
}

// OpenAI converts items into chat-completions messages, and says in the
// Report what it had to change.
//
// Tool calls go in the assistant's tool_calls, each result in a tool
// message right after. The thread is kept valid: a tool message answers
// a call of the last assistant message with tool calls, with only tool
// messages between them, and every call is answered before the next
// message of another role. A call or result that cannot be (its other
// half was snipped, or is elsewhere) is folded into text: a call into
// its assistant's content, a result into a user message after the run
// of tool messages it was in. System messages (digest summaries
// included) stay where they are. Thinking is dropped.
func OpenAI(items []formats.Item) ([]OpenAIMessage, Report) {
	o := planOpenAI(items)
	msgs := make([]OpenAIMessage, 0, len(items))
	_ = o.each(func(m *OpenAIMessage) error {
		msgs = append(msgs, m.own())
		return nil
	})
	return msgs, o.x.report()
}

// WriteOpenAI writes {"messages": [...]}, the messages OpenAI converts
// items into, one a line.
func WriteOpenAI(w io.Writer, items []formats.Item) (Report, error) {
	o := planOpenAI(items)
	j := newLines(w)
	_, _ = j.w.WriteString("{\"messages\":[")
	err := o.each(func(m *OpenAIMessage) error { return j.elem(m) })
	if err == nil {
		err = j.end()
	}
	return o.x.report(), err
}

// planOpenAI reads items and pairs their calls and results as chat
// completions wants them.
func planOpenAI(items []formats.Item) *oaWriter {
	x := xpRead(items, xpOpenAI)
	x.pairOpenAI()
	x.noteCalls()
	return &oaWriter{x: x}
}

// own is the message with its own copy of what the writer reuses: its
// tool calls and content.
func (m *OpenAIMessage) own() OpenAIMessage {
	c := *m
	c.ToolCalls = slices.Clone(m.ToolCalls)
	switch content := m.Content.(type) {
	case *string:
		c.Content = *content
	case *[]OpenAIPart:
		c.Content = slices.Clone(*content)
	}
	return c
}

// oaWriter makes the messages one at a time, reusing one message value
// and its buffers (its content points into them): nothing is allocated
// per message but the strings joined, which the 100k-message export
// shows (BenchmarkWriteOpenAI100k).
type oaWriter struct {
	x        *xpThread
	m        OpenAIMessage
	calls    []OpenAIToolCall
	parts    []OpenAIPart
	pieces   []string
	content  string
	deferred []int32
}

// each gives yield the messages in order; the message is only valid
// during the call.
func (o *oaWriter) each(yield func(*OpenAIMessage) error) error {
	x := o.x
	for i := range x.xi {
		xi := &x.xi[i]
		if !xi.live() {
			continue
		}
		switch xi.role {
		case model.RoleAssistant, model.RoleSystem:
			if err := o.flush(yield); err != nil {
				return err
			}
			o.pieces, o.calls = o.pieces[:0], o.calls[:0]
			for b := xi.lo; b < xi.hi; b++ {
				blk := &x.bl[b]
				switch {
				case blk.kind == xpCall && !blk.folded:
					o.calls = append(o.calls, OpenAIToolCall{ID: blk.id, Type: "function", Function: OpenAIFunction{Name: blk.name, Arguments: blk.args}})
				case blk.kind == xpCall:
					o.pieces = append(o.pieces, blk.foldedText())
				default:
					o.pieces = append(o.pieces, blk.text)
				}
			}
			o.m = OpenAIMessage{Role: string(xi.role), Name: x.oaName(i), ToolCalls: o.calls}
			if len(o.pieces) > 0 || len(o.calls) == 0 {
				o.setText("\n\n")
			}
			if err := yield(&o.m); err != nil {
				return err
			}
		default:
			other := false
			for b := xi.lo; b < xi.hi; b++ {
				blk := &x.bl[b]
				switch {
				case blk.kind == xpResult && blk.folded:
					o.deferred = append(o.deferred, b)
				case blk.kind == xpResult:
					o.m = OpenAIMessage{Role: "tool", ToolCallID: x.bl[blk.pair].id}
					o.pieces = append(o.pieces[:0], blk.text)
					for a := b + 1; a < xi.hi && x.bl[a].attached; a++ {
						o.pieces = append(o.pieces, xpImageText(x.bl[a].img.mediaType))
					}
					o.setText("\n")
					if err := yield(&o.m); err != nil {
						return err
					}
				case blk.attached:
				default:
					other = true
				}
			}
			if !other {
				continue
			}
			if err := o.flush(yield); err != nil {
				return err
			}
			o.user(xi.lo, xi.hi, false)
			o.m.Name = x.oaName(i)
			if err := yield(&o.m); err != nil {
				return err
			}
		}
	}
	return o.flush(yield)
}

// flush gives the folded results deferred to the end of a run of tool
// messages, each as a user message.
func (o *oaWriter) flush(yield func(*OpenAIMessage) error) error {
	for _, r := range o.deferred {
		o.user(r, r+1+o.x.attachedCount(r), true)
		if err := yield(&o.m); err != nil {
			return err
		}
	}
	o.deferred = o.deferred[:0]
	return nil
}

// setText makes the pieces the message's content.
func (o *oaWriter) setText(sep string) {
	switch len(o.pieces) {
	case 0:
		o.content = ""
	case 1:
		o.content = o.pieces[0]
	default:
		o.content = strings.Join(o.pieces, sep)
	}
	o.m.Content = &o.content
}

func xpPara(b *strings.Builder, s string) {
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(s)
}

func (x *xpThread) attachedCount(r int32) int32 {
	n := int32(0)
	for a := r + 1; int(a) < len(x.bl) && x.bl[a].attached; a++ {
		n++
	}
	return n
}

// user makes the message a user message of the blocks bl[lo:hi]: text
// and images; results are skipped (they are tool messages, or
// deferred), unless folded is set: then bl[lo:hi] is one folded result
// and its images.
func (o *oaWriter) user(lo, hi int32, folded bool) {
	x := o.x
	o.parts, o.pieces = o.parts[:0], o.pieces[:0]
	images := false
	for b := lo; b < hi; b++ {
		blk := &x.bl[b]
		switch {
		case blk.kind == xpResult && !folded:
			b += x.attachedCount(b)
		case blk.kind == xpResult:
			o.parts = append(o.parts, OpenAIPart{Type: "text", Text: blk.foldedText()})
		case blk.kind == xpImage:
			images = true
			o.parts = append(o.parts, OpenAIPart{Type: "image_url", ImageURL: &OpenAIImageURL{URL: blk.img.oaURL()}})
		default:
			o.parts = append(o.parts, OpenAIPart{Type: "text", Text: blk.text})
		}
	}
	o.m = OpenAIMessage{Role: "user"}
	if images {
		o.m.Content = &o.parts
		return
	}
	for k := range o.parts {
		o.pieces = append(o.pieces, o.parts[k].Text)
	}
	o.setText("\n\n")
}

func (s *xpImageSource) oaURL() string {
	if s.url != "" {
		return s.url
	}
	return "data:" + s.mediaType + ";base64," + s.data
}

// oaName is an item's name where chat completions takes it.
func (x *xpThread) oaName(i int) string {
	n := x.items[i].Name
	if n == "" || xpValidName(n, 64) {
		return n
	}
	x.note(i, "%s: name %q is not valid (%s): dropped", x.itemRef(i), n, xpNamePattern(64))
	return ""
}

// pairOpenAI pairs each tool message with a call of the last assistant
// message with calls, when only tool messages lie between them; the
// rest are folded.
func (x *xpThread) pairOpenAI() {
	var group []int32
	closeGroup := func() {
		for _, c := range group {
			if x.bl[c].pair < 0 {
				x.foldCall(c)
			}
		}
		group = group[:0]
	}
	for i := range x.xi {
		xi := &x.xi[i]
		if !xi.live() {
			continue
		}
		switch xi.role {
		case model.RoleAssistant:
			closeGroup()
			for b := xi.lo; b < xi.hi; b++ {
				if x.bl[b].kind == xpCall {
					group = append(group, b)
				}
			}
		case model.RoleSystem:
			closeGroup()
		default:
			other := false
			for b := xi.lo; b < xi.hi; b++ {
				switch blk := &x.bl[b]; {
				case blk.kind == xpResult:
					if !x.match(group, b) {
						x.foldResult(b)
					}
				case !blk.attached:
					other = true
				}
			}
			if other {
				closeGroup()
			}
		}
	}
	closeGroup()
}
