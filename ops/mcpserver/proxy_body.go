package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	sjson "github.com/segmentio/encoding/json"

	"weft/formats"
	"weft/formats/export"
	"weft/ops"
)

// A proxied request's body is read once, by github.com/segmentio/encoding/json
// without copying: its top-level fields are slices of the body, so the
// body can go upstream as it came with only its messages (and, for a
// thread that now opens with a summary, its system prompt) put in
// their place, every other byte untouched.

// proxyBody is a request body read for the proxy.
type proxyBody struct {
	api ops.ProxyAPI
	raw []byte
	// fields are the top-level fields' values, slices of raw.
	fields map[string]json.RawMessage
	// messages are the elements of "messages", slices of raw.
	messages []json.RawMessage
}

// parseProxyBody reads a request body: a JSON object whose "messages" is
// a list. It says what is wrong with any other.
func parseProxyBody(api ops.ProxyAPI, raw []byte) (*proxyBody, error) {
	b := &proxyBody{api: api, raw: raw}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("it is empty: send a JSON object with \"messages\"")
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("it is %s, not a JSON object", formats.DescribeJSON(raw))
	}
	rest, err := sjson.Parse(raw, &b.fields, sjson.DontCopyRawMessage)
	if err != nil {
		return nil, fmt.Errorf("it is not valid JSON: %s", formats.ShortError(err))
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("there is more after its JSON object")
	}
	msgs, ok := b.fields["messages"]
	switch {
	case !ok:
		return nil, fmt.Errorf("it has no \"messages\": send the conversation, oldest first")
	case len(msgs) == 0 || msgs[0] != '[':
		return nil, fmt.Errorf("\"messages\" is %s, not a list of messages", formats.DescribeJSON(msgs))
	}
	if _, err := sjson.Parse(msgs, &b.messages, sjson.DontCopyRawMessage); err != nil {
		return nil, fmt.Errorf("\"messages\": %s", formats.ShortError(err))
	}
	if s, ok := b.fields["system"]; ok && api == ops.ProxyAnthropic && !formats.IsNull(s) && s[0] != '"' && s[0] != '[' {
		return nil, fmt.Errorf("\"system\" is %s, not a string or a list of blocks", formats.DescribeJSON(s))
	}
	return b, nil
}

// span is where a field's value lies in the body: the value is a slice
// of it, so its place follows from their capacities (checked: false if
// it is not there after all).
func (b *proxyBody) span(name string) (int, int, bool) {
	v := b.fields[name]
	start := cap(b.raw) - cap(v)
	if len(v) == 0 || start < 0 || start+len(v) > len(b.raw) || &b.raw[start] != &v[0] {
		return 0, 0, false
	}
	return start, start + len(v), true
}

// rewrite is the body with the effective thread of turn in place of its
// messages; for the Messages API, the summaries that open the thread
// are added to its system prompt, and the client's cache_control
// breakpoints go with the blocks they marked, where those are still
// sent.
func (b *proxyBody) rewrite(turn *ops.ProxyTurn) ([]byte, error) {
	type splice struct {
		start, end int
		value      []byte
	}
	var splices []splice
	put := func(name string, value any) error {
		v, err := marshalJSON(value)
		if err != nil {
			return err
		}
		if _, ok := b.fields[name]; ok {
			start, end, ok := b.span(name)
			if !ok {
				return fmt.Errorf("%q is not where it was read", name)
			}
			splices = append(splices, splice{start, end, v})
			return nil
		}
		// A new field goes first: the object has one at least.
		open := bytes.IndexByte(b.raw, '{') + 1
		splices = append(splices, splice{open, open, slices.Concat([]byte(strconv.Quote(name)+":"), v, []byte(","))})
		return nil
	}
	switch b.api {
	case ops.ProxyAnthropic:
		if err := put("messages", b.anthropicMessages(turn.Anthropic.Messages)); err != nil {
			return nil, err
		}
		if turn.Anthropic.System != "" {
			system, err := b.system(turn.Anthropic.System)
			if err != nil {
				return nil, err
			}
			if err := put("system", system); err != nil {
				return nil, err
			}
		}
	default:
		if err := put("messages", turn.OpenAI); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(splices, func(x, y splice) int { return x.start - y.start })
	out := make([]byte, 0, len(b.raw))
	at := 0
	for _, s := range splices {
		out = append(out, b.raw[at:s.start]...)
		out = append(out, s.value...)
		at = s.end
	}
	return append(out, b.raw[at:]...), nil
}

// system is the request's system prompt with the summaries that open
// the thread after it: a string gets them as another paragraph, a list
// of blocks as another text block (after the client's cache breakpoints,
// which keep their prefix).
func (b *proxyBody) system(summaries string) (any, error) {
	s, ok := b.fields["system"]
	if !ok || formats.IsNull(s) {
		return summaries, nil
	}
	if s[0] == '"' {
		var text string
		if err := json.Unmarshal(s, &text); err != nil {
			return nil, fmt.Errorf("\"system\": %v", err)
		}
		if text == "" {
			return summaries, nil
		}
		return text + "\n\n" + summaries, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(s, &blocks); err != nil {
		return nil, fmt.Errorf("\"system\": %v", err)
	}
	text, _ := marshalJSON(export.AnthropicBlock{Type: "text", Text: summaries})
	return append(blocks, text), nil
}

// anMessage is a Messages API message as the proxy sends it: the
// exporter's blocks, some with the client's cache_control.
type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	export.AnthropicBlock
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// marked is a block of the client's that carried a cache_control.
type marked struct {
	typ, key     string
	cacheControl json.RawMessage
}

// anthropicMessages are the exporter's messages with the client's
// cache_control breakpoints on the blocks they marked: each found by its
// type and what it says (a text's text, a call's or result's ID),
// latest first. A breakpoint whose block is no longer sent is dropped.
func (b *proxyBody) anthropicMessages(msgs []export.AnthropicMessage) []anMessage {
	out := make([]anMessage, len(msgs))
	for k, m := range msgs {
		out[k] = anMessage{Role: m.Role, Content: make([]anBlock, len(m.Content))}
		for j, blk := range m.Content {
			out[k].Content[j] = anBlock{AnthropicBlock: blk}
		}
	}
	for _, mk := range b.cacheMarks() {
	find:
		for k := len(out) - 1; k >= 0; k-- {
			for j := len(out[k].Content) - 1; j >= 0; j-- {
				blk := &out[k].Content[j]
				if blk.CacheControl == nil && blk.Type == mk.typ && blockKey(&blk.AnthropicBlock) == mk.key {
					blk.CacheControl = mk.cacheControl
					break find
				}
			}
		}
	}
	return out
}

// blockKey is what tells a block from the others of its type.
func blockKey(blk *export.AnthropicBlock) string {
	switch blk.Type {
	case "text":
		return blk.Text
	case "tool_use":
		return blk.ID
	case "tool_result":
		return blk.ToolUseID
	}
	return ""
}

// cacheMarks are the blocks of the request's messages that carry a
// cache_control, latest first.
func (b *proxyBody) cacheMarks() []marked {
	var marks []marked
	for k := len(b.messages) - 1; k >= 0; k-- {
		m := b.messages[k]
		if !bytes.Contains(m, []byte(`"cache_control"`)) {
			continue
		}
		var msg struct {
			Content []struct {
				Type         string          `json:"type"`
				Text         string          `json:"text"`
				ID           string          `json:"id"`
				ToolUseID    string          `json:"tool_use_id"`
				CacheControl json.RawMessage `json:"cache_control"`
			} `json:"content"`
		}
		if json.Unmarshal(m, &msg) != nil {
			continue
		}
		for j := len(msg.Content) - 1; j >= 0; j-- {
			c := &msg.Content[j]
			if formats.IsNull(c.CacheControl) {
				continue
			}
			key := c.Text
			switch c.Type {
			case "tool_use":
				key = c.ID
			case "tool_result":
				key = c.ToolUseID
			case "text":
			default:
				continue // an image or a document: not told apart here
			}
			marks = append(marks, marked{typ: c.Type, key: key, cacheControl: c.CacheControl})
		}
	}
	return marks
}

// proxyError answers a proxied request weft refuses, in the shape of
// the API's own errors, so the client reads it as it reads the
// provider's.
func proxyError(w http.ResponseWriter, api ops.ProxyAPI, status int, msg string) {
	var body any
	if api == ops.ProxyAnthropic {
		type anError struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		body = struct {
			Type  string  `json:"type"`
			Error anError `json:"error"`
		}{"error", anError{anthropicErrorType(status), msg}}
	} else {
		type oaError struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		}
		typ := "invalid_request_error"
		if status >= 500 {
			typ = "server_error"
		}
		body = struct {
			Error oaError `json:"error"`
		}{oaError{Message: msg, Type: typ}}
	}
	b, _ := marshalJSON(body)
	writeJSONBody(w, status, b)
}

// anthropicErrorType is the Messages API's error type for a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}
