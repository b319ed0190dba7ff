package dialog

import (
	"fmt"
	"strings"

	"weft/model"
)

// The revise and insert dialogs edit messages as plain text. A line that
// is nothing but three dashes and a role starts a message; everything up
// to the next such line is its text, exactly as written:
//
//	--- user
//	the question
//	--- assistant
//	the answer, which may go on
//	for several lines, and say User: or System: freely
//
// Only that line splits messages, so no text a message carries is taken
// for a role. A line of the text that would read as one is written with a
// backslash in front (\--- user), and read back without it.
// FormatMessages and ParseMessages convert between that and messages.

// MessagesNote tells the operator the form, in the dialogs that use it.
const MessagesNote = "a line “--- role” starts a message (user, assistant, system, tool)"

// HeaderLine is the line that starts a message of role r.
func HeaderLine(r model.Role) string { return "--- " + string(r) }

// roleOf reports whether line starts a message, and of which role.
func roleOf(line string) (model.Role, bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, " \t"), "--- ")
	if !ok {
		return "", false
	}
	r := model.Role(strings.TrimSpace(rest))
	return r, r.Valid()
}

// escaped reports whether line is a header (or an escaped one) behind n
// backslashes, n >= 1: such a line of a text is written with one more.
func escaped(line string) bool {
	t := strings.TrimLeft(line, `\`)
	if len(t) == len(line) {
		return false
	}
	_, ok := roleOf(t)
	return ok
}

// FormatMessages writes messages as the dialogs show them: each after
// its header line, a line of its text that would read as one escaped.
func FormatMessages(msgs []model.NewMessage) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(HeaderLine(m.Role))
		for _, line := range strings.Split(m.Content, "\n") {
			b.WriteByte('\n')
			if _, ok := roleOf(line); ok || escaped(line) {
				b.WriteByte('\\')
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

// ParseMessages reads the dialog's text back into messages. Text before
// the first header is a message of role def, when def is given (the
// operator took the header away from a one-message text); else it is an
// error. Each message's text is kept as written, less the blank lines
// around it.
func ParseMessages(s string, def model.Role) ([]model.NewMessage, error) {
	var out []model.NewMessage
	var cur *model.NewMessage
	var body []string
	flush := func() {
		if cur != nil {
			cur.Content = trimBlankLines(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
	}
	for n, line := range strings.Split(s, "\n") {
		if role, ok := roleOf(line); ok {
			flush()
			cur, body = &model.NewMessage{Role: role}, nil
			continue
		}
		if escaped(line) {
			line = line[1:]
		}
		if cur == nil {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if def == "" {
				return nil, fmt.Errorf("line %d: start each message with a line “--- role” (user, assistant, system or tool)", n+1)
			}
			cur = &model.NewMessage{Role: def}
		}
		body = append(body, line)
	}
	flush()
	for i, m := range out {
		if strings.TrimSpace(m.Content) == "" {
			return nil, fmt.Errorf("message %d (%s) is empty: write its text, or take its “--- %s” line away", i+1, m.Role, m.Role)
		}
	}
	return out, nil
}

// trimBlankLines drops the blank lines before and after a text and the
// spaces that end it, and keeps the rest (indentation included) as it is.
func trimBlankLines(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			return s
		}
		s = rest
	}
}
