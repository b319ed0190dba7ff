// Package assembletest holds the checks that an assembled context is a
// request its provider accepts, for every test that assembles one (the
// read tools', the pre-request hook's, the summaries'). It imports
// nothing of the engine, so that ops's own tests may use it too.
package assembletest

import (
	"slices"
	"testing"

	"weft/formats/export"
	"weft/model"
	"weft/ops/assemble"
)

// CheckOpenAI checks chat-completions validity: every tool message
// answers a call of the last assistant message with calls, with only
// tool messages between, and every call is answered.
func CheckOpenAI(t testing.TB, msgs []assemble.ChatMessage) {
	t.Helper()
	var open []string // calls of the last assistant message not yet answered
	for i, m := range msgs {
		switch m.Role {
		case model.RoleTool:
			k := slices.Index(open, m.ToolCallID)
			if k < 0 {
				t.Fatalf("message %d: tool result for %q, which no open call has (open: %v)", i, m.ToolCallID, open)
			}
			open = slices.Delete(open, k, k+1)
			continue
		}
		if len(open) > 0 {
			t.Fatalf("message %d (%s): calls %v were never answered", i, m.Role, open)
		}
		if m.Role == model.RoleAssistant {
			for _, c := range m.ToolCalls {
				open = append(open, c.ID)
			}
		}
	}
	if len(open) > 0 {
		t.Fatalf("calls %v at the end were never answered", open)
	}
}

// CheckAnthropic checks the Messages API's rules: roles alternate
// starting with the user, and every tool_result answers a tool_use of
// the message right before.
func CheckAnthropic(t testing.TB, body *export.AnthropicBody) {
	t.Helper()
	for i, m := range body.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			t.Fatalf("message %d is %s, want %s (roles alternate from the user)", i, m.Role, want)
		}
		if len(m.Content) == 0 {
			t.Fatalf("message %d has no content", i)
		}
		for _, b := range m.Content {
			if b.Type != "tool_result" {
				continue
			}
			if i == 0 || !slices.ContainsFunc(body.Messages[i-1].Content, func(u export.AnthropicBlock) bool { return u.Type == "tool_use" && u.ID == b.ToolUseID }) {
				t.Fatalf("message %d: tool_result for %q answers no tool_use of the message before", i, b.ToolUseID)
			}
		}
	}
}
