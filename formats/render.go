package formats

import (
	"strings"

	"weft/model"
)

// RenderContent is the readable text of a message made of parts: what
// weft shows, searches and counts. Text parts as they are; a tool call as
// "[tool call NAME] {input}"; a tool result as "[tool result] output" (or
// "[tool error]"). Thinking stays in the parts only: it is not part of
// what the conversation said.
func RenderContent(parts []model.Part) string {
	// A message of one text (what most are) is that text, not a copy
	// of it: it may be megabytes.
	if text, ok := onlyText(parts); ok {
		return text
	}
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
	}
	for _, p := range parts {
		switch p.Type {
		case model.PartText:
			if strings.TrimSpace(p.Text) == "" {
				continue
			}
			sep()
			b.WriteString(p.Text)
		case model.PartToolCall:
			sep()
			b.WriteString("[tool call ")
			b.WriteString(p.ToolName)
			b.WriteString("]")
			if in := string(Compact(p.Input)); in != "" && in != "{}" {
				b.WriteString(" ")
				b.WriteString(in)
			}
		case model.PartToolResult:
			sep()
			b.WriteString(ResultPrefix(p.IsError))
			b.WriteString(p.Text)
		case model.PartImage:
			sep()
			b.WriteString("[image")
			if p.MediaType != "" {
				b.WriteString(" " + p.MediaType)
			}
			b.WriteString("]")
		}
	}
	return b.String()
}

// ResultPrefix is what a tool result's text renders after (RenderContent).
func ResultPrefix(isError bool) string {
	if isError {
		return "[tool error] "
	}
	return "[tool result] "
}

// onlyText is the text of parts that render as one text part alone
// (thinking, blank text and other parts render as nothing).
func onlyText(parts []model.Part) (string, bool) {
	text, found := "", false
	for i := range parts {
		switch p := &parts[i]; p.Type {
		case model.PartToolCall, model.PartToolResult, model.PartImage:
			return "", false
		case model.PartText:
			if strings.TrimSpace(p.Text) == "" {
				continue
			}
			if found {
				return "", false
			}
			text, found = p.Text, true
		}
	}
	return text, found
}

// Blank reports whether parts hold nothing to show: no parts, or only
// blank text and thinking.
func Blank(parts []model.Part) bool {
	for _, p := range parts {
		switch p.Type {
		case model.PartText, model.PartThinking:
			if strings.TrimSpace(p.Text) != "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}
