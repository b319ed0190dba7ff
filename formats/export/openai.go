package export

import (
	"io"
	"strings"

	"weft/formats"
	"weft/model"
)

// OpenAI chat completions messages.

type xoMessage struct {
	Role       string       `json:"role"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	Name       string       `json:"name,omitempty"`
	Content    any          `json:"content"`
	ToolCalls  []xoToolCall `json:"tool_calls,omitempty"`
}

type xoToolCall struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function xoFunction `json:"function"`
}

type xoFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type xoPart struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *xoImageURL `json:"image_url,omitempty"`
}

type xoImageURL struct {
	URL string `json:"url"`
}

// WriteOpenAI writes {"messages": [...]} as chat completions takes it.
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
func WriteOpenAI(w io.Writer, items []formats.Item) (Report, error) {
	x := xpRead(items, xpOpenAI)
	x.pairOpenAI()
	x.noteCalls()
	o := &xoWriter{x: x, j: xpNewLines(w)}
	o.j.w.WriteString("{\"messages\":[")
	err := o.write()
	if err == nil {
		err = o.j.end()
	}
	return x.report(), err
}

// xoWriter writes the messages, reusing one message value and its
// buffers: nothing is allocated per message but the strings joined.
type xoWriter struct {
	x        *xpThread
	j        *xpLines
	m        xoMessage
	calls    []xoToolCall
	parts    []xoPart
	pieces   []string
	content  string
	deferred []int32
}

func (o *xoWriter) write() error {
	x := o.x
	for i := range x.xi {
		xi := &x.xi[i]
		if !xi.live() {
			continue
		}
		switch xi.role {
		case model.RoleAssistant, model.RoleSystem:
			if err := o.flush(); err != nil {
				return err
			}
			o.pieces, o.calls = o.pieces[:0], o.calls[:0]
			for b := xi.lo; b < xi.hi; b++ {
				blk := &x.bl[b]
				switch {
				case blk.kind == xpCall && !blk.folded:
					o.calls = append(o.calls, xoToolCall{ID: blk.id, Type: "function", Function: xoFunction{Name: blk.name, Arguments: blk.args}})
				case blk.kind == xpCall:
					o.pieces = append(o.pieces, blk.foldedText())
				default:
					o.pieces = append(o.pieces, blk.text)
				}
			}
			o.m = xoMessage{Role: string(xi.role), Name: x.oaName(i), ToolCalls: o.calls}
			if len(o.pieces) > 0 || len(o.calls) == 0 {
				o.setText("\n\n")
			}
			if err := o.j.elem(&o.m); err != nil {
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
					o.m = xoMessage{Role: "tool", ToolCallID: x.bl[blk.pair].id}
					o.pieces = append(o.pieces[:0], blk.text)
					for a := b + 1; a < xi.hi && x.bl[a].attached; a++ {
						o.pieces = append(o.pieces, xpImageText(x.bl[a].img.mediaType))
					}
					o.setText("\n")
					if err := o.j.elem(&o.m); err != nil {
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
			if err := o.flush(); err != nil {
				return err
			}
			o.user(xi.lo, xi.hi, false)
			o.m.Name = x.oaName(i)
			if err := o.j.elem(&o.m); err != nil {
				return err
			}
		}
	}
	return o.flush()
}

// flush writes the folded results deferred to the end of a run of tool
// messages, each as a user message.
func (o *xoWriter) flush() error {
	for _, r := range o.deferred {
		o.user(r, r+1+o.x.attachedCount(r), true)
		if err := o.j.elem(&o.m); err != nil {
			return err
		}
	}
	o.deferred = o.deferred[:0]
	return nil
}

// setText makes the pieces the message's content.
func (o *xoWriter) setText(sep string) {
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
func (o *xoWriter) user(lo, hi int32, folded bool) {
	x := o.x
	o.parts, o.pieces = o.parts[:0], o.pieces[:0]
	images := false
	for b := lo; b < hi; b++ {
		blk := &x.bl[b]
		switch {
		case blk.kind == xpResult && !folded:
			b += x.attachedCount(b)
		case blk.kind == xpResult:
			o.parts = append(o.parts, xoPart{Type: "text", Text: blk.foldedText()})
		case blk.kind == xpImage:
			images = true
			o.parts = append(o.parts, xoPart{Type: "image_url", ImageURL: &xoImageURL{URL: blk.img.oaURL()}})
		default:
			o.parts = append(o.parts, xoPart{Type: "text", Text: blk.text})
		}
	}
	o.m = xoMessage{Role: "user"}
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
