package proxy

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"weft/formats"
	"weft/formats/codex"
	"weft/model"
	"weft/ops"
)

// The Responses API's side of the context proxy (POST /v1/responses,
// what Codex CLI sends). A request's "input" is a list of items
// (messages, reasoning, function calls and their outputs, kinds weft
// does not know), read as the Codex importer reads a rollout's
// response items, one stored message an item. So a stored message's
// place is the place of the request's item it came from, and the
// effective thread goes upstream as the request's own items, byte for
// byte (ids, encrypted reasoning, fields weft does not know), with only
// the items an operation made written anew.

// Responses is the Responses API: input items, the instructions
// apart.
const Responses API = "responses"

// ResponsesItem is an item of the input sent upstream in place of a
// Responses API request's: one of the request's own, sent as it came,
// or a message weft wrote.
type ResponsesItem struct {
	// Request is the place of the request's item in its input; -1 for
	// a message weft wrote (Message).
	Request int
	Message *ResponsesMessage
}

// ResponsesMessage is a message item as the Responses API takes it.
type ResponsesMessage struct {
	Type    string             `json:"type"`
	Role    string             `json:"role"`
	Content []ResponsesContent `json:"content"`
}

// ResponsesContent is a message's text: input_text in the user's and
// the developer's messages, output_text in the assistant's.
type ResponsesContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ListField names the field of the API's request body that holds the
// thread: "messages", or the Responses API's "input".
func (api API) ListField() string {
	if api == Responses {
		return "input"
	}
	return "messages"
}

// responsesItems reads a Responses API request's items.
var responsesItems = ops.ListReader{Shape: "responses", Read: readItems}

// readItems reads a Responses API request's items, one message each.
func readItems(raw []json.RawMessage, offset, lend int) ([]model.NewMessage, [][]model.Part, []int, error) {
	nms, parts, errs := codex.ReadItems(raw, lend)
	if len(errs) > 0 {
		texts := make([]string, len(errs))
		for i, e := range errs {
			texts[i] = fmt.Sprintf("input[%d]: %s", offset+e.Index, e.Reason)
		}
		return nil, nil, nil, ops.Invalidf("input is not all Responses API items ({type: message|reasoning|function_call|function_call_output|...}): %s", strings.Join(texts, "; "))
	}
	from := make([]int, len(nms))
	for i := range from {
		from[i] = i
	}
	return nms, parts, from, nil
}

// answerList is what is read of an answer: its message, or for
// the Responses API the items of its Message, the response's "output".
func answerList(a Answer) ([]json.RawMessage, error) {
	if a.API != Responses {
		return []json.RawMessage{a.Message}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(a.Message, &items); err != nil {
		return nil, ops.Invalidf("the answer's output is %s, not a list of items", formats.DescribeJSON(a.Message))
	}
	return items, nil
}

// rsKind is what an item of the thread is, for the Responses API.
type rsKind uint8

const (
	rsVerbatim  rsKind = iota // one of the request's items, nothing to pair
	rsReasoning               // the request's reasoning item
	rsCall                    // the request's function call
	rsOutput                  // the request's function call output
	rsWritten                 // an item an operation made: written as a message
)

// rsUnit is an item of the thread on its way to the input.
type rsUnit struct {
	kind    rsKind
	request int
	callID  string
	paired  bool
	dropped bool
}

// responsesThread is the input sent upstream for items, the effective
// thread of a request with sent items (every stored message in it is
// one of those, in the place of its seq): the request's items as they
// came, and messages for the items operations made. It keeps the thread
// one the API takes: a function call and its output go together or are
// both sent as text, and a reasoning item goes only with the item of the
// request that followed it. What had to change is said, one line each.
func responsesThread(items []formats.Item, sent int) ([]ResponsesItem, []string) {
	units := make([]rsUnit, len(items))
	open := map[string][]int{} // calls not answered yet, by call_id
	for i := range items {
		u := &units[i]
		u.kind, u.request = rsWritten, -1
		seq, ok := items[i].ID.Seq()
		if !ok || seq > uint64(sent) || items[i].Synthetic {
			continue
		}
		u.kind, u.request = rsVerbatim, int(seq-1)
		parts := items[i].Parts
		switch role := items[i].Role; {
		case len(parts) == 0:
		case role == model.RoleAssistant && parts[0].Type == model.PartToolCall && pairedKind(parts[0].Raw):
			u.kind, u.callID = rsCall, parts[0].ToolCallID
			if u.callID != "" {
				open[u.callID] = append(open[u.callID], i)
			}
		case role == model.RoleTool && parts[0].Type == model.PartToolResult:
			u.kind, u.callID = rsOutput, parts[0].ToolCallID
			if calls := open[u.callID]; u.callID != "" && len(calls) > 0 {
				c := calls[len(calls)-1]
				open[u.callID] = calls[:len(calls)-1]
				u.paired, units[c].paired = true, true
			}
		case role == model.RoleAssistant && parts[0].Type == model.PartThinking:
			u.kind = rsReasoning
		}
	}
	// A reasoning item goes only with the request's own item after it
	// (the API refuses one without the item it led to): walking back,
	// follows says whether the next item sent is such an item.
	follows := false
	for i := len(units) - 1; i >= 0; i-- {
		u := &units[i]
		switch u.kind {
		case rsReasoning:
			u.dropped = !follows
			follows = !u.dropped
		case rsCall:
			follows = u.paired
		case rsVerbatim:
			follows = items[i].Role == model.RoleAssistant
		default:
			follows = false
		}
	}
	out := make([]ResponsesItem, 0, len(items))
	var notes []string
	for i := range units {
		u, it := &units[i], &items[i]
		role, text := it.Role, it.Content
		switch {
		case u.dropped:
			notes = append(notes, fmt.Sprintf("item %s: reasoning whose next item is not sent as it came: left out (the API takes a reasoning item only with the item it led to)", it.ID))
			continue
		case u.kind == rsCall && !u.paired:
			notes = append(notes, fmt.Sprintf("item %s: function call %s has no output after it in the thread: sent as text", it.ID, rsCallName(u.callID, it)))
		case u.kind == rsOutput && !u.paired:
			notes = append(notes, fmt.Sprintf("item %s: function call output for %s, whose call is not before it in the thread: sent as text", it.ID, cmp.Or(u.callID, "a call without an id")))
			role = model.RoleUser
		case u.kind != rsWritten:
			out = append(out, ResponsesItem{Request: u.request})
			continue
		}
		if strings.TrimSpace(text) == "" {
			text = formats.RenderContent(it.Parts)
		}
		if strings.TrimSpace(text) == "" {
			notes = append(notes, fmt.Sprintf("item %s: empty %s message: left out", it.ID, it.Role))
			continue
		}
		out = append(out, ResponsesItem{Request: -1, Message: responsesMessage(role, text)})
	}
	return out, notes
}

// pairedKind reports whether a call item is of a kind the API pairs
// with an output item by call_id (function_call, custom_tool_call):
// the others (web_search_call, local_shell_call, ...) go as they came.
func pairedKind(raw json.RawMessage) bool {
	var item struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &item)
	return item.Type == "function_call" || item.Type == "custom_tool_call"
}

// responsesMessage is a message of text: a system message (a summary)
// is the developer's, a tool's is the user's.
func responsesMessage(role model.Role, text string) *ResponsesMessage {
	m := &ResponsesMessage{Type: "message", Role: "user", Content: []ResponsesContent{{Type: "input_text", Text: text}}}
	switch role {
	case model.RoleAssistant:
		m.Role, m.Content[0].Type = "assistant", "output_text"
	case model.RoleSystem:
		m.Role = "developer"
	}
	return m
}

// rsCallName names a call in a note.
func rsCallName(id string, it *formats.Item) string {
	name := ""
	if len(it.Parts) > 0 {
		name = it.Parts[0].ToolName
	}
	switch {
	case id == "":
		return "(" + name + ") without an id"
	case name == "":
		return id
	}
	return id + " (" + name + ")"
}
