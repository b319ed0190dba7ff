package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"weft/formats/export"
	"weft/ops"
	"weft/store/boltstore"
)

// FuzzProxyBody feeds the proxy's request parsing (of each API's
// bodies: Messages, Chat Completions, Responses) any bytes: a body is
// refused with a reason, or read; a body read and rewritten is valid
// JSON with every field but the thread's as it came; its messages are
// read by the service or refused as invalid, never worse; and an answer
// of any bytes is read without harm.
func FuzzProxyBody(f *testing.F) {
	for _, seed := range []string{
		anBody(true, `{"role":"user","content":"hi"}`, `{"role":"assistant","content":[{"type":"text","text":"yo"},{"type":"tool_use","id":"t1","name":"Grep","input":{"q":1}}]}`),
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`,
		`{"system":"s","messages":[]}`,
		`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"}]}]}],"messages":[]}`,
		`{"messages":[{"role":"user","content":"x","output_config":{"effort":"low"}},{"role":"user","x_turn":1,"content":[{"type":"text","text":"x"}]}]}`,
		`{"messages":[{"role":"developer","content":[{"type":"text","text":"s"}],"x":1},{"role":"user","content":"x","x_vendor":{"a":[1,"\u00e9"]}},{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r","x_exit":{"code":0}},{"role":"assistant","content":null,"refusal":"no","audio":{"id":"a"}}]}`,
		`{"messages":7}`, `[]`, `{`, ``, `{"messages":[{"role":"user","content":"\ud800"}]}`,
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":2,\"id\":\"c\"}]},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		rsBody(true, rsDev, rsEnv, rsU1, rsRs, rsFc, rsFco, rsAsst, rsU2),
		`{"model":"m","input":"hi","instructions":"x"}`,
		`{"previous_response_id":"resp_1","input":[{"role":"user","content":"hi"}]}`,
		`{"input":[{"type":"item_reference","id":"x"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"a"}]}]}`,
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"hi\"}]}}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"object\":\"response\",\"status\":\"completed\",\"output\":[]}}\n\n",
		`{"object":"response","status":"completed","model":"m","output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
	} {
		f.Add([]byte(seed))
	}
	st, err := boltstore.Open(filepath.Join(f.TempDir(), "fuzz.db"), boltstore.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	svc := ops.New(st)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, api := range []API{Anthropic, OpenAI, Responses} {
			for _, streaming := range []bool{true, false} {
				rec := &answerRecorder{api: api, engine: EngineOf(svc), ctx: context.Background(), turn: &Turn{SessionID: "none"}, streaming: streaming}
				rec.feed(data)
				rec.store()
			}
			b, err := parseProxyBody(api, bytes.Clone(data))
			if err != nil {
				if err.Error() == "" {
					t.Fatal("a refusal without a reason")
				}
				continue
			}
			_, err = EngineOf(svc).Take(context.Background(), Request{API: api, Messages: b.messages, Probe: true})
			if err != nil && !errors.Is(err, ops.ErrInvalid) {
				t.Fatalf("%s messages %s: %v", api, data, err)
			}
			turn := Turn{
				Anthropic: &export.AnthropicBody{System: "summary", Messages: []export.AnthropicMessage{{Role: "user", Content: []export.AnthropicBlock{{Type: "text", Text: "x"}}}}},
				OpenAI:    []export.OpenAIMessage{{Role: "user", Content: "x"}},
				Responses: []ResponsesItem{{Request: -1, Message: &ResponsesMessage{Type: "message", Role: "developer", Content: []ResponsesContent{{Type: "input_text", Text: "summary"}}}}},
			}
			if len(b.messages) > 0 {
				turn.Responses = append(turn.Responses, ResponsesItem{Request: len(b.messages) - 1})
			}
			out, err := b.rewrite(nil, &turn)
			if err != nil {
				continue // a system prompt encoding/json cannot read: refused
			}
			var before, after map[string]json.RawMessage
			if json.Unmarshal(data, &before) != nil {
				continue // JSON only the fast reader takes: nothing to compare with
			}
			if err := json.Unmarshal(out, &after); err != nil {
				t.Fatalf("%s: the rewritten body is not JSON: %v\n%s", api, err, out)
			}
			for k, v := range before {
				if k == "messages" || k == "system" && api == Anthropic || k == "input" && api == Responses {
					continue
				}
				if !bytes.Equal(bytes.TrimSpace(after[k]), bytes.TrimSpace(v)) {
					t.Fatalf("%s: field %s changed: %s -> %s", api, k, v, after[k])
				}
			}
		}
	})
}
