package tui

import (
	"fmt"
	"strings"

	"weft/model"
)

// The revise and insert dialogs edit messages as plain text, one message
// per block, each starting with its role:
//
//	user: the question
//	assistant: the answer,
//	which may go on for several lines
//
// formatMessages and parseMessages convert between that and messages.

// messagesNote tells the operator the form, in the dialogs that use it.
const messagesNote = "role: text, a block per message"

func formatMessages(msgs []model.NewMessage) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	return b.String()
}

func roleLine(line string) (model.Role, string, bool) {
	head, rest, ok := strings.Cut(line, ":")
	if !ok {
		return "", "", false
	}
	r := model.Role(strings.ToLower(strings.TrimSpace(head)))
	if !r.Valid() || strings.TrimSpace(head) != head {
		return "", "", false
	}
	return r, strings.TrimPrefix(rest, " "), true
}

func parseMessages(s string) ([]model.NewMessage, error) {
	var out []model.NewMessage
	var cur *model.NewMessage
	var body []string
	flush := func() {
		if cur != nil {
			cur.Content = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
	}
	for n, line := range strings.Split(s, "\n") {
		if role, rest, ok := roleLine(line); ok {
			flush()
			cur, body = &model.NewMessage{Role: role}, []string{rest}
			continue
		}
		if cur == nil {
			if strings.TrimSpace(line) == "" {
				continue
			}
			return nil, fmt.Errorf("line %d: start each message with its role (user:, assistant:, system: or tool:)", n+1)
		}
		body = append(body, line)
	}
	flush()
	for i, m := range out {
		if m.Content == "" {
			return nil, fmt.Errorf("message %d (%s) is empty", i+1, m.Role)
		}
	}
	return out, nil
}
