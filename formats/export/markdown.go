package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"weft/formats"
	"weft/model"
)

// WriteMarkdown writes a readable transcript: the title, then each item
// under a heading that says who speaks and when (and which operation
// made it, for a synthetic item), its content as it is (it is already
// markdown-ish), tool calls as fenced JSON, tool results (and the
// content of tool messages) fenced, and its tags. The same items always
// give the same bytes.
func WriteMarkdown(w io.Writer, title string, items []formats.Item) error {
	// A write to bw that fails keeps its error for the Flush at the end.
	bw := bufio.NewWriterSize(w, 1<<16)
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		title = "Untitled thread"
	}
	_, _ = bw.WriteString("# ")
	_, _ = bw.WriteString(title)
	_, _ = bw.WriteString("\n")
	var md xmWriter
	md.w = bw
	for i := range items {
		it := &items[i]
		_, _ = bw.WriteString("\n### ")
		xmHeading(bw, it)
		_, _ = bw.WriteString("\n")
		md.blocks = 0
		if xpStructural(it.Parts) {
			for k := range it.Parts {
				md.part(&it.Parts[k])
			}
		} else if it.Role == model.RoleTool && strings.TrimSpace(it.Content) != "" {
			md.fenced("", it.Content) // a tool's output, as a result part is
		} else {
			md.text(it.Content)
		}
		if md.blocks == 0 {
			md.para("*(empty)*")
		}
		if len(it.Tags) > 0 {
			var b strings.Builder
			b.WriteString("Tags:")
			for k, t := range it.Tags {
				if k > 0 {
					b.WriteString(",")
				}
				b.WriteString(" ")
				b.WriteString(xmCode(t))
			}
			md.para(b.String())
		}
	}
	return bw.Flush()
}

// xmHeading writes an item's heading: role, name, the operation that
// made it, time.
func xmHeading(w *bufio.Writer, it *formats.Item) {
	role := string(it.Role)
	if role == "" {
		role = "unknown"
	}
	_, _ = w.WriteString(role)
	if it.Name != "" {
		_, _ = w.WriteString(" · ")
		_, _ = w.WriteString(strings.Join(strings.Fields(it.Name), " "))
	}
	if it.Synthetic {
		_, _ = w.WriteString(" · ")
		switch it.OpType {
		case model.OpDigest:
			_, _ = w.WriteString("digest summary")
		case model.OpRevise:
			_, _ = w.WriteString("revision")
		case model.OpInsert:
			_, _ = w.WriteString("inserted")
		case "":
			_, _ = w.WriteString("synthetic")
		default:
			_, _ = w.WriteString(string(it.OpType))
		}
	}
	if !it.CreatedAt.IsZero() {
		_, _ = w.WriteString(" · ")
		_, _ = w.WriteString(it.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
}

// xmWriter writes an item's body as blocks separated by blank lines.
type xmWriter struct {
	w      *bufio.Writer
	blocks int
	buf    bytes.Buffer
}

// para writes one block; s ends without a newline.
func (m *xmWriter) para(s string) {
	_, _ = m.w.WriteString("\n")
	_, _ = m.w.WriteString(s)
	_, _ = m.w.WriteString("\n")
	m.blocks++
}

func (m *xmWriter) text(s string) {
	s = strings.TrimRight(s, " \t\r\n")
	s = strings.TrimLeft(s, "\r\n")
	if strings.TrimSpace(s) == "" {
		return
	}
	m.para(s)
}

func (m *xmWriter) fenced(lang, s string) {
	s = strings.TrimRight(s, "\r\n")
	fence := xmFence(s, '`')
	var b strings.Builder
	b.WriteString(fence)
	b.WriteString(lang)
	b.WriteString("\n")
	if s != "" {
		b.WriteString(s)
		b.WriteString("\n")
	}
	b.WriteString(fence)
	m.para(b.String())
}

func (m *xmWriter) part(p *model.Part) {
	switch p.Type {
	case model.PartText:
		m.text(p.Text)
	case model.PartThinking:
		if t := strings.TrimSpace(p.Text); t != "" {
			m.para("<details><summary>thinking</summary>\n\n" + t + "\n\n</details>")
		}
	case model.PartImage:
		m.para("*" + xpImageText(p.MediaType) + "*")
	case model.PartToolCall:
		head := "**tool call** " + xmCode(xmOr(p.ToolName, "(unnamed)"))
		if p.ToolCallID != "" {
			head += " · " + xmCode(p.ToolCallID)
		}
		m.para(head)
		m.buf.Reset()
		in := "{}"
		if len(bytes.TrimSpace(p.Input)) > 0 {
			if json.Indent(&m.buf, p.Input, "", "  ") == nil {
				in = m.buf.String()
			} else {
				in = string(p.Input)
			}
		}
		m.fenced("json", in)
	case model.PartToolResult:
		head := "**tool result**"
		if p.IsError {
			head = "**tool error**"
		}
		if p.ToolName != "" {
			head += " " + xmCode(p.ToolName)
		}
		if p.ToolCallID != "" {
			head += " · " + xmCode(p.ToolCallID)
		}
		m.para(head)
		m.fenced("", p.Text)
	}
}

func xmOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// xmFence is a fence of c longer than any run of c in s (at least 3).
func xmFence(s string, c byte) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat(string(c), max(3, longest+1))
}

// xmCode is s as inline code.
func xmCode(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	f := strings.Repeat("`", longest+1)
	return f + " " + s + " " + f
}
