package benchdata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The large messages the proxy's benchmarks send: one request bringing
// a text of megabytes, as a client sends one.

// sourceLine is a line of code with what a JSON encoder escapes (quotes,
// a tab, newlines) and what a JavaScript client does not (<, & and an
// accent).
const sourceLine = "func (b *Bucket) refill(now time.Time) {\n\tb.tokens += \"rate\" * now.Sub(b.last) // <a & b> café\n}\n"

// LargeText is size bytes of source code, opening with n (so that each
// request is a conversation of its own), as a JSON string written as a
// JavaScript client writes one (no HTML escaping).
func LargeText(n, size int) []byte {
	text := (strconv.Itoa(n) + " " + strings.Repeat(sourceLine, size/len(sourceLine)+1))[:size]
	var q bytes.Buffer
	e := json.NewEncoder(&q)
	e.SetEscapeHTML(false)
	_ = e.Encode(text)
	return bytes.TrimSuffix(q.Bytes(), []byte("\n"))
}

// The shapes of LargeRequest.
const (
	Messages          = "messages"            // a Messages API user message of the text
	MessagesPasted    = "messages-pasted"     // a Messages API user message of a reminder block and a block of the text, as Claude Code sends a paste
	MessagesToolOut   = "messages-tool-out"   // a Messages API tool_result block of the text, after its call
	MessagesToolList  = "messages-tool-list"  // the same, its content a list of one text block (an MCP tool's output)
	Chat              = "chat"                // a Chat Completions user message of the text
	Responses         = "responses"           // a Responses API message of one input_text block
	ChatToolOut       = "chat-tool-out"       // a Chat Completions tool message of the text, after its call
	ChatToolList      = "chat-tool-list"      // the same, its content a list of one text block
	ResponsesToolOut  = "responses-tool-out"  // a Responses API function_call_output of the text, after its call
	ResponsesToolList = "responses-tool-list" // the same, its output a list of one input_text block
)

// LargeRequest is a request of shape bringing LargeText(n, size).
func LargeRequest(shape string, n, size int) []byte {
	text := LargeText(n, size)
	switch shape {
	case Chat:
		return fmt.Appendf(nil, `{"model":"m","messages":[{"role":"user","content":%s}]}`, text)
	case Responses:
		return fmt.Appendf(nil, `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":%s}]}]}`, text)
	case MessagesToolOut:
		return fmt.Appendf(nil, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"Read it, %d."},`+
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"bucket.go"}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":%s}]}]}`, n, text)
	case MessagesPasted:
		return fmt.Appendf(nil, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>Read %d.</system-reminder>"},`+
			`{"type":"text","text":%s,"cache_control":{"type":"ephemeral"}}]}]}`, n, text)
	case MessagesToolList:
		return fmt.Appendf(nil, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"Read it, %d."},`+
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__files__read","input":{"file_path":"bucket.go"}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":%s}]}]}]}`, n, text)
	case ChatToolOut, ChatToolList:
		if shape == ChatToolList {
			text = fmt.Appendf(nil, `[{"type":"text","text":%s}]`, text)
		}
		return fmt.Appendf(nil, `{"model":"m","messages":[{"role":"user","content":"Read it, %d."},`+
			`{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"read","arguments":"{\"file_path\":\"bucket.go\"}"}}]},`+
			`{"role":"tool","tool_call_id":"t1","content":%s}]}`, n, text)
	case ResponsesToolOut, ResponsesToolList:
		if shape == ResponsesToolList {
			text = fmt.Appendf(nil, `[{"type":"input_text","text":%s}]`, text)
		}
		return fmt.Appendf(nil, `{"model":"m","input":[{"type":"message","role":"user","content":"Read it, %d."},`+
			`{"type":"function_call","call_id":"t1","name":"read","arguments":"{\"file_path\":\"bucket.go\"}"},`+
			`{"type":"function_call_output","call_id":"t1","output":%s}]}`, n, text)
	}
	return fmt.Appendf(nil, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":%s}]}`, text)
}
