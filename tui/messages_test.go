package tui

import (
	"strings"
	"testing"

	"weft/model"
)

func TestParseMessages(t *testing.T) {
	msgs, err := parseMessages("user: why?\nassistant: because\nof this:\n\n  - a\nsystem:be brief\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[1].Role != model.RoleAssistant || msgs[1].Content != "because\nof this:\n\n  - a" || msgs[2].Content != "be brief" {
		t.Fatalf("%+v", msgs)
	}
	again, _ := parseMessages(formatMessages(msgs))
	if len(again) != 3 || again[1].Content != msgs[1].Content {
		t.Fatalf("round trip: %+v", again)
	}
	for in, want := range map[string]string{
		"hello":                 "line 1: start each message with its role",
		"user: \nassistant: ok": "message 1 (user) is empty",
	} {
		if _, err := parseMessages(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if msgs, err := parseMessages(""); err != nil || len(msgs) != 0 {
		t.Errorf("empty: %v %v", msgs, err)
	}
}
