package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"weft/ops"
	"weft/ops/tools"
)

const (
	anSystem = `[{"type":"text","text":"You are a coding agent.","cache_control":{"type":"ephemeral"}}]`
	anTools  = `[{"name":"Grep","description":"search","input_schema":{"type":"object","properties":{"q":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}]`
)

// anBody is a Messages API body around messages, as Claude Code sends
// one: a system prompt and tools with cache breakpoints, fields weft
// does not know.
func anBody(stream bool, messages ...string) string {
	return fmt.Sprintf(`{"model":"claude-test","max_tokens":1024,"system":%s,"tools":%s,"messages":[%s],"stream":%v,"metadata":{"user_id":"u1"},"x_future_field":{"keep":[1,2,3]}}`,
		anSystem, anTools, strings.Join(messages, ","), stream)
}

// anHeaders are a client's credentials and the API's headers.
var anHeaders = map[string]string{
	"X-Api-Key":         "sk-ant-api03-SECRET-KEY-never-stored",
	"Anthropic-Version": "2023-06-01",
	"Anthropic-Beta":    "prompt-caching-2024-07-31",
	"User-Agent":        "claude-cli/test",
}

// rawField is a top-level field of a JSON body, byte for byte as it is
// there.
func rawField(t *testing.T, body []byte, name string) string {
	t.Helper()
	b, err := parseProxyBody(Anthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	sp, ok := b.spans[name]
	if !ok {
		t.Fatalf("no %q in %s", name, body)
	}
	return string(body[sp[0]:sp[1]])
}

// field is a top-level field of a JSON body, compacted.
func field(t *testing.T, body []byte, name string) string {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("not a JSON object: %s", body)
	}
	return string(compactJSON(t, fields[name]))
}

func compactJSON(t *testing.T, raw []byte) []byte {
	t.Helper()
	var v any
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}

func TestProxyAnthropicConversation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			rig := newProxyRig(t, rigOptions{})
			u1 := `{"role":"user","content":[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"Find the TODOs","cache_control":{"type":"ephemeral"}}]}`

			// Turn 1: nothing to change, so the body goes byte for byte,
			// and the answer comes back byte for byte.
			rig.up.setAnswer(answerWith("Looking.", []toolCall{{"toolu_1", "Grep", `{"q":"TODO"}`}}))
			body := anBody(stream, u1)
			resp, got := rig.post("/v1/messages?beta=true", body, anHeaders)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			up := rig.up.last()
			if string(up.Body) != body || up.Path != "/v1/messages" || up.Query != "beta=true" {
				t.Fatalf("upstream got %s %s?%s\n%s", up.Method, up.Path, up.Query, up.Body)
			}
			for k, v := range anHeaders {
				if up.Header.Get(k) != v {
					t.Errorf("upstream header %s = %q, want %q", k, up.Header.Get(k), v)
				}
			}
			if want := standInAnswer(answerWith("Looking.", []toolCall{{"toolu_1", "Grep", `{"q":"TODO"}`}}), "/v1/messages", body); string(got) != want {
				t.Errorf("the client got\n%s\nwant what the stand-in sent\n%s", got, want)
			}
			sid := resp.Header.Get(SessionHeader)
			if sid == "" || resp.Header.Get("Request-Id") != "req_standin" {
				t.Fatalf("answer headers %v", resp.Header)
			}
			rig.messages(sid, 2) // the question and the answer

			// The client sends the answer back as it got it, and the
			// tool's result.
			answer := `{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"TODO"}}]}`
			result := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go:3: TODO","cache_control":{"type":"ephemeral"}}]}`
			rig.up.setAnswer(answerText("One TODO, in a.go."))
			body = anBody(stream, strings.ReplaceAll(u1, `,"cache_control":{"type":"ephemeral"}`, ""), answer, result)
			resp, got = rig.post("/v1/messages", body, anHeaders)
			if resp.StatusCode != http.StatusOK || resp.Header.Get(SessionHeader) != sid || string(rig.up.last().Body) != body {
				t.Fatalf("turn 2: %d %s, session %s", resp.StatusCode, got, resp.Header.Get(SessionHeader))
			}
			rig.messages(sid, 4)
			if rig.sessions() != 1 {
				t.Errorf("%d sessions, want the one", rig.sessions())
			}

			// The operator digests the first turn; the next request
			// carries the summary in its place.
			digest(t, rig.svc, sid, 0, 2, "Looked for TODOs: one, in a.go.")
			next := `{"role":"user","content":[{"type":"text","text":"Fix it.","cache_control":{"type":"ephemeral"}}]}`
			body = anBody(stream, u1, answer, strings.ReplaceAll(result, `,"cache_control":{"type":"ephemeral"}`, ""), `{"role":"assistant","content":[{"type":"text","text":"One TODO, in a.go."}]}`, next)
			resp, got = rig.post("/v1/messages", body, anHeaders)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("turn 3: %d %s", resp.StatusCode, got)
			}
			sent := rig.up.last().Body
			for _, name := range []string{"tools", "model", "max_tokens", "metadata", "x_future_field", "stream"} {
				if field(t, sent, name) != field(t, []byte(body), name) {
					t.Errorf("%s changed on the way: %s", name, field(t, sent, name))
				}
			}
			// The client's system prompt goes as it came: the summary
			// is a system turn of its own where the digest's range was,
			// changing nothing the digest did not cover. The breakpoint
			// of the last message stays on its block.
			if field(t, sent, "system") != field(t, []byte(body), "system") {
				t.Errorf("system %s\nwant the client's %s", field(t, sent, "system"), field(t, []byte(body), "system"))
			}
			wantMessages := `[{"content":[{"text":"Looked for TODOs: one, in a.go.","type":"text"}],"role":"system"},{"content":[{"text":"One TODO, in a.go.","type":"text"}],"role":"assistant"},{"content":[{"cache_control":{"type":"ephemeral"},"text":"Fix it.","type":"text"}],"role":"user"}]`
			if msgs := field(t, sent, "messages"); msgs != wantMessages {
				t.Errorf("messages %s\nwant %s", msgs, wantMessages)
			}
			rig.messages(sid, 6)
			if st := rig.svc.ProxyStatsOf(sid); st == nil || st.Requests != 3 || st.SentTokens >= st.RawTokens {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// standInAnswer is what answer writes for a request to path.
func standInAnswer(answer func(w http.ResponseWriter, r *http.Request, body []byte), path, body string) string {
	rec := httptest.NewRecorder()
	answer(rec, httptest.NewRequestWithContext(context.Background(), http.MethodPost, path, strings.NewReader(body)), []byte(body))
	return rec.Body.String()
}

// digest makes a digest through the tool registry, as an operator's
// edit would be.
func digest(t testing.TB, svc *ops.Service, sid string, start, end int, summary string) {
	t.Helper()
	tool, _ := tools.Lookup("digest_messages")
	args := fmt.Sprintf(`{"session_id":%q,"start_idx":%d,"end_idx":%d,"summary":%q}`, sid, start, end, summary)
	if _, err := tool.Call(context.Background(), svc, json.RawMessage(args)); err != nil {
		t.Fatal(err)
	}
}

func TestProxyOpenAIConversation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			rig := newProxyRig(t, rigOptions{})
			headers := map[string]string{"Authorization": "Bearer sk-proj-SECRET-openai-key", "OpenAI-Organization": "org-1"}
			oaBody := func(msgs ...string) string {
				return fmt.Sprintf(`{"model":"gpt-test","stream":%v,"temperature":0.2,"tools":[{"type":"function","function":{"name":"grep","parameters":{"type":"object"}}}],"messages":[%s]}`, stream, strings.Join(msgs, ","))
			}
			sys, u1 := `{"role":"system","content":"Be brief."}`, `{"role":"user","content":"Find the TODOs"}`
			call := answerWith("", []toolCall{{"call_1", "grep", `{"q":"TODO"}`}})
			rig.up.setAnswer(call)
			body := oaBody(sys, u1)
			resp, got := rig.post("/v1/chat/completions", body, headers)
			if resp.StatusCode != http.StatusOK || string(got) != standInAnswer(call, "/v1/chat/completions", body) {
				t.Fatalf("turn 1: %d %s", resp.StatusCode, got)
			}
			up := rig.up.last()
			if up.Path != "/v1/chat/completions" || string(up.Body) != body || up.Header.Get("Authorization") != headers["Authorization"] || up.Header.Get("Openai-Organization") != "org-1" {
				t.Fatalf("upstream got %s %s %v", up.Path, up.Body, up.Header)
			}
			sid := resp.Header.Get(SessionHeader)
			rig.messages(sid, 3)

			// The answer as the client has it, with its call's result.
			answer := `{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"grep","arguments":"{\"q\":\"TODO\"}"}}]}`
			result := `{"role":"tool","tool_call_id":"call_1","content":"a.go:3: TODO"}`
			rig.up.setAnswer(answerText("One, in a.go."))
			resp, _ = rig.post("/v1/chat/completions", oaBody(sys, u1, answer, result), headers)
			if resp.StatusCode != http.StatusOK || resp.Header.Get(SessionHeader) != sid {
				t.Fatalf("turn 2: %d, session %q (want %s)", resp.StatusCode, resp.Header.Get(SessionHeader), sid)
			}
			rig.messages(sid, 5)

			// A snip of the call: its result goes as text, so the thread
			// stays valid; the rest of the body goes as it came.
			snip(t, rig.svc, sid, "m3")
			body = oaBody(sys, u1, answer, result, `{"role":"assistant","content":"One, in a.go."}`, `{"role":"user","content":"Fix it."}`)
			resp, _ = rig.post("/v1/chat/completions", body, headers)
			if resp.StatusCode != http.StatusOK {
				t.Fatal(resp.StatusCode)
			}
			sent := rig.up.last().Body
			for _, name := range []string{"model", "stream", "temperature", "tools"} {
				if field(t, sent, name) != field(t, []byte(body), name) {
					t.Errorf("%s changed on the way: %s", name, field(t, sent, name))
				}
			}
			msgs := field(t, sent, "messages")
			if strings.Contains(msgs, `"role":"tool"`) || strings.Contains(msgs, "tool_calls") || !strings.Contains(msgs, "a.go:3: TODO") || !strings.Contains(msgs, "Fix it.") {
				t.Errorf("messages after the snip: %s", msgs)
			}
			rig.messages(sid, 7)
		})
	}
}

// snip snips stored messages by ID through the tool registry.
func snip(t *testing.T, svc *ops.Service, sid string, ids ...string) {
	t.Helper()
	tool, _ := tools.Lookup("snip_messages")
	raw, _ := json.Marshal(ids)
	if _, err := tool.Call(context.Background(), svc, json.RawMessage(fmt.Sprintf(`{"session_id":%q,"ids":%s}`, sid, raw))); err != nil {
		t.Fatal(err)
	}
}
