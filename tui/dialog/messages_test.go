package dialog

import (
	"strings"
	"testing"

	"weft/model"
)

func TestParseMessages(t *testing.T) {
	msgs, err := ParseMessages("--- user\nwhy?\n--- assistant\nbecause\nof this:\n\n  - a\n--- system\nbe brief\n", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[1].Role != model.RoleAssistant || msgs[1].Content != "because\nof this:\n\n  - a" || msgs[2].Content != "be brief" {
		t.Fatalf("%+v", msgs)
	}
	again, _ := ParseMessages(FormatMessages(msgs), "")
	if len(again) != 3 || again[1].Content != msgs[1].Content {
		t.Fatalf("round trip: %+v", again)
	}
	for in, want := range map[string]string{
		"hello":                          "line 1: start each message with a line “--- role”",
		"--- user\n \n--- assistant\nok": "message 1 (user) is empty",
	} {
		if _, err := ParseMessages(in, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if msgs, err := ParseMessages("", ""); err != nil || len(msgs) != 0 {
		t.Errorf("empty: %v %v", msgs, err)
	}
	// Without a header, a text is one message of the role given.
	if msgs, err := ParseMessages("just text", model.RoleTool); err != nil || len(msgs) != 1 || msgs[0].Role != model.RoleTool {
		t.Errorf("headless text: %+v %v", msgs, err)
	}
}

// TestMessageTextsAreNotSplitByWhatTheySay: a text with lines that begin
// "User:" or "System:", or that read as a header, stays one message, and
// comes back exactly as it was.
func TestMessageTextsAreNotSplitByWhatTheySay(t *testing.T) {
	texts := []string{
		"Here is the transcript:\nUser: hi\nSystem: be brief\nassistant: ok",
		"--- user\nlooks like a header",
		"\\--- assistant\nand an escaped one\n\\\\--- tool",
		"    indented code\n\tand a tab",
	}
	for _, text := range texts {
		in := []model.NewMessage{{Role: model.RoleAssistant, Content: text}, {Role: model.RoleUser, Content: "next"}}
		out, err := ParseMessages(FormatMessages(in), "")
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if len(out) != 2 || out[0].Content != text || out[0].Role != model.RoleAssistant || out[1].Content != "next" {
			t.Errorf("%q came back as %+v", text, out)
		}
	}
	if s := FormatMessages([]model.NewMessage{{Role: model.RoleUser, Content: "one"}}); s != "--- user\none" {
		t.Errorf("a message is written as %q, with no newline after it", s)
	}
}
