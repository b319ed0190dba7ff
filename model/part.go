package model

import "encoding/json"

// Part is one structured block of a message, as stored (JSON array) in
// Message.Parts. Importers normalise their sources' blocks into parts and
// keep each source block verbatim in Raw; exporters write parts back in
// the shape each provider takes.
type Part struct {
	Type PartType `json:"type"`
	// Text of a text, thinking or tool_result part.
	Text string `json:"text,omitempty"`
	// ToolCallID links a tool_call to its tool_result.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName and Input (JSON) of a tool_call.
	ToolName string          `json:"tool_name,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	// IsError marks a failed tool_result.
	IsError bool `json:"is_error,omitempty"`
	// MediaType of an image or other attachment.
	MediaType string `json:"media_type,omitempty"`
	// Raw is the source's block, verbatim.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// PartType is the kind of a part.
type PartType string

// The kinds of parts.
const (
	PartText       PartType = "text"        // plain text
	PartThinking   PartType = "thinking"    // a model's reasoning
	PartToolCall   PartType = "tool_call"   // a call of a tool, with its input
	PartToolResult PartType = "tool_result" // what a tool answered
	PartImage      PartType = "image"       // an image, by data or reference
	PartOther      PartType = "other"       // anything else, kept verbatim
)

// DecodeParts reads a message's parts; nil or invalid JSON gives none.
func DecodeParts(raw json.RawMessage) []Part {
	if len(raw) == 0 {
		return nil
	}
	var parts []Part
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	return parts
}

// EncodeParts writes parts for Message.Parts; no parts gives nil.
func EncodeParts(parts []Part) json.RawMessage {
	if len(parts) == 0 {
		return nil
	}
	raw, err := json.Marshal(parts)
	if err != nil {
		return nil
	}
	return raw
}
