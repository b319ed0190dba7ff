package formats

import (
	"bytes"
	"encoding/json"
	"strings"

	sjson "github.com/segmentio/encoding/json"

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
	// Grown once to at most what it writes: a large text is copied once,
	// not again each time the builder doubles.
	size := 0
	for i := range parts {
		p := &parts[i]
		size += len(p.Text) + len(p.ToolName) + len(p.Input) + len(p.MediaType) + 32
	}
	var b strings.Builder
	b.Grow(size)
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

// LoneText is the JSON string that a list holds as its one text, a list
// of one block {"type": "text" (or "input_text", "output_text"), "text":
// "…"} or of one string; nil for any other. A tool's output often comes
// so, and is then decoded once, after its prefix (DecodeStringAfter),
// rather than block by block and copied into the content again. The list
// is read where it lies.
func LoneText(list []byte) []byte {
	var items []json.RawMessage
	if rest, err := sjson.Parse(list, &items, sjson.DontCopyRawMessage); err != nil || len(bytes.TrimSpace(rest)) > 0 || len(items) != 1 {
		return nil
	}
	item := bytes.TrimSpace(items[0])
	if len(item) > 0 && item[0] == '"' {
		return item
	}
	if len(item) == 0 || item[0] != '{' {
		return nil
	}
	var b struct {
		Type string          `json:"type"`
		Text json.RawMessage `json:"text"`
	}
	if rest, err := sjson.Parse(item, &b, sjson.DontCopyRawMessage); err != nil || len(bytes.TrimSpace(rest)) > 0 {
		return nil
	}
	switch b.Type {
	case "text", "input_text", "output_text":
		if t := bytes.TrimSpace(b.Text); len(t) > 0 && t[0] == '"' {
			return t
		}
	}
	return nil
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
