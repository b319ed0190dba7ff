package openai

import (
	"bytes"
	"encoding/json"
	"strconv"

	"weft/formats"
	"weft/formats/internal/records"
	"weft/model"
)

// MessageError is a message of a list that ReadMessages could not read.
type MessageError struct {
	// Index is the message's 0-based place in the list.
	Index int
	// Reason says what is wrong with it, as an import's problem would:
	// `role "robot" is not one of ...`, "it is empty".
	Reason string
}

// Error is the reason, with the message's place.
func (e MessageError) Error() string {
	return "message " + strconv.Itoa(e.Index) + ": " + e.Reason
}

// ReadMessages reads a list of chat-completions messages, one thread
// oldest first, exactly as Read reads a file of them: the same
// conversion (tool calls and results as parts, a developer message a
// system one), each tool result linked to a call before it. It returns a
// message for each of msgs, and the parts each was made of (its
// ReadParts, which go to the store as read; nil for a message of text
// alone), or, when any cannot be read (one with nothing in it among
// them), an error for each of those. The messages are read where they
// lie, and nothing returned points into them (the proxy's body buffer
// serves its next request), but a block of lend bytes or more when
// lend > 0 (formats.KeepParts).
func ReadMessages(msgs []json.RawMessage, lend int) ([]model.NewMessage, [][]model.Part, []MessageError) {
	out := make([]model.NewMessage, 0, len(msgs))
	parts := make([][]model.Part, 0, len(msgs))
	var errs []MessageError
	m := message{asRead: true, lend: lend}
	var calls records.Calls
	for i, raw := range msgs {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			errs = append(errs, MessageError{Index: i, Reason: formats.DescribeJSON(raw) + ", not a message"})
			continue
		}
		m.read = nil
		nm, reason := readMessage(raw, &m, &calls, nil)
		if reason == notRecord {
			reason += ", not a message"
		}
		if reason != "" {
			errs = append(errs, MessageError{Index: i, Reason: reason})
			continue
		}
		out = append(out, nm)
		parts = append(parts, m.read)
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return out, parts, nil
}
