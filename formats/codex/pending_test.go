package codex

import (
	"strings"
	"testing"
)

// Codex writes what the CLI showed (an event) a moment before the
// response item it repeats: a file read between the two would import
// the event as a message of its own, so a last line that is such an
// event waits for what follows it.
func TestPending(t *testing.T) {
	event := `{"timestamp":"2026-01-02T03:04:07.000Z","type":"event_msg","payload":{"type":"agent_message","message":"Done."}}` + "\n"
	item := `{"timestamp":"2026-01-02T03:04:07.001Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}` + "\n"
	count := `{"timestamp":"2026-01-02T03:04:08.000Z","type":"event_msg","payload":{"type":"token_count"}}` + "\n"
	tests := []struct {
		data string
		held string
	}{
		{"", ""},
		{item, ""},
		{item + event, event},
		{event + item, ""},
		{item + count, ""},
		{item + "{broken\n", ""},
	}
	for _, tt := range tests {
		if got, want := Pending([]byte(tt.data)), len(tt.data)-len(tt.held); got != want {
			t.Errorf("Pending(%q) = %d, want %d", strings.TrimSpace(tt.data), got, want)
		}
	}
}
