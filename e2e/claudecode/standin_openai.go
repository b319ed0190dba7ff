package claudecode

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"weft/e2e/internal/rig"
)

// chatStandIn is a small OpenAI Chat Completions API, the other
// provider shape's stand-in, as standIn is the Messages API's: it
// answers a turn with the calls its plan asks for (each its own ID), one
// at a time while the tools are offered, then with text, streaming or
// not as the request asks, and keeps every exchange with what it wrote.
type chatStandIn struct {
	// say is the text of a text answer to the user's last prompt.
	say func(prompt string) string
	// plan gives the calls a turn makes for the user's last prompt.
	plan func(prompt string) []call

	answered atomic.Int64 // answers given, for their IDs
	called   atomic.Int64 // calls asked for, for their IDs

	// Recorder keeps the exchanges, and writes them to its Log.
	rig.Recorder
}

// chatRequest is a chat completions request as far as the stand-in
// reads it.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// lastPrompt is the index of the user's last message and its text.
func (req chatRequest) lastPrompt() (int, string) {
	for i, m := range slices.Backward(req.Messages) {
		if m.Role == "user" {
			return i, chatText(m.Content)
		}
	}
	return 0, ""
}

func (s *chatStandIn) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ex := rig.NewExchange(r, body)
	ex.Headers.Del("Authorization")
	w := &answerCopy{ResponseWriter: rw}
	defer func() { ex.Answer = w.body.String(); s.Record(ex) }()
	var req chatRequest
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		ex.Status, ex.Answered = http.StatusNotFound, "404"
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "the stand-in serves POST /v1/chat/completions only", "type": "invalid_request_error"}})
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		ex.Status, ex.Answered = http.StatusBadRequest, "invalid request"
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": err.Error(), "type": "invalid_request_error"}})
		return
	}
	c := s.answer(req)
	c.id = fmt.Sprintf("chatcmpl-standin-%03d", s.answered.Add(1))
	ex.Status, ex.Answered = http.StatusOK, c.summary()
	if req.Stream {
		c.stream(w, req.Model)
	} else {
		writeJSON(w, http.StatusOK, c.completion(req.Model))
	}
}

// chatReply is one assistant turn: text, or a call.
type chatReply struct {
	id, text           string
	callID, tool, args string
}

func (c chatReply) summary() string {
	if c.tool != "" {
		return "tool_call " + c.tool
	}
	return "text"
}

// answer decides the next turn: the plan's next call while its tools
// are offered and the turn has fewer results than calls, else text.
func (s *chatStandIn) answer(req chatRequest) chatReply {
	from, prompt := req.lastPrompt()
	var calls []call
	if s.plan != nil && len(req.Tools) > 0 {
		calls = s.plan(prompt)
	}
	results := 0
	for _, m := range req.Messages[from:] {
		if m.Role == "tool" {
			results++
		}
	}
	if results >= len(calls) {
		text := doneText
		if s.say != nil {
			text = s.say(prompt)
		}
		return chatReply{text: text}
	}
	args, _ := json.Marshal(calls[results].input)
	return chatReply{tool: calls[results].tool, args: string(args), callID: fmt.Sprintf("call_standin_%03d", s.called.Add(1))}
}

func (c chatReply) finish() string {
	if c.tool != "" {
		return "tool_calls"
	}
	return "stop"
}

// completion is the reply as a whole chat completion.
func (c chatReply) completion(model string) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if c.tool != "" {
		msg["tool_calls"] = []any{map[string]any{"id": c.callID, "type": "function", "function": map[string]any{"name": c.tool, "arguments": c.args}}}
	} else {
		msg["content"] = c.text
	}
	return map[string]any{
		"id": c.id, "object": "chat.completion", "created": 1767225600, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": c.finish()}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
	}
}

// stream writes the reply as chat completion chunks: the role, the
// text or the call's arguments in pieces, the finish reason, [DONE].
func (c chatReply) stream(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{
			"id": c.id, "object": "chat.completion.chunk", "created": 1767225600, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		})
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if c.tool != "" {
		chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0, "id": c.callID, "type": "function",
			"function": map[string]any{"name": c.tool, "arguments": ""}}}}, nil)
		for _, piece := range pieces(c.args, 16) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": piece}}}}, nil)
		}
	} else {
		chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		for _, piece := range pieces(c.text, 24) {
			chunk(map[string]any{"content": piece}, nil)
		}
	}
	chunk(map[string]any{}, c.finish())
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// chatText is the text of a chat message's content: a string, or the
// text of its parts.
func chatText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type, Text string
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}
