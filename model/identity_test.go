package model

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestIdentity(t *testing.T) {
	call := func(input string) Part {
		return Part{Type: PartToolCall, ToolCallID: "x", ToolName: "Bash", Input: json.RawMessage(input)}
	}
	same := []struct {
		name string
		a, b func() Ident
	}{
		{"white space folds", func() Ident { return Identity(RoleUser, "a  b\n\nc ", nil) }, func() Ident { return Identity(RoleUser, " a b c", nil) }},
		{"text parts are the content", func() Ident { return Identity(RoleAssistant, "hello there", nil) },
			func() Ident {
				return Identity(RoleAssistant, "ignored", []Part{{Type: PartText, Text: "hello"}, {Type: PartThinking, Text: "hmm"}, {Type: PartText, Text: "there"}})
			}},
		{"a tool result is its text", func() Ident { return Identity(RoleTool, "total 0", nil) },
			func() Ident {
				return Identity(RoleTool, "", []Part{{Type: PartToolResult, ToolCallID: "a", Text: "total 0"}})
			}},
		{"call IDs and key order do not count", func() Ident { return Identity(RoleAssistant, "", []Part{call(`{"a": 1, "b": [1, 2]}`)}) },
			func() Ident {
				p := call(`{"b":[1,2],"a":1}`)
				p.ToolCallID = "call_1"
				return Identity(RoleAssistant, "[tool call Bash] {...}", []Part{p})
			}},
		{"no input is {}", func() Ident { return Identity(RoleAssistant, "", []Part{call(``)}) }, func() Ident { return Identity(RoleAssistant, "", []Part{call(`{}`)}) }},
	}
	for _, tt := range same {
		if tt.a() != tt.b() {
			t.Errorf("%s: identities differ", tt.name)
		}
	}
	differ := []struct {
		name string
		a, b Ident
	}{
		{"role", Identity(RoleUser, "x", nil), Identity(RoleAssistant, "x", nil)},
		{"words", Identity(RoleUser, "ab", nil), Identity(RoleUser, "a b", nil)},
		{"input", Identity(RoleAssistant, "", []Part{call(`{"a":1}`)}), Identity(RoleAssistant, "", []Part{call(`{"a":2}`)})},
		{"text around a call", Identity(RoleAssistant, "", []Part{{Type: PartText, Text: "a"}, call(`{}`), {Type: PartText, Text: "b"}}),
			Identity(RoleAssistant, "", []Part{{Type: PartText, Text: "a b"}, call(`{}`)})},
		{"an image", Identity(RoleUser, "x", []Part{{Type: PartText, Text: "x"}, {Type: PartImage}}), Identity(RoleUser, "x", nil)},
	}
	for _, tt := range differ {
		if tt.a == tt.b {
			t.Errorf("%s: identities equal", tt.name)
		}
	}
}

// BenchmarkIdentity: a 650-byte message of prose, as the pre-request hook
// reads a thread of them.
func BenchmarkIdentity(b *testing.B) {
	text := strings.Repeat("The handler returns 401 when the cookie is missing, and the test covers it.\n", 9)[:650]
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = Identity(RoleAssistant, text, nil)
	}
}

// A control character that is not white space (a terminal's colour
// codes in a tool's output, a backspace) is part of its word: Identity
// ended never on such text once.
func TestIdentityControlCharacters(t *testing.T) {
	done := make(chan [3]Ident, 1)
	go func() {
		done <- [3]Ident{
			Identity(RoleTool, "\x1b[31mFAIL\x1b[0m  ok\b", nil),
			Identity(RoleTool, "\x1b[31mFAIL\x1b[0m ok\b", nil),
			Identity(RoleTool, "\x1b[31mFAIL\x1b[0m ok", nil),
		}
	}()
	select {
	case ids := <-done:
		if ids[0] != ids[1] {
			t.Error("white space beside control characters does not fold")
		}
		if ids[1] == ids[2] {
			t.Error("a control character does not count")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Identity did not end on text with control characters")
	}
}

// FuzzIdentity: any text has an identity (it ends), and the identity is
// that of its words joined by single spaces, whatever white space was
// between them.
func FuzzIdentity(f *testing.F) {
	f.Add("hello  world\n")
	f.Add("\x1b[31mFAIL\x1b[0m  ok\b")
	f.Add("a\u00a0b\u2003c \x00 d\xff")
	f.Fuzz(func(t *testing.T, text string) {
		got := Identity(RoleUser, text, nil)
		if want := Identity(RoleUser, strings.Join(strings.Fields(text), " "), nil); got != want {
			t.Fatalf("%q: the identity is not that of its words joined by single spaces", text)
		}
	})
}
