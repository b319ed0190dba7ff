package claudecode

import (
	"bytes"
	"encoding/json"
	"strconv"

	"weft/formats"
	"weft/model"
)

// MessageError is a message of a list that ReadMessages could not read.
type MessageError struct {
	// Index is the message's 0-based place in the list.
	Index int
	// Reason says what is wrong with it: `role "system" is not user or
	// assistant`, "content block 2 is not an object".
	Reason string
}

// Error is the reason, with the message's place.
func (e MessageError) Error() string {
	return "message " + strconv.Itoa(e.Index) + ": " + e.Reason
}

// ReadMessages reads Messages API messages ({role, content}, one thread
// oldest first: a request's "messages", or an answer) exactly as Read
// reads the message of a Claude Code record, which is the same shape
// (a system turn among them, role system, is read as a user's is):
// content blocks become parts, each kept verbatim as its part's Raw, and
// each tool_result block of a user message becomes a message of role
// tool, named after the call it answers, before the user's own text when
// it comes first. A message with nothing in it gives no message. It
// returns the messages, with, for each, the parts it was made of (its
// ReadParts, or none for plain text: formats.KeepParts)
// and the index of the message of msgs it came
// from; or, when any message cannot be read, an error for each of
// those. Nothing returned points into msgs, which the caller may write
// over (the proxy's body buffer serves its next request), but a block of
// lend bytes or more when lend > 0 (formats.KeepParts).
func ReadMessages(msgs []json.RawMessage, lend int) ([]model.NewMessage, [][]model.Part, []int, []MessageError) {
	rd := &ccReader{strs: map[string]string{}, borrow: true}
	out := make([]model.NewMessage, 0, len(msgs))
	read := make([][]model.Part, 0, len(msgs))
	from := make([]int, 0, len(msgs))
	var errs []MessageError
	toolNames := map[string]string{}
	for i, raw := range msgs {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			errs = append(errs, MessageError{Index: i, Reason: formats.DescribeJSON(raw) + ", not a message object ({role, content})"})
			continue
		}
		var head struct {
			Role json.RawMessage `json:"role"`
		}
		if !parse(raw, &head) {
			errs = append(errs, MessageError{Index: i, Reason: "not a valid JSON object"})
			continue
		}
		var f ccFields
		role := f.str("role", head.Role)
		switch {
		case f.bad != "":
			errs = append(errs, MessageError{Index: i, Reason: f.bad})
			continue
		case role == "":
			errs = append(errs, MessageError{Index: i, Reason: `it has no "role"`})
			continue
		case role != "user" && role != "assistant" && role != "system":
			errs = append(errs, MessageError{Index: i, Reason: "role " + strconv.Quote(role) + " is not user, assistant or system"})
			continue
		}
		rec, err := rd.readMessage(&ccHead{Message: raw}, role)
		if err != nil {
			errs = append(errs, MessageError{Index: i, Reason: err.Error()})
			continue
		}
		if len(errs) > 0 {
			continue // only the errors are returned now
		}
		add := func(role model.Role, name string, parts []model.Part, content string) {
			if content == "" {
				content = formats.RenderContent(parts)
			}
			// The parts point into msgs until they are kept: nothing of
			// msgs is kept. They are not written as JSON: the store
			// writes them (ReadParts).
			out = append(out, model.NewMessage{Role: role, Name: name, Content: content, ReadParts: formats.KeepParts(parts, lend)})
			read = append(read, parts)
			from = append(from, i)
		}
		if role == "system" {
			// A system turn in the middle of the conversation: its text.
			if len(rec.parts) > 0 {
				add(model.RoleSystem, "", rec.parts, rec.content)
			}
			continue
		}
		if role == "assistant" {
			for _, p := range rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					toolNames[p.ToolCallID] = p.ToolName
				}
			}
			if len(rec.parts) > 0 {
				add(model.RoleAssistant, "", rec.parts, rec.content)
			}
			continue
		}
		user := func() {
			if len(rec.parts) > 0 {
				add(model.RoleUser, "", rec.parts, rec.content)
			}
		}
		tools := func() {
			for _, res := range rec.results {
				add(model.RoleTool, toolNames[res.parts[0].ToolCallID], res.parts, res.content)
			}
		}
		if rec.resultsFirst {
			tools()
			user()
		} else {
			user()
			tools()
		}
	}
	if len(errs) > 0 {
		return nil, nil, nil, errs
	}
	return out, read, from, nil
}
