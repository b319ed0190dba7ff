package proxy

import (
	"encoding/json"
	"weft/formats"
	"weft/formats/export"
	"weft/model"
	"weft/ops"
)

// Messages outside any operation's reach go upstream as the client sent
// them, byte for byte: a prompt cache keys on those bytes, and the
// client counts what it sent. Only the stretches an operation changed
// (a summary, a revision, an insertion, the neighbours a removal left
// unpaired) are written anew. A request's message is sent as it came
// when every message weft read from it (a Messages API message of tool
// results is one per result) stands in the effective thread as read, in
// order and with nothing between; and, so that no call or result loses
// its other half at a seam, a message of tool calls only when the next
// is sent so too, right after it, and one of results only when the one
// before is.

// anSeg is a stretch of the Messages API thread sent: a request's
// message as it came (raw >= 0), or n messages written anew (the next
// n of the turn's Anthropic.Messages).
type anSeg struct {
	raw int
	n   int
}

// verbatimPlan says which of the request's messages go as they came,
// and the stretches of the thread between them as items to write.
type verbatimPlan struct {
	// asIs[r]: raw message r goes as it came.
	asIs []bool
	// order is the thread, in stretches: a raw message, or items.
	order []verbatimPart
}

type verbatimPart struct {
	raw   int // -1: items
	items []formats.Item
}

// planVerbatim plans the thread of v (read from the request's messages
// msgs, stored the first stored of them; places says which raw message
// each was read from), and the request's messages past the stored ones.
// It is false when a stored item is not one of the request's (the
// session holds messages the request does not send).
func planVerbatim(v *model.View, stored int, msgs []ops.CallerMessage, places ops.Places) (verbatimPlan, bool) {
	// pos[k] is where the request's message k stands in the thread
	// sent, or -1.
	pos := make([]int, len(msgs))
	for k := range pos {
		pos[k] = -1
	}
	n := 0
	for _, it := range v.Items {
		if it.Synth < 0 {
			if it.Seq == 0 || it.Seq > uint64(len(msgs)) {
				return verbatimPlan{}, false
			}
			pos[it.Seq-1] = n
		}
		n++
	}
	for k := stored; k < len(msgs); k++ {
		pos[k] = n
		n++
	}
	raws := places.Raw()
	span := func(r int) (int, int) {
		from, to := places.Range(r)
		if to < 0 {
			to = len(msgs)
		}
		return from, to
	}
	asIs := make([]bool, raws)
	calls := make([][]string, raws)   // the call IDs a raw message makes
	results := make([][]string, raws) // those it answers
	for r := range raws {
		from, to := span(r)
		ok := to > from && pos[from] >= 0
		for k := from; k < to; k++ {
			ok = ok && pos[k] == pos[from]+k-from
			for _, p := range msgs[k].Parts {
				switch p.Type {
				case model.PartToolCall:
					calls[r] = append(calls[r], p.ToolCallID)
				case model.PartToolResult:
					results[r] = append(results[r], p.ToolCallID)
				}
			}
		}
		asIs[r] = ok
	}
	// next reports whether raw message r+1 follows r in the thread sent,
	// with nothing between.
	next := func(r int) bool {
		if r+1 >= raws {
			return false
		}
		_, to := span(r)
		from, _ := span(r + 1)
		return to > 0 && from < len(msgs) && pos[to-1] >= 0 && pos[from] == pos[to-1]+1
	}
	// paired reports whether the calls of raw message r are answered by
	// the messages of results that follow it as they came (one for the
	// Messages API, one a result for Chat Completions), and whether the
	// results of r answer calls of the message of calls before them.
	paired := func(r int) bool {
		if len(calls[r]) > 0 {
			answered := map[string]bool{}
			for q := r; next(q) && asIs[q+1] && len(results[q+1]) > 0 && len(calls[q+1]) == 0; q++ {
				for _, id := range results[q+1] {
					answered[id] = true
				}
			}
			for _, id := range calls[r] {
				if !answered[id] {
					return false
				}
			}
		}
		if len(results[r]) > 0 {
			// Back over the results before it (Chat Completions: one a
			// result) to the message of calls they answer.
			q := r - 1
			for q >= 0 && len(calls[q]) == 0 && len(results[q]) > 0 {
				q--
			}
			if q < 0 || len(calls[q]) == 0 {
				return false
			}
			for p := q; p < r; p++ {
				if !asIs[p] || !next(p) {
					return false
				}
			}
		}
		return true
	}
	for changed := true; changed; {
		changed = false
		for r := range raws {
			if asIs[r] && !paired(r) {
				asIs[r] = false
				changed = true
			}
		}
	}
	// rawOf[k] is the raw message the request's message k was read
	// from.
	rawOf := make([]int, len(msgs))
	for r := range raws {
		from, to := span(r)
		for k := from; k < to; k++ {
			rawOf[k] = r
		}
	}
	p := verbatimPlan{asIs: asIs}
	add := func(it formats.Item) {
		if last := len(p.order) - 1; last >= 0 && p.order[last].raw < 0 {
			p.order[last].items = append(p.order[last].items, it)
			return
		}
		p.order = append(p.order, verbatimPart{raw: -1, items: []formats.Item{it}})
	}
	place := func(k int, item func() formats.Item) {
		r := rawOf[k]
		switch from, _ := span(r); {
		case !asIs[r]:
			add(item())
		case k == from:
			p.order = append(p.order, verbatimPart{raw: r})
		}
	}
	for _, it := range v.Items {
		if it.Synth >= 0 {
			add(ops.SynthItem(v, it))
			continue
		}
		k := int(it.Seq - 1)
		place(k, func() formats.Item { return ops.CallerItem(v, it, &msgs[k]) })
	}
	for k := stored; k < len(msgs); k++ {
		place(k, func() formats.Item { return newItem(k, &msgs[k]) })
	}
	return p, true
}

// verbatimTurn writes into turn the thread of p: the request's messages
// that go as they came, by index, and the stretches between written
// anew.
func verbatimTurn(turn *Turn, p verbatimPlan) {
	o := export.AnthropicOptions{SystemTurns: true, PromptApart: true}
	body := &export.AnthropicBody{}
	segs := make([]anSeg, 0, len(p.order))
	for i, part := range p.order {
		if part.raw >= 0 {
			segs = append(segs, anSeg{raw: part.raw})
			continue
		}
		o.Within = i > 0
		b, rep := export.AnthropicWith(part.items, o)
		body.Messages = append(body.Messages, b.Messages...)
		turn.Adjustments = append(turn.Adjustments, rep.Folded...)
		segs = append(segs, anSeg{raw: -1, n: len(b.Messages)})
	}
	turn.Anthropic, turn.anSegs, turn.asIs = body, segs, p.asIs
}

// verbatimChatTurn is verbatimTurn for Chat Completions: the stretches
// between the request's messages that go as they came are the OpenAI
// exporter's.
func verbatimChatTurn(turn *Turn, p verbatimPlan) {
	var msgs []export.OpenAIMessage
	segs := make([]anSeg, 0, len(p.order))
	for _, part := range p.order {
		if part.raw >= 0 {
			segs = append(segs, anSeg{raw: part.raw})
			continue
		}
		m, rep := export.OpenAI(part.items)
		msgs = append(msgs, m...)
		turn.Adjustments = append(turn.Adjustments, rep.Folded...)
		segs = append(segs, anSeg{raw: -1, n: len(m)})
	}
	turn.OpenAI, turn.anSegs, turn.asIs = msgs, segs, p.asIs
}

// goesAsIs reports whether the request's raw message r goes as it came.
func (t *Turn) goesAsIs(r int) bool { return r >= 0 && r < len(t.asIs) && t.asIs[r] }

// appendSegments appends a thread in stretches as a JSON list: raw's
// messages that go as they came, and between them the messages written
// anew, each appended by written (the m-th of them, from 0).
func appendSegments(out []byte, segs []anSeg, raw []json.RawMessage, written func(out []byte, m int) ([]byte, error)) ([]byte, error) {
	out = append(out, '[')
	m := 0
	var err error
	for _, sg := range segs {
		if sg.raw >= 0 {
			if out[len(out)-1] != '[' {
				out = append(out, ',')
			}
			out = append(out, raw[sg.raw]...)
			continue
		}
		for range sg.n {
			if out[len(out)-1] != '[' {
				out = append(out, ',')
			}
			if out, err = written(out, m); err != nil {
				return nil, err
			}
			m++
		}
	}
	return append(out, ']'), nil
}
