package chatgpt

import (
	"encoding/json"
	"fmt"
	"strings"

	"weft/formats"
	"weft/model"
)

// The messages of a conversation's active path, as weft imports them:
// roles, tool calls and their results, parts and meta.

type cgCall struct {
	id, tool string
	answered bool
}

// build turns the path's messages into messages to emit.
func (cg *cgReader) build(label string, msgs []cgPathMsg) []formats.Message {
	var out []formats.Message
	var last *cgCall // the latest tool call, for linking its result
	for i := range msgs {
		pm := &msgs[i]
		m, c := &pm.msg, &pm.content
		role := model.Role(m.Author.Role)
		switch m.Author.Role {
		case "user", "assistant", "system", "tool":
		case "developer":
			role = model.RoleSystem
		default:
			cg.problems.Add(0, fmt.Sprintf("%s: message %s has author role %q, which is none of user, assistant, system, tool; skipped", label, pm.node, m.Author.Role))
			continue
		}
		content := formats.Compact(m.Content)
		meta := map[string]string{"source_id": pm.node}
		if m.ID != "" {
			meta["source_id"] = m.ID
		}
		if pm.meta.model != "" {
			meta["model"] = pm.meta.model
		}
		if c.ContentType != "" && c.ContentType != "text" {
			meta["content_type"] = c.ContentType
		}
		if names := cgAttachmentNames(pm.meta.attachments); names != "" {
			meta["attachments"] = names
		}
		var parts []model.Part
		name := ""
		recipient := m.Recipient
		if recipient == "all" {
			recipient = ""
		}
		switch {
		case role == model.RoleTool || c.ContentType == "execution_output":
			role, name = model.RoleTool, m.Author.Name
			text, images := cgToolOutput(c, pm.meta.attachments)
			res := model.Part{Type: model.PartToolResult, Text: text, IsError: c.ContentType == "system_error", Raw: content}
			if last != nil && !last.answered && (last.tool == "" || name == "" || last.tool == name) {
				res.ToolCallID, last.answered = last.id, true
			}
			if res.ToolCallID != "" && name == "" {
				name = last.tool
			}
			parts = append([]model.Part{res}, images...)
		case pm.loose:
			parts = []model.Part{{Type: model.PartOther, Raw: content}}
		case role == model.RoleAssistant && (c.ContentType == "code" || recipient != "" && c.ContentType == "text"):
			tool := recipient
			if tool == "" {
				tool = "python"
				if i+1 < len(msgs) && msgs[i+1].msg.Author.Role == "tool" && msgs[i+1].msg.Author.Name != "" {
					tool = msgs[i+1].msg.Author.Name
				}
			}
			var input json.RawMessage
			if c.ContentType == "code" {
				input = formats.Marshal(map[string]string{"code": c.Text})
			} else {
				text := cgJoinText(c.Parts)
				if t := strings.TrimSpace(text); t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
					input = formats.Compact(json.RawMessage(t))
				} else {
					input = formats.Marshal(map[string]string{"text": text})
				}
			}
			parts = []model.Part{{Type: model.PartToolCall, ToolCallID: pm.node, ToolName: tool, Input: input, Raw: content}}
			meta["recipient"] = tool
			last = &cgCall{id: pm.node, tool: tool}
		default:
			parts = cgParts(c, content, pm.meta.attachments)
			if role == model.RoleUser || role == model.RoleSystem {
				last = nil
			}
		}
		if role != model.RoleTool && formats.Blank(parts) {
			continue
		}
		nm := model.NewMessage{
			Role:      role,
			Content:   formats.RenderContent(parts),
			Name:      name,
			Parts:     model.MarshalParts(parts),
			CreatedAt: cgTime(m.CreateTime),
			Meta:      meta,
		}
		if err := nm.Validate(); err != nil {
			cg.problems.Add(0, fmt.Sprintf("%s: message %s: %s; skipped", label, pm.node, err))
			continue
		}
		out = append(out, formats.Message{Key: pm.node, NewMessage: nm})
	}
	return out
}

// cgParts normalises a user, assistant or system message's content.
func cgParts(c *cgContent, content json.RawMessage, atts []cgAttachment) []model.Part {
	switch c.ContentType {
	case "text", "multimodal_text":
		parts := make([]model.Part, 0, len(c.Parts))
		for _, raw := range c.Parts {
			if p, ok := cgPart(raw, atts); ok {
				parts = append(parts, p)
			}
		}
		return parts
	case "thoughts":
		var parts []model.Part
		for _, raw := range c.Thoughts {
			var th struct {
				Summary string `json:"summary"`
				Content string `json:"content"`
			}
			_ = json.Unmarshal(raw, &th)
			text := strings.TrimSpace(th.Summary)
			if body := strings.TrimSpace(th.Content); body != "" {
				if text != "" {
					text += "\n\n"
				}
				text += body
			}
			parts = append(parts, model.Part{Type: model.PartThinking, Text: text, Raw: formats.Compact(raw)})
		}
		return parts
	case "reasoning_recap":
		var s string
		_ = json.Unmarshal(c.Content, &s)
		return []model.Part{{Type: model.PartThinking, Text: s, Raw: content}}
	}
	if len(content) == 0 {
		return nil
	}
	return []model.Part{{Type: model.PartOther, Raw: content}}
}

// cgPart reads one element of a text or multimodal_text message's parts.
func cgPart(raw json.RawMessage, atts []cgAttachment) (model.Part, bool) {
	raw = formats.Compact(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return model.Part{}, false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return model.Part{}, false
		}
		return model.Part{Type: model.PartText, Text: s, Raw: raw}, true
	case '{':
		var o struct {
			ContentType  string `json:"content_type"`
			AssetPointer string `json:"asset_pointer"`
			Text         string `json:"text"`
		}
		_ = json.Unmarshal(raw, &o)
		switch o.ContentType {
		case "image_asset_pointer":
			return model.Part{Type: model.PartImage, MediaType: cgMediaType(o.AssetPointer, atts), Raw: raw}, true
		case "audio_transcription":
			return model.Part{Type: model.PartText, Text: o.Text, Raw: raw}, true
		}
	}
	return model.Part{Type: model.PartOther, Raw: raw}, true
}

// cgMediaType is the media type of the attachment an asset pointer
// (file-service://file-ID, sediment://file_ID) names, if the message
// lists it.
func cgMediaType(pointer string, atts []cgAttachment) string {
	if i := strings.Index(pointer, "://"); i >= 0 {
		pointer = pointer[i+3:]
	}
	for _, a := range atts {
		if a.ID != "" && a.ID == pointer {
			return a.MimeType
		}
	}
	return ""
}

func cgAttachmentNames(atts []cgAttachment) string {
	var names []string
	for _, a := range atts {
		if a.Name != "" {
			names = append(names, a.Name)
		}
	}
	return strings.Join(names, ", ")
}

// cgToolOutput is the text of a tool's message, whatever its content type,
// and the images it shows.
func cgToolOutput(c *cgContent, atts []cgAttachment) (string, []model.Part) {
	var b strings.Builder
	add := func(s string) {
		if strings.TrimSpace(s) == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s)
	}
	add(c.Text)
	add(c.Result)
	var images []model.Part
	for _, raw := range c.Parts {
		p, ok := cgPart(raw, atts)
		switch {
		case !ok:
		case p.Type == model.PartText:
			add(p.Text)
		case p.Type == model.PartImage:
			images = append(images, p)
		}
	}
	var s string
	if json.Unmarshal(c.Content, &s) == nil {
		add(s)
	}
	return b.String(), images
}

func cgJoinText(parts []json.RawMessage) string {
	var texts []string
	for _, raw := range parts {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n")
}
