package proxy

import (
	"encoding/json"
	"strings"

	"weft/formats"
	"weft/formats/export"
)

// A Chat Completions thread sent anew: the exporter's messages, and the
// request's messages' own fields (fields.go) on the messages that
// say what theirs said. A request without such fields is encoded as the
// exporter's list, as it always was.

// chatThread is the thread's "messages": msgs, with the own fields
// placed on them by index.
type chatThread struct {
	msgs []export.OpenAIMessage
	own  map[int][]byte
	// segs are the thread's stretches: raw's messages that go as they
	// came, and msgs between them (verbatim.go).
	segs []anSeg
	raw  []json.RawMessage
}

// chatThread is what rewrite writes for turn: the request's messages
// that no operation changed as they came, the exporter's messages between
// them with the own fields of the request's messages they stand for.
func (b *proxyBody) chatThread(turn *Turn) *chatThread {
	msgs := turn.OpenAI
	t := &chatThread{msgs: msgs, segs: turn.anSegs, raw: b.messages}
	if len(b.own) > 0 {
		t.own = b.placeFields(len(msgs), func(m int) string { return msgs[m].Role }, func(m int, o *ownMsg) bool { return chatMessageSays(&msgs[m], o) }, turn.goesAsIs)
	}
	return t
}

// appendJSON appends the thread as a JSON list: the request's messages
// that go as they came, and between them the exporter's, each with its
// own fields after.
func (t *chatThread) appendJSON(out []byte) ([]byte, error) {
	return appendSegments(out, t.segs, t.raw, func(out []byte, m int) ([]byte, error) {
		out, err := export.AppendJSON(out, &t.msgs[m])
		return appendFields(out, t.own[m]), err
	})
}

// said is what a request's message says, as ownFields reads it: its
// content, and a Chat Completions message's calls, the call it answers
// and its refusal.
type said struct {
	content, calls  []byte
	callID, refusal string
}

// says is the type and key of what the message says (blockRef's): a
// tool message its tool_call_id; another its text (a string content, or
// its first text part), else its first tool call's id, else its refusal
// (which the importer reads as its text).
func (c *said) says(role string) (typ, key string, ok bool) {
	if role == "tool" && c.callID != "" {
		return "tool_result", c.callID, true
	}
	if len(c.content) > 0 {
		switch c.content[0] {
		case '"':
			if key, _ := formats.DecodeString(c.content); key != "" {
				return "text", key, true
			}
		case '[':
			var parts []json.RawMessage
			_ = json.Unmarshal(c.content, &parts)
			for _, p := range parts {
				var ref blockRef
				if len(p) > 0 && p[0] == '"' {
					ref.Type = "text"
					ref.Text, _ = formats.DecodeString(p)
				} else if json.Unmarshal(p, &ref) != nil || ref.Type != "text" {
					continue
				}
				if ref.Text != "" {
					return "text", ref.Text, true
				}
			}
		}
	}
	if len(c.calls) > 0 && c.calls[0] == '[' {
		var calls []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(c.calls, &calls) == nil && len(calls) > 0 && calls[0].ID != "" {
			return "tool_use", calls[0].ID, true
		}
	}
	if c.refusal != "" {
		return "text", c.refusal, true
	}
	return "", "", false
}

// chatRole is a request's role as the exporter writes it: the importer
// reads developer as system, and function as tool.
func chatRole(role string) string {
	switch role {
	case "developer":
		return "system"
	case "function":
		return "tool"
	}
	return role
}

// chatMessageSays reports whether m, a message the exporter wrote, is of
// o's role and says what o's said: its text (the exporter joins a
// message's texts with blank lines), a call of its, or the call it
// answers.
func chatMessageSays(m *export.OpenAIMessage, o *ownMsg) bool {
	if m.Role != o.role {
		return false
	}
	switch o.typ {
	case "tool_result":
		return m.ToolCallID == o.key
	case "tool_use":
		for _, c := range m.ToolCalls {
			if c.ID == o.key {
				return true
			}
		}
		return false
	}
	switch c := m.Content.(type) {
	case string:
		return c == o.key || strings.HasPrefix(c, o.key) && strings.HasPrefix(c[len(o.key):], "\n\n")
	case []export.OpenAIPart:
		for _, p := range c {
			if p.Type == "text" {
				return p.Text == o.key
			}
		}
	}
	return false
}
