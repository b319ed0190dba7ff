package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// sse reads a Messages API event stream: each event's name and data.
func sse(t *testing.T, body []byte) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("data that is not JSON: %s", d)
			}
			if m["type"] != names[len(names)-1] {
				t.Errorf("event %s carries type %v", names[len(names)-1], m["type"])
			}
			data = append(data, m)
		}
	}
	return names, data
}

func post(t *testing.T, url string, body any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	out.ReadFrom(resp.Body)
	return resp, out.Bytes()
}

// TestStandInLeadsAConversation: the stand-in asks for its calls one at a
// time, each after the result of the one before, in the event stream
// Claude Code reads; then it answers with text, and it records what came
// back.
func TestStandInLeadsAConversation(t *testing.T) {
	var after []int
	s := &standIn{calls: []call{
		{tool: "get_message_range", input: map[string]any{"start_idx": 0, "end_idx": 3}},
		{tool: "ReadMcpResourceTool", input: map[string]any{"server": "weft", "uri": "weft://sessions"}},
	}}
	s.afterResult = func(i int, _ toolResult) { after = append(after, i) }
	srv := httptest.NewServer(s)
	defer srv.Close()
	tools := []map[string]any{{"name": "Read"}, {"name": "ReadMcpResourceTool"}, {"name": "mcp__weft__get_message_range"}}
	user := map[string]any{"role": "user", "content": "go"}

	// First: a tool_use of the weft tool, by the name Claude Code gave it.
	resp, body := post(t, srv.URL+"/v1/messages?beta=true", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{user}})
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	names, data := sse(t, body)
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v, want %v", names, want)
	}
	block := data[1]["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["name"] != "mcp__weft__get_message_range" || block["id"] != "toolu_standin_00" {
		t.Errorf("content block %v, want a tool_use of mcp__weft__get_message_range", block)
	}
	var input map[string]any
	json.Unmarshal([]byte(data[2]["delta"].(map[string]any)["partial_json"].(string)), &input)
	if !reflect.DeepEqual(input, map[string]any{"start_idx": 0.0, "end_idx": 3.0}) {
		t.Errorf("tool input %v", input)
	}
	if stop := data[4]["delta"].(map[string]any)["stop_reason"]; stop != "tool_use" {
		t.Errorf("stop reason %v, want tool_use", stop)
	}

	// With that result: the next call, Claude Code's own tool, unprefixed.
	use := func(id, name string) map[string]any {
		return map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}}}
	}
	result := func(id string, content any) map[string]any {
		return map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}}}
	}
	msgs := []any{user, use("toolu_standin_00", "mcp__weft__get_message_range"), result("toolu_standin_00", []any{map[string]any{"type": "text", "text": `{"messages":[]}`}})}
	_, body = post(t, srv.URL+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": msgs})
	if _, data = sse(t, body); data[1]["content_block"].(map[string]any)["name"] != "ReadMcpResourceTool" {
		t.Errorf("second answer %v, want a tool_use of ReadMcpResourceTool", data[1])
	}

	// With both results, not streamed: the closing text.
	msgs = append(msgs, use("toolu_standin_01", "ReadMcpResourceTool"), result("toolu_standin_01", "plain"))
	_, body = post(t, srv.URL+"/v1/messages", map[string]any{"model": "m", "tools": tools, "messages": msgs})
	var msg struct {
		Content []struct {
			Type, Text string
		}
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != doneText || msg.StopReason != "end_turn" {
		t.Errorf("last answer %s, want %q", body, doneText)
	}

	// A side request without tools (a title) gets text; count_tokens a count.
	if _, body = post(t, srv.URL+"/v1/messages", map[string]any{"model": "m", "messages": []any{user}}); !bytes.Contains(body, []byte(doneText)) {
		t.Errorf("a request without tools: %s", body)
	}
	if resp, body = post(t, srv.URL+"/v1/messages/count_tokens", map[string]any{"messages": []any{user}}); resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"input_tokens"`)) {
		t.Errorf("count_tokens: %d %s", resp.StatusCode, body)
	}
	if resp, _ = post(t, srv.URL+"/v1/complete", nil); resp.StatusCode != 404 {
		t.Errorf("an unknown path: %d, want 404", resp.StatusCode)
	}

	exchanges, results, toolNames, problems := s.snapshot()
	if len(exchanges) != 6 || len(problems) != 0 || len(toolNames) != 3 {
		t.Errorf("%d exchanges, problems %v, tool names %v", len(exchanges), problems, toolNames)
	}
	if len(results) != 2 || results[0].text != `{"messages":[]}` || results[1].text != "plain" || results[1].tool != "ReadMcpResourceTool" {
		t.Errorf("results %+v", results)
	}
	if !reflect.DeepEqual(after, []int{0, 1}) {
		t.Errorf("afterResult ran for %v, want each result once: [0 1]", after)
	}
}

// TestStandInSaysWhatIsMissing: a call of a tool the request does not
// offer is a problem the test reports, not a silent text answer.
func TestStandInSaysWhatIsMissing(t *testing.T) {
	s := &standIn{calls: []call{{tool: "digest_messages", input: map[string]any{}}}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	post(t, srv.URL+"/v1/messages", map[string]any{"model": "m", "tools": []any{map[string]any{"name": "Read"}}, "messages": []any{map[string]any{"role": "user", "content": "go"}}})
	if _, _, _, problems := s.snapshot(); len(problems) != 1 || !strings.Contains(problems[0], "digest_messages") || !strings.Contains(problems[0], "Read") {
		t.Errorf("problems %v, want one naming digest_messages and the tools offered", problems)
	}
}
