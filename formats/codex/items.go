package codex

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	sjson "github.com/segmentio/encoding/json"

	"weft/formats"
	"weft/model"
)

// ItemError is an item of a list that ReadItems could not read.
type ItemError struct {
	// Index is the item's 0-based place in the list.
	Index int
	// Reason says what is wrong with it, as an import's problem would.
	Reason string
}

// Error is the reason, with the item's place.
func (e ItemError) Error() string {
	return "item " + strconv.Itoa(e.Index) + ": " + e.Reason
}

// ReadItems reads a list of OpenAI Responses API items (the input of a
// request to POST /v1/responses, or a response's output: what a rollout
// keeps as response_item records) exactly as Read reads those records,
// with one message for each item, so that a message's place names the
// item it came from. An item Read passes over (a reasoning item with
// nothing but its encrypted content, a message with no text, a kind of
// item it does not know) is a message too: a reasoning item an
// assistant's, with an empty thinking part; another an assistant's (a
// tool's for a kind ending in _output, its role for a message), with
// the item verbatim in a part of type other; its content says the
// item's type. A message may leave out its "type" (the API's short form
// {role, content}). Each function_call_output is linked to its call
// among the items before it, and keeps its call_id when its call is not
// among them. It returns a message for each item, and the parts each was
// made of (those encoded in its Parts, or none for plain text:
// formats.MessageParts), or, when any cannot be read, an error for each
// of those. The items are read where they are, not copied whole (a
// message may be megabytes), and what is kept of them (a part's Raw) is
// copied: the caller may write over them once this returns.
func ReadItems(items []json.RawMessage, lend int) ([]model.NewMessage, [][]model.Part, []ItemError) {
	cx := &cxReader{items: true, lend: lend}
	var errs []ItemError
	passed := map[int]string{} // items passed over, by index: their type
	for i, raw := range items {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			errs = append(errs, ItemError{Index: i, Reason: formats.DescribeJSON(raw) + ", not an item object ({type, ...})"})
			continue
		}
		// Its fields point into the item, not copies of what may be
		// megabytes, while ReadItems runs: what is kept of them is
		// copied (formats.KeepParts), but a block of lend bytes or more.
		var p cxPayload
		if rest, err := sjson.Parse(raw, &p, sjson.DontCopyRawMessage); err != nil || len(bytes.TrimSpace(rest)) > 0 {
			if err == nil {
				err = json.Unmarshal(raw, &p) // what follows the item, said as encoding/json says it
			}
			errs = append(errs, ItemError{Index: i, Reason: "not an item: " + formats.DescribeError(err)})
			continue
		}
		if p.Type == "" {
			if p.Role == "" {
				errs = append(errs, ItemError{Index: i, Reason: `it has no "type" (nor the "role" of a message)`})
				continue
			}
			p.Type = "message"
		}
		entries, problems := len(cx.entries), len(cx.problems.Listed())
		cx.responseItem(i, time.Time{}, &p, raw)
		if listed := cx.problems.Listed(); len(listed) > problems {
			for _, pr := range listed[problems:] {
				errs = append(errs, ItemError{Index: i, Reason: pr.Err})
			}
			continue
		}
		if len(cx.entries) == entries {
			cx.entries = append(cx.entries, passedOver(i, &p, raw))
			passed[i] = p.Type
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	msgs, _ := cx.build()
	if len(msgs) != len(items) {
		// An entry build refused (it says why in a problem).
		for _, pr := range cx.problems.Listed() {
			errs = append(errs, ItemError{Index: pr.Line, Reason: pr.Err})
		}
		if len(errs) == 0 {
			errs = append(errs, ItemError{Index: len(msgs), Reason: "it could not be read"})
		}
		return nil, nil, errs
	}
	out := make([]model.NewMessage, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].NewMessage
		if typ, ok := passed[i]; ok && strings.TrimSpace(out[i].Content) == "" {
			out[i].Content = "[" + typ + "]"
		}
	}
	return out, cx.built, nil
}

// passedOver is the entry of an item Read would pass over.
func passedOver(i int, p *cxPayload, raw json.RawMessage) cxEntry {
	e := cxEntry{line: i, role: model.RoleAssistant, meta: map[string]string{"item_type": p.Type}}
	if p.ID != "" {
		e.meta["source_id"] = p.ID
	}
	part := model.Part{Type: model.PartOther, Raw: formats.Compact(raw)}
	switch {
	case p.Type == "reasoning":
		part.Type = model.PartThinking
	case p.Type == "message":
		// Read knows its role, or it would have been refused.
		switch p.Role {
		case "user", "assistant":
			e.role = model.Role(p.Role)
		default:
			e.role = model.RoleSystem
		}
	case strings.HasSuffix(p.Type, "_output"):
		e.role = model.RoleTool
	}
	e.parts = []model.Part{part}
	return e
}
