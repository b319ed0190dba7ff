package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sjson "github.com/segmentio/encoding/json"

	"weft/formats"
	"weft/formats/internal/records"
	"weft/model"
)

// message is a message, or a record, or something else: one decode
// tells which.
type message struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	FunctionCall     json.RawMessage `json:"function_call"`
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"`
	// weft's own shape, as append_messages takes it
	Parts     json.RawMessage `json:"parts"`
	CreatedAt json.RawMessage `json:"created_at"`

	// a record
	Messages json.RawMessage `json:"messages"`
	records.MediaLists
	// other formats
	Mapping       json.RawMessage `json:"mapping"`
	CurrentNode   json.RawMessage `json:"current_node"`
	Conversations json.RawMessage `json:"conversations"`

	// read are the parts the message read was made of (nil for one of
	// text alone), for ReadMessages to hand on.
	read []model.Part `json:"-"`
	// asRead: ReadMessages reads, whose messages are read where they
	// lie (not copied whole: a message may be megabytes), and whose
	// parts go to the store as read (ReadParts), their blocks kept
	// (formats.KeepParts, with lend).
	asRead bool `json:"-"`
	lend   int  `json:"-"`
}

// isMessage reports whether m has what a message has.
func (m *message) isMessage() bool {
	return m.Role != "" || len(m.Content) > 0 || m.ToolCalls != nil
}

// reset empties m for the next decode, keeping its content's buffer
// (whether a message has content is len(Content) > 0).
func (m *message) reset() {
	if m.asRead {
		// Content pointed into the last message read.
		*m = message{asRead: true, lend: m.lend}
		return
	}
	*m = message{Content: m.Content[:0]}
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
	Custom struct {
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"custom"`
}

type block struct {
	Type       string          `json:"type"`
	Text       json.RawMessage `json:"text"`
	Refusal    string          `json:"refusal"`
	ImageURL   json.RawMessage `json:"image_url"`
	InputAudio struct {
		Format string `json:"format"`
	} `json:"input_audio"`
}

// mapRole maps a role to weft's, and says which source role it was when
// it is not weft's own; "" for a role weft does not know.
func mapRole(role string) (model.Role, string) {
	switch role {
	case "system", "user", "assistant", "tool":
		return model.Role(role), ""
	case "developer":
		return model.RoleSystem, role
	case "function":
		return model.RoleTool, role
	}
	return "", ""
}

// notRecord is the reason a record is not read as a message; callers
// say where it was.
const notRecord = `a record with "messages"`

// readMessage reads one message: the fast way when it can (see
// fastMessage), else decoded into m and converted. It returns the
// message, or why it could not be read (records.Empty for a message with
// nothing in it, notRecord for a record).
func readMessage(raw []byte, m *message, calls *records.Calls, media *records.Media) (model.NewMessage, string) {
	if media == nil {
		if nm, ok := fastMessage(raw); ok {
			if strings.TrimSpace(nm.Content) == "" {
				return model.NewMessage{}, records.Empty
			}
			return nm, ""
		}
	}
	if reason := decode(raw, m); reason != "" {
		return model.NewMessage{}, reason
	}
	if m.Messages != nil {
		return model.NewMessage{}, notRecord
	}
	return convert(m, raw, calls, media)
}

// decode reads raw, an object, into m, or says why it cannot.
func decode(raw []byte, m *message) string {
	m.reset()
	if m.asRead {
		// Its fields point into raw, not copies of what may be
		// megabytes: what is kept of them is copied (KeepParts).
		rest, err := sjson.Parse(raw, m, sjson.DontCopyRawMessage)
		if err == nil && len(bytes.TrimSpace(rest)) == 0 {
			return ""
		}
		m.reset() // and what is wrong, said as encoding/json says it
	}
	err := json.Unmarshal(raw, m)
	var syn *json.SyntaxError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &syn):
		return "not valid JSON"
	}
	return formats.DescribeError(err)
}

// convert makes a message to import of m (raw as the source has it), or
// says why it cannot.
func convert(m *message, raw []byte, calls *records.Calls, media *records.Media) (model.NewMessage, string) {
	role, sourceRole := mapRole(m.Role)
	if role == "" {
		if m.Role == "" {
			return model.NewMessage{}, `it has no "role"`
		}
		return model.NewMessage{}, fmt.Sprintf("role %q is not one of system, developer, user, assistant, tool, function", m.Role)
	}
	nm := model.NewMessage{Role: role, Name: m.Name}
	if sourceRole != "" {
		nm.Meta = map[string]string{"source_role": sourceRole}
	}
	nm.CreatedAt = createdAt(m.CreatedAt)
	content := bytes.TrimSpace(m.Content)
	if !formats.IsNull(m.Parts) {
		return weftParts(nm, m, content, calls)
	}

	// The common case: plain text, nothing else.
	if len(content) > 0 && content[0] == '"' && role != model.RoleTool &&
		m.ToolCalls == nil && m.FunctionCall == nil && m.Refusal == "" && m.ReasoningContent == "" {
		s, ok := formats.DecodeString(content)
		if !ok {
			return model.NewMessage{}, "its content is not a valid string"
		}
		if !media.Has(s) {
			nm.Content = s
			if strings.TrimSpace(s) == "" {
				return model.NewMessage{}, records.Empty
			}
			return nm, ""
		}
	}

	var parts []model.Part
	if m.ReasoningContent != "" {
		parts = append(parts, model.Part{Type: model.PartThinking, Text: m.ReasoningContent, Raw: formats.Marshal(m.ReasoningContent)})
	}
	// A tool's output of a string, or of a list of one text block, is
	// decoded once, after the prefix its content renders it with
	// (RenderContent): the part's text is the content's end, not a
	// second copy of megabytes.
	var rendered string
	var cparts []model.Part
	if role == model.RoleTool && media == nil && len(content) > 0 && m.ReasoningContent == "" {
		lit := content
		if content[0] == '[' {
			lit = formats.LoneText(content)
		}
		prefix := formats.ResultPrefix(false)
		if len(lit) > 0 && lit[0] == '"' {
			if s, ok := formats.DecodeStringAfter(prefix, lit); ok && strings.TrimSpace(s[len(prefix):]) != "" {
				rendered, cparts = s, []model.Part{{Type: model.PartText, Text: s[len(prefix):]}}
			}
		}
	}
	if cparts == nil {
		var err string
		if cparts, err = contentParts(content, media); err != "" {
			return model.NewMessage{}, err
		}
	}

	if role == model.RoleTool {
		// The output is the text; images shown by the tool follow it.
		var text []string
		var rest []model.Part
		for _, p := range cparts {
			if p.Type == model.PartText {
				text = append(text, p.Text)
			} else {
				rest = append(rest, p)
			}
		}
		res := model.Part{Type: model.PartToolResult, Text: strings.Join(text, "\n\n")}
		if sourceRole != "function" { // a function result names its function itself
			id, name := calls.Answered(m.ToolCallID)
			res.ToolCallID = id
			if nm.Name == "" {
				nm.Name = name
			}
		}
		res.Raw = raw // the whole message
		if !m.asRead {
			res.Raw = append(json.RawMessage(nil), raw...)
		}
		parts = append(parts, res)
		parts = append(parts, rest...)
	} else {
		parts = append(parts, cparts...)
		if m.Refusal != "" {
			parts = append(parts, model.Part{Type: model.PartText, Text: m.Refusal, Raw: formats.Marshal(m.Refusal)})
			if nm.Meta == nil {
				nm.Meta = map[string]string{}
			}
			nm.Meta["refusal"] = "true"
		}
		var legacy []model.Part
		if !formats.IsNull(m.FunctionCall) {
			var fc struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if e := json.Unmarshal(m.FunctionCall, &fc); e != nil {
				return model.NewMessage{}, "function_call: " + formats.DescribeError(e)
			}
			legacy = []model.Part{{Type: model.PartToolCall, ToolName: fc.Name,
				Input: formats.ToolInput(fc.Arguments), Raw: formats.Compact(m.FunctionCall)}}
		}
		// Last: a message that is skipped leaves no call waiting.
		called, err := toolCalls(m.ToolCalls, calls)
		if err != "" {
			return model.NewMessage{}, err
		}
		parts = append(parts, called...)
		parts = append(parts, legacy...)
	}
	if rendered != "" && len(parts) == 1 {
		nm.Content = rendered
	} else {
		nm.Content = formats.RenderContent(parts)
	}
	if m.asRead {
		nm.ReadParts = formats.KeepParts(parts, m.lend)
	} else {
		nm.Parts = model.MarshalParts(parts)
	}
	if strings.TrimSpace(nm.Content) == "" && len(parts) == 0 {
		return model.NewMessage{}, records.Empty
	}
	m.read = parts
	return nm, ""
}

// createdAt reads a message's "created_at" (RFC 3339, as weft writes
// it); anything else gives no time, and the message is imported as of
// now.
func createdAt(raw json.RawMessage) time.Time {
	s, ok := formats.DecodeString(bytes.TrimSpace(raw))
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// weftParts reads a message of weft's own shape (as append_messages
// takes it): its parts as weft writes them, kept as they are, and its
// content as given or, when that is empty (a message of tool calls
// alone), drawn from the parts.
func weftParts(nm model.NewMessage, m *message, content []byte, calls *records.Calls) (model.NewMessage, string) {
	raw := m.Parts
	var parts []model.Part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return model.NewMessage{}, "its parts: " + formats.DescribeError(err)
	}
	if len(content) > 0 && !formats.IsNull(content) {
		s, ok := formats.DecodeString(content)
		if !ok {
			return model.NewMessage{}, `its content is not a string (beside "parts", the content is the message's text)`
		}
		nm.Content = s
	}
	for _, p := range parts {
		switch p.Type {
		case model.PartToolCall:
			calls.Called(p.ToolCallID, p.ToolName)
		case model.PartToolResult:
			calls.Answered(p.ToolCallID)
		}
	}
	if strings.TrimSpace(nm.Content) == "" {
		nm.Content = formats.RenderContent(parts)
	}
	nm.Parts = model.MarshalParts(parts)
	if strings.TrimSpace(nm.Content) == "" && len(parts) == 0 {
		return model.NewMessage{}, records.Empty
	}
	m.read = parts
	return nm, ""
}

// contentParts reads a message's content: a string, null or a list of
// parts.
func contentParts(content []byte, media *records.Media) ([]model.Part, string) {
	if formats.IsNull(content) {
		return nil, ""
	}
	switch content[0] {
	case '"':
		s, ok := formats.DecodeString(content)
		if !ok {
			return nil, "its content is not a valid string"
		}
		if media.Has(s) {
			return media.Split(s), ""
		}
		if strings.TrimSpace(s) == "" {
			return nil, ""
		}
		return []model.Part{{Type: model.PartText, Text: s, Raw: append(json.RawMessage(nil), content...)}}, ""
	case '[':
	default:
		return nil, "its content is " + formats.DescribeJSON(content) + ", not a string, a list of parts or null"
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, "its content: " + formats.DescribeError(err)
	}
	parts := make([]model.Part, 0, len(blocks))
	for _, raw := range blocks {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		if raw[0] == '"' {
			s, _ := formats.DecodeString(raw)
			if media.Has(s) {
				parts = append(parts, media.Split(s)...)
			} else {
				parts = append(parts, model.Part{Type: model.PartText, Text: s, Raw: raw})
			}
			continue
		}
		parts = append(parts, blockPart(raw, media)...)
	}
	return parts, ""
}

// blockPart normalises one block of a content list.
func blockPart(raw json.RawMessage, media *records.Media) []model.Part {
	other := []model.Part{{Type: model.PartOther, Raw: raw}}
	if raw[0] != '{' {
		return other
	}
	var b block
	if json.Unmarshal(raw, &b) != nil {
		return other
	}
	switch b.Type {
	case "text", "input_text", "output_text":
		text, ok := formats.DecodeString((b.Text))
		if !ok {
			// {"text": {"value": ...}} (the Assistants API)
			var v struct {
				Value string `json:"value"`
			}
			if json.Unmarshal(b.Text, &v) != nil {
				return other
			}
			text = v.Value
		}
		if media.Has(text) {
			return media.Split(text)
		}
		return []model.Part{{Type: model.PartText, Text: text, Raw: raw}}
	case "refusal":
		return []model.Part{{Type: model.PartText, Text: b.Refusal, Raw: raw}}
	case "image_url", "input_image", "image":
		p := model.Part{Type: model.PartImage, Raw: raw}
		url, ok := formats.DecodeString((b.ImageURL))
		if !ok {
			var o struct {
				URL string `json:"url"`
			}
			_ = json.Unmarshal(b.ImageURL, &o)
			url = o.URL
		}
		p.MediaType = formats.MediaType(url)
		return []model.Part{p}
	case "input_audio":
		p := model.Part{Type: model.PartOther, Raw: raw}
		if f := b.InputAudio.Format; f != "" {
			p.MediaType = "audio/" + f
		}
		return []model.Part{p}
	}
	return other
}

// toolCalls reads an assistant's tool_calls.
func toolCalls(raw json.RawMessage, calls *records.Calls) ([]model.Part, string) {
	if formats.IsNull(raw) {
		return nil, ""
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, "tool_calls: " + formats.DescribeError(err)
	}
	parts := make([]model.Part, 0, len(list))
	for i, craw := range list {
		var c toolCall
		if err := json.Unmarshal(craw, &c); err != nil {
			return nil, fmt.Sprintf("tool call %d: %s", i+1, formats.DescribeError(err))
		}
		p := model.Part{Type: model.PartToolCall, ToolCallID: c.ID, Raw: formats.Compact(craw)}
		switch {
		case c.Type == "custom" || c.Function.Name == "" && c.Custom.Name != "":
			p.ToolName = c.Custom.Name
			in := bytes.TrimSpace(c.Custom.Input)
			if len(in) > 0 && in[0] == '"' {
				p.Input = in
			} else {
				p.Input = formats.ToolInput(in)
			}
		default:
			p.ToolName = c.Function.Name
			p.Input = formats.ToolInput(c.Function.Arguments)
		}
		parts = append(parts, p)
	}
	for i, p := range parts { // once all are read
		if p.ToolCallID == "" {
			parts[i].ToolCallID = calls.NewID()
		}
		calls.Called(parts[i].ToolCallID, p.ToolName)
	}
	return parts, ""
}
