package reads

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"weft/ops"

	"weft/formats"
	"weft/internal/english"
	"weft/model"
	"weft/ops/assemble"
	"weft/store"
)

// PartOut is a part of a message as read results give it: its structure
// (what kind, which tool and call it belongs to) and, only where the
// message's content does not already show them, its text or input. An
// imported tool result's output is in the content; a thinking block is
// not, so its text stays here. The source's verbatim blocks stay in the
// file (weft export writes them).
type PartOut struct {
	Type       model.PartType  `json:"type"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolName   string          `json:"tool_name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	MediaType  string          `json:"media_type,omitempty"`
	Text       string          `json:"text,omitempty"`
	// Raw is kept for a part of a kind weft does not know: nothing else
	// shows what it holds.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// partsOut gives a message's parts without what its content already
// shows, so that no text appears twice in a result; none when the parts
// add nothing to the content (plain text).
func partsOut(content string, raw json.RawMessage) []PartOut {
	parts := model.DecodeParts(raw)
	if len(parts) == 0 {
		return nil
	}
	out := make([]PartOut, len(parts))
	structure := false
	for i, p := range parts {
		o := PartOut{Type: p.Type, ToolCallID: p.ToolCallID, ToolName: p.ToolName, IsError: p.IsError, MediaType: p.MediaType}
		if p.Text != "" && !strings.Contains(content, p.Text) {
			o.Text = p.Text
		}
		if in := formats.Compact(p.Input); len(in) > 0 && !strings.Contains(content, string(in)) {
			o.Input = in
		}
		if p.Type == model.PartOther {
			o.Raw = p.Raw
		}
		if p.Type != model.PartText || o.Text != "" {
			structure = true
		}
		out[i] = o
	}
	if !structure {
		return nil
	}
	return out
}

// bodyAt is where a message's body can be read whole: its index in the
// effective thread, or with raw its position among the stored messages.
type bodyAt struct {
	index int
	raw   bool
}

// contentMarker ends a cut content: how much is left and the call that
// reads on from there.
func (b bodyAt) contentMarker(rest, offset int) string {
	view := ""
	if b.raw {
		view = " view=raw"
	}
	return fmt.Sprintf("\n… [%s more characters: get_message_range start_idx=%d end_idx=%d content_offset=%d%s]", english.Thousands(rest), b.index, b.index, offset, view)
}

// partMarker ends a part's cut text.
func (b bodyAt) partMarker(rest int) string {
	view := ""
	if b.raw {
		view = " view=raw"
	}
	return fmt.Sprintf("\n… [%s more characters: get_message_range start_idx=%d end_idx=%d%s with a larger max_tokens]", english.Thousands(rest), b.index, b.index, view)
}

// shapeMessage fits a message for a result: bodies (the content, and
// part texts the content does not show) that count more than capBody
// tokens together are cut, in proportion, each with a marker. n is the
// tokens stored with the message; from is the character its content
// starts at (content_offset). It returns the estimated tokens of the
// message's JSON.
func shapeMessage(o *MessageOut, n, capBody int, at bodyAt, from int) (cost int, cut bool) {
	bodyBytes := len(o.Content)
	for _, p := range o.Parts {
		bodyBytes += len(p.Text)
	}
	total := textTokens(o.Content, n)
	if bodyBytes > len(o.Content) {
		total = max(n, 1)
	}
	share := func(s string) int {
		return int(int64(total) * int64(len(s)) / int64(max(bodyBytes, 1)))
	}
	if total > capBody {
		if head, kept, rest := cutText(o.Content, share(o.Content), capBody*len(o.Content)/max(bodyBytes, 1)); rest > 0 {
			o.Content = head + at.contentMarker(rest, from+kept)
			cut = true
		}
		for i := range o.Parts {
			p := &o.Parts[i]
			if head, _, rest := cutText(p.Text, share(p.Text), capBody*len(p.Text)/max(bodyBytes, 1)); rest > 0 {
				p.Text = head + at.partMarker(rest)
				cut = true
			}
		}
		if cut {
			total = min(total, capBody) + cutMarkerTokens
		}
	}
	cost = metaTokens(o) + total + strTokens(o.Content, 0)
	for _, p := range o.Parts {
		if p.Text != "" {
			cost += strTokens(p.Text, 0)
		}
	}
	return cost, cut
}

// metaTokens estimates the tokens of a message's fields other than its
// bodies: JSON field names, IDs, times and numbers count about a token
// for every three and a half bytes (measured on o200k); a third, and a
// few over, errs on the safe side.
func metaTokens(o *MessageOut) int {
	b := 110 + len(o.ID) + len(o.Role) + len(o.Name) + len(o.CreatedAt) + len(o.OpID) + len(o.TimeSpanStart) + len(o.TimeSpanEnd) + 24
	for _, t := range o.Tags {
		b += len(t) + 3
	}
	if o.Hidden != nil {
		b += 15
	}
	for _, p := range o.Parts {
		b += 12 + len(p.Type) + len(p.ToolCallID) + len(p.ToolName) + len(p.Input) + len(p.MediaType) + len(p.Raw)
		if p.ToolCallID != "" {
			b += 17
		}
		if p.ToolName != "" {
			b += 14
		}
		if len(p.Input) > 0 {
			b += 10
		}
		if p.Text != "" {
			b += 9
		}
	}
	return (b+2)/3 + 8
}

// planMeta is what a message's other fields count, for planning before
// its body is read.
const planMeta = 70

// planItems are the bodies and other fields of items, as estimated
// before they are read, for a packer.
func planItems(v *model.View, heads []model.Head, indices []int) (bodies, metas []int) {
	bodies, metas = make([]int, len(indices)), make([]int, len(indices))
	for k, i := range indices {
		n := assemble.Tokens(v, heads, i)
		bodies[k], metas[k] = n+n/6, planMeta
	}
	return bodies, metas
}

// packMessages gives the items at indices (in the order that matters
// most) as the packer lets: read, shaped and cut to its cap, until one
// does not fit; the rest are counted as left out. The first is given
// cut to what room there is rather than not at all.
func packMessages(tx store.Tx, v *model.View, heads []model.Head, indices []int, p *packer) ([]MessageOut, error) {
	out := make([]MessageOut, 0, min(len(indices), 256))
	for k, i := range indices {
		if p.full {
			p.skip(len(indices) - k)
			break
		}
		o, err := itemOut(tx, v, i)
		if err != nil {
			return nil, err
		}
		n := assemble.Tokens(v, heads, i)
		if !packOne(p, &o, n, bodyAt{index: i}, 0) {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// packOne shapes a message to the packer's cap and takes it if it fits;
// the first message of a result is cut further to fit.
func packOne(p *packer, o *MessageOut, n int, at bodyAt, from int) bool {
	saved := *o
	saved.Parts = append([]PartOut(nil), o.Parts...)
	return p.takeShaped(func(capBody int) (int, bool) {
		*o = saved
		o.Parts = append([]PartOut(nil), saved.Parts...)
		return shapeMessage(o, n, capBody, at, from)
	})
}

// itemOut renders one item of the view, reading a stored body in tx.
func itemOut(tx store.Tx, v *model.View, i int) (MessageOut, error) {
	it := v.Items[i]
	tags := v.Tags(it)
	if tags == nil {
		tags = []string{}
	}
	if it.Seq > 0 {
		m, err := tx.Message(v.SessionID, it.Seq)
		if err != nil {
			return MessageOut{}, err
		}
		return storedOut(i, &m, tags), nil
	}
	s := &v.Synth[it.Synth]
	return MessageOut{
		Index: i, ID: s.ID(), Role: s.Role, Content: s.Content, Name: s.Name, Parts: partsOut(s.Content, s.Parts),
		CreatedAt: ops.FormatTime(s.CreatedAt), Tokens: s.Tokens, Tags: tags,
		Synthetic: true, OpID: s.OpID,
		TimeSpanStart: ops.FormatTime(s.TimeSpanStart), TimeSpanEnd: ops.FormatTime(s.TimeSpanEnd),
	}, nil
}

// packSummaries gives summaries (items at indices) as the packer lets,
// each cut to its cap.
func packSummaries(v *model.View, indices []int, p *packer) []SummaryOut {
	out := make([]SummaryOut, 0, len(indices))
	for k, i := range indices {
		if p.full {
			p.skip(len(indices) - k)
			break
		}
		whole := summariesOut(v, []int{i})[0]
		s := whole
		ok := p.takeShaped(func(capBody int) (int, bool) {
			s = whole
			n := textTokens(s.Content, s.Tokens)
			cut := false
			if n > capBody {
				if head, kept, rest := cutText(s.Content, n, capBody); rest > 0 {
					s.Content = head + bodyAt{index: i}.contentMarker(rest, kept)
					n, cut = capBody+cutMarkerTokens, true
				}
			}
			return 60 + (len(s.ID)+len(s.OpID)+3*len(s.CreatedAt))/2 + strTokens(s.Content, n), cut
		})
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// runeOffset is the byte offset of the n-th character of s (len(s) past
// its end).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// countRunes is utf8.RuneCountInString, named for what it counts here.
func countRunes(s string) int { return utf8.RuneCountInString(s) }
