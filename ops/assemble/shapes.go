package assemble

import (
	"fmt"
	"strings"

	"weft/formats"
	"weft/formats/export"
	"weft/model"
)

// ChatMessage is a message as a chat-completions request carries it, its
// content one string (images are placeholders in an assembled context).
type ChatMessage struct {
	Role       model.Role              `json:"role"`
	Content    string                  `json:"content"`
	Name       string                  `json:"name,omitempty"`
	ToolCalls  []export.OpenAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string                  `json:"tool_call_id,omitempty"`
}

// OpenAI converts items with the OpenAI exporter, so the messages
// keep its guarantees: every tool message answers a call of the
// assistant message before it, and a call or result whose other half is
// not in the thread is folded into text.
func OpenAI(items []formats.Item) ([]ChatMessage, []string) {
	msgs, rep := export.OpenAI(items)
	out := make([]ChatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = ChatMessage{Role: model.Role(m.Role), Content: contentText(m.Content), Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return out, rep.Folded
}

// contentText is a chat message's content as one string: the string,
// or its parts' texts joined (only images make the exporter write parts,
// and images are placeholders here); "" for none.
func contentText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []export.OpenAIPart:
		texts := make([]string, 0, len(c))
		for _, p := range c {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n\n")
	}
	return ""
}

// Anthropic converts items with the Anthropic exporter: alternating
// roles, tool results right after their calls, the leading system
// messages as the system prompt.
func Anthropic(items []formats.Item) (*export.AnthropicBody, []string) {
	body, rep := export.Anthropic(items)
	return &body, rep.Folded
}

// Text is a plain transcript: "role: content", a blank line between.
func Text(items []formats.Item) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%s: %s\n\n", it.Role, it.Content)
	}
	return b.String()
}
