package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// chunks reads a chat completions event stream: each chunk's first
// choice, and whether it ended with [DONE].
func chunks(t *testing.T, body []byte) (choices []map[string]any, done bool) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if d == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Object  string           `json:"object"`
			Choices []map[string]any `json:"choices"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" || len(c.Choices) != 1 {
			t.Fatalf("not a chunk: %s", d)
		}
		choices = append(choices, c.Choices[0])
	}
	return choices, done
}

// TestChatStandInLeadsATurn: the Chat Completions stand-in asks for its
// plan's call while the tools are offered, streamed in pieces or whole,
// then answers the prompt with text; each answer has its own ID, and
// what it wrote is kept byte for byte.
func TestChatStandInLeadsATurn(t *testing.T) {
	s := &chatStandIn{
		say:  func(p string) string { return "answer to " + p },
		plan: func(p string) []call { return []call{{tool: "lookup", input: map[string]any{"q": p}}} },
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup"}}}
	user := map[string]any{"role": "user", "content": "limits?"}

	_, body := post(t, srv.URL+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{user}})
	choices, done := chunks(t, body)
	if !done || len(choices) < 3 {
		t.Fatalf("%d chunks, [DONE] %v: %s", len(choices), done, body)
	}
	var args, id string
	for _, c := range choices {
		calls, _ := c["delta"].(map[string]any)["tool_calls"].([]any)
		for _, tc := range calls {
			call := tc.(map[string]any)
			if v, ok := call["id"].(string); ok {
				id = v
			}
			args += call["function"].(map[string]any)["arguments"].(string)
		}
	}
	if id != "call_standin_001" || args != `{"q":"limits?"}` || choices[len(choices)-1]["finish_reason"] != "tool_calls" {
		t.Errorf("call %s(%s), finish %v", id, args, choices[len(choices)-1]["finish_reason"])
	}

	// With the result, not streamed: the text, as one completion.
	result := map[string]any{"role": "tool", "tool_call_id": id, "content": "1,200/s"}
	call := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "lookup", "arguments": args}}}}
	_, body = post(t, srv.URL+"/v1/chat/completions", map[string]any{"model": "m", "tools": tools, "messages": []any{user, call, result}})
	var c struct {
		ID      string `json:"id"`
		Choices []struct {
			Message      struct{ Content string } `json:"message"`
			FinishReason string                   `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil || c.ID != "chatcmpl-standin-002" || len(c.Choices) != 1 || c.Choices[0].Message.Content != "answer to limits?" || c.Choices[0].FinishReason != "stop" {
		t.Errorf("the answer %s", body)
	}
	ex := s.Exchanges()
	if len(ex) != 2 || ex[1].Answer != string(body) || ex[0].Answered != "tool_call lookup" || ex[1].Answered != "text" {
		t.Errorf("exchanges %+v", ex)
	}
	if resp, _ := post(t, srv.URL+"/v1/embeddings", nil); resp.StatusCode != 404 {
		t.Errorf("an unknown path: %d", resp.StatusCode)
	}
}
