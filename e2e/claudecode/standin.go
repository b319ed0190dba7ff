// Package claudecode drives real clients against weft. Claude Code,
// Anthropic's coding agent, as a client of weft's MCP server: it runs
// headless (`claude -p`) against a stand-in for the Anthropic Messages
// API that asks for a weft tool, then reads what Claude Code sends back
// (.ci/claude-code). And weft in the loop (.ci/loop): Claude Code and the
// official provider SDKs with their model API pointed at weft's context
// proxy, whose upstream is the stand-in of their provider's shape. The
// tests run when WEFT_CLAUDE names the claude binary, or WEFT_SDKS the
// SDKs; the Messages API's stand-in is this file, Chat Completions'
// standin_openai.go.
package claudecode

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"weft/e2e/internal/rig"
)

// toolUsePrefix marks the tool_use IDs the stand-in makes, so it knows its
// own calls' results among what Claude Code sends back.
const toolUsePrefix = "toolu_standin_"

// doneText is the stand-in's last answer of a conversation: Claude Code
// prints it as its result, which tells the test the loop ran to its end.
const doneText = "stand-in: done"

// call is one tool call the stand-in asks Claude Code for. tool is the
// name weft gives the tool (get_message_range) or one of Claude Code's own
// (ReadMcpResourceTool); the stand-in asks for whichever tool of the
// request is named so or ends in "__"+tool, as Claude Code prefixes MCP
// tools with mcp__<server>__.
type call struct {
	tool  string
	input any
}

// toolResult is what Claude Code sent back for one of the stand-in's calls.
type toolResult struct {
	id      string // the stand-in's tool_use ID
	tool    string // the full name the stand-in asked for
	text    string // the text of the result's content blocks, joined
	isError bool
}

// exchange is one request a stand-in got and what it answered.
type exchange = rig.Exchange

// standIn is a small Anthropic Messages API: it answers a conversation by
// asking for its calls one at a time, each once the result of the one
// before has come back, and then with doneText. It is stateless about
// conversations: the messages of each request say how far it got, as
// Claude Code sends the whole conversation every time.
type standIn struct {
	calls []call
	// afterResult, when set, runs when a request brings the result of
	// call i for the first time, before the stand-in answers it: the
	// test acts there while Claude Code waits (an edit by another client).
	afterResult func(i int, r toolResult)
	// say, when set, is the text of a text answer (doneText otherwise):
	// a conversation whose turns must be told apart answers each its
	// own way.
	say func(req messagesRequest) string
	// plan, when set, gives the calls for the conversation a request
	// carries in place of calls: a conversation that asks for a tool in
	// one turn only.
	plan func(req messagesRequest) []call
	// thinks makes every answer open with a thinking block, as a model
	// asked to think (Claude Code asks for adaptive thinking) answers.
	thinks bool

	answered atomic.Int64 // answers given, for their IDs
	planned  atomic.Int64 // calls a plan asked for, for their IDs

	// Recorder keeps the exchanges, and writes them to its Log.
	rig.Recorder

	mu        sync.Mutex
	results   []toolResult
	toolNames []string // the tools of the first request that had any
	problems  []string // requests the stand-in could not answer as planned
}

// Messages API request and content shapes, as far as the stand-in reads
// them. Content is a string or a list of blocks.
type (
	messagesRequest struct {
		Model    string    `json:"model"`
		Messages []message `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   json.RawMessage `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
)

// blocks reads a content field: a plain string is one text block.
func blocks(raw json.RawMessage) []block {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	if json.Unmarshal(raw, &bs) != nil {
		return nil
	}
	return bs
}

// lastPrompt finds the user's last prompt in a request: the index of
// the last user message with text of its own (not a block an agent adds,
// such as <system-reminder>), and that text.
func lastPrompt(req messagesRequest) (int, string) {
	for i, m := range slices.Backward(req.Messages) {
		if m.Role != "user" {
			continue
		}
		for _, b := range slices.Backward(blocks(m.Content)) {
			if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<") {
				return i, b.Text
			}
		}
	}
	return 0, ""
}

// blockText joins the text of a tool result's content.
func blockText(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (s *standIn) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ex := rig.NewExchange(r, body)
	ex.Headers.Del("X-Api-Key")
	ex.Headers.Del("Authorization")
	w := &answerCopy{ResponseWriter: rw}
	defer func() { ex.Answer = w.body.String(); s.Record(ex) }()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		// A rough count is enough: Claude Code uses it to decide about
		// compaction, which these short runs never need.
		ex.Status, ex.Answered = http.StatusOK, "count_tokens"
		writeJSON(w, http.StatusOK, map[string]int{"input_tokens": len(body) / 4})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		var req messagesRequest
		if err := json.Unmarshal(body, &req); err != nil {
			ex.Status, ex.Answered = http.StatusBadRequest, "invalid request"
			writeError(w, http.StatusBadRequest, "invalid_request_error", "the stand-in could not read the request: "+err.Error())
			break
		}
		reply := s.answer(req)
		// Every answer has its own ID, as the API's have: Claude Code
		// puts the blocks of one ID together into one message when it
		// reads its transcript back.
		reply.msgID = fmt.Sprintf("msg_standin_%03d", s.answered.Add(1))
		if s.thinks {
			reply.thinking = "The stand-in thinks about " + reply.summary() + "."
		}
		ex.Status, ex.Answered = http.StatusOK, reply.summary()
		if req.Stream {
			reply.stream(w, req.Model)
		} else {
			writeJSON(w, http.StatusOK, reply.message(req.Model))
		}
	default:
		ex.Status, ex.Answered = http.StatusNotFound, "404"
		writeError(w, http.StatusNotFound, "not_found_error", "the stand-in serves POST /v1/messages and /v1/messages/count_tokens only")
	}
}

// answerCopy keeps a copy of what the stand-in writes, and flushes each
// write, so a stream goes out an event at a time as a provider's does.
type answerCopy struct {
	http.ResponseWriter
	body strings.Builder
}

func (a *answerCopy) Write(p []byte) (int, error) {
	a.body.Write(p)
	n, err := a.ResponseWriter.Write(p)
	_ = http.NewResponseController(a.ResponseWriter).Flush()
	return n, err
}

// reply is one assistant turn: text, or a tool call.
type reply struct {
	text  string
	tool  string // set for a tool call
	id    string
	input json.RawMessage
	msgID string
	// thinking, when set, comes first, in a thinking block with a
	// signature, as a model thinking before it answers gives it.
	thinking string
}

// signature is the thinking block's signature: opaque, the reply's own.
func (r reply) signature() string { return "sig-standin-" + r.msgID }

func (r reply) summary() string {
	if r.tool != "" {
		return "tool_use " + r.tool
	}
	return "text"
}

// answer decides the next turn of the conversation req carries.
func (s *standIn) answer(req messagesRequest) reply {
	// The results of the stand-in's calls so far, in the order asked:
	// of the whole conversation, or, with a plan, of the turn since the
	// user's last prompt.
	var got []toolResult
	issued := map[string]string{} // tool_use ID -> tool name
	from := 0
	if s.plan != nil {
		from, _ = lastPrompt(req)
	}
	for k, m := range req.Messages {
		for _, b := range blocks(m.Content) {
			switch {
			case b.Type == "tool_use" && strings.HasPrefix(b.ID, toolUsePrefix):
				issued[b.ID] = b.Name
			case b.Type == "tool_result" && strings.HasPrefix(b.ToolUseID, toolUsePrefix) && k >= from:
				got = append(got, toolResult{id: b.ToolUseID, tool: issued[b.ToolUseID], text: blockText(b.Content), isError: b.IsError})
			}
		}
	}
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}

	s.mu.Lock()
	if s.toolNames == nil && len(names) > 0 {
		s.toolNames = names
	}
	var fresh []int
	for i, r := range got {
		if !slices.ContainsFunc(s.results, func(k toolResult) bool { return k.id == r.id }) {
			s.results = append(s.results, r)
			fresh = append(fresh, i)
		}
	}
	s.mu.Unlock()
	if s.afterResult != nil {
		for _, i := range fresh {
			s.afterResult(i, got[i])
		}
	}

	calls := s.calls
	if s.plan != nil {
		calls = s.plan(req)
	}
	n := len(got)
	if n >= len(calls) || len(names) == 0 {
		// Done, or a request that is not the conversation (a title, a
		// summary): plain text keeps Claude Code going.
		if s.say != nil {
			return reply{text: s.say(req)}
		}
		return reply{text: doneText}
	}
	c := calls[n]
	name := ""
	for _, t := range names {
		if t == c.tool || strings.HasSuffix(t, "__"+c.tool) {
			name = t
			break
		}
	}
	if name == "" {
		s.problem(fmt.Sprintf("call %d: no tool named %s or ending in __%s among the request's %d tools: %s", n, c.tool, c.tool, len(names), strings.Join(names, " ")))
		return reply{text: "stand-in: the tool " + c.tool + " is not offered"}
	}
	input, err := json.Marshal(c.input)
	if err != nil {
		s.problem(fmt.Sprintf("call %d: its input does not encode: %v", n, err))
		return reply{text: "stand-in: bad input"}
	}
	id := fmt.Sprintf("%s%02d", toolUsePrefix, n)
	if s.plan != nil {
		// Calls of several turns: each its own ID, as the API's are.
		id = fmt.Sprintf("%sp%03d", toolUsePrefix, s.planned.Add(1))
	}
	return reply{tool: name, id: id, input: input}
}

func (s *standIn) problem(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, p)
}

// snapshot returns what the stand-in has seen so far.
func (s *standIn) snapshot() (exchanges []exchange, results []toolResult, toolNames, problems []string) {
	exchanges = s.Exchanges()
	s.mu.Lock()
	defer s.mu.Unlock()
	return exchanges, slices.Clone(s.results), slices.Clone(s.toolNames), slices.Clone(s.problems)
}

func (r reply) usage(out int) map[string]int {
	return map[string]int{"input_tokens": 100, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func (r reply) stopReason() string {
	if r.tool != "" {
		return "tool_use"
	}
	return "end_turn"
}

// message is the reply as a whole Messages API response.
func (r reply) message(model string) map[string]any {
	var content []map[string]any
	if r.thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.thinking, "signature": r.signature()})
	}
	if r.tool != "" {
		content = append(content, map[string]any{"type": "tool_use", "id": r.id, "name": r.tool, "input": r.input})
	} else {
		content = append(content, map[string]any{"type": "text", "text": r.text})
	}
	return map[string]any{
		"id": r.msgID, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": r.stopReason(), "stop_sequence": nil, "usage": r.usage(10),
	}
}

// stream writes the reply as the Messages API's server-sent events:
// message_start, one content block (start, delta, stop), message_delta
// with the stop reason, message_stop.
func (r reply) stream(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	start := r.message(model)
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["usage"] = r.usage(1)
	event("message_start", map[string]any{"type": "message_start", "message": start})
	index := 0
	if r.thinking != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		for _, piece := range pieces(r.thinking, 64) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "thinking_delta", "thinking": piece}})
		}
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "signature_delta", "signature": r.signature()}})
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if r.tool != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": r.id, "name": r.tool, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(r.input)}})
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		// A long text comes in pieces, as a model's does.
		for _, piece := range pieces(r.text, 64) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": piece}})
		}
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// pieces cuts s into pieces of at most n bytes, on rune boundaries; an
// empty s is one empty piece.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the Messages API's error shape.
func writeError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": msg}})
}
