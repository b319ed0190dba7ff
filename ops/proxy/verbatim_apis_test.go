package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The messages no operation reaches go upstream as the client sent them,
// byte for byte, in each of the three APIs (verbatim.go, items.go):
// whatever an operation does elsewhere in the thread, a digest's
// summary is a message of its own where the digest's range was, so no
// message it did not cover changes, the client's system prompt and its
// own system messages (a system turn in the Messages API's list, a
// Chat Completions system message, a Responses developer message)
// included.

// verbatimCase is a conversation in one API's shape: the client's
// messages (formatted as clients write them: string contents, keys in
// their own order, fields weft does not write, characters an encoder
// escapes), the answer the stand-in gives and the client sends back,
// and the next message.
type verbatimCase struct {
	name, path string
	body       func(msgs ...string) string
	list       string // the body's field that holds the thread
	answer     func(w http.ResponseWriter, r *http.Request, body []byte)
	thread     []string
	back, next string
	// top are the body's fields besides the thread that must go as they
	// came.
	top []string
}

var verbatimCases = []verbatimCase{
	{
		name: "anthropic", path: "/v1/messages", list: "messages",
		body: func(msgs ...string) string {
			return fmt.Sprintf(`{"model":"claude-test","max_tokens":1024,"system":"You are a coding agent. <rules> & more","messages":[%s]}`, strings.Join(msgs, ","))
		},
		answer: answerText("Fixed."),
		thread: []string{
			`{"role":"system","content":"# Environment\ncwd: /src <repo>"}`,
			`{"role":"user","content":"Find the bug in <limiter> & fix it."}`,
			`{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"refill"}}]}`,
			`{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"bucket.go:3: b.tokens += rate","is_error":false}]}`,
			`{"role":"assistant","content":"The refill reads the wall clock."}`,
			`{"role":"user","content":[{"type":"text","text":"Go on."}]}`,
		},
		back: `{"role":"assistant","content":[{"type":"text","text":"Fixed."}]}`,
		next: `{"role":"user","content":"Thanks."}`,
		top:  []string{"model", "max_tokens", "system"},
	},
	{
		name: "openai", path: "/v1/chat/completions", list: "messages",
		body: func(msgs ...string) string {
			return fmt.Sprintf(`{"model":"gpt-test","messages":[%s],"temperature":0.2}`, strings.Join(msgs, ","))
		},
		answer: answerText("Fixed."),
		thread: []string{
			`{"role":"system","content":"Be brief. <rules> & more"}`,
			`{"role":"user","content":[{"type":"text","text":"Find the bug in <limiter> & fix it."}]}`,
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"grep","arguments":"{\"q\":\"refill\"}"}}]}`,
			`{"tool_call_id":"call_1","role":"tool","content":"bucket.go:3: b.tokens += rate"}`,
			`{"role":"assistant","content":"The refill reads the wall clock."}`,
			`{"content":"Go on.","role":"user","name":"dev"}`,
		},
		back: `{"role":"assistant","content":"Fixed."}`,
		next: `{"role":"user","content":"Thanks."}`,
		top:  []string{"model", "temperature"},
	},
	{
		name: "responses", path: "/v1/responses", list: "input",
		body: func(msgs ...string) string {
			return fmt.Sprintf(`{"model":"gpt-test","instructions":"Be precise.","input":[%s],"store":false}`, strings.Join(msgs, ","))
		},
		answer: rsAnswer("", "Fixed.", nil),
		thread: []string{
			`{"type":"message","role":"developer","content":[{"type":"input_text","text":"Be brief. <rules> & more"}]}`,
			`{"type":"message","role":"user","content":[{"type":"input_text","text":"Find the bug in <limiter> & fix it."}]}`,
			`{"type":"function_call","call_id":"call_1","name":"grep","arguments":"{\"q\":\"refill\"}"}`,
			`{"call_id":"call_1","type":"function_call_output","output":"bucket.go:3: b.tokens += rate"}`,
			`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The refill reads the wall clock."}]}`,
			`{"role":"user","content":"Go on.","type":"message"}`,
		},
		back: `{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Fixed.","annotations":[]}]}`,
		next: `{"type":"message","role":"user","content":[{"type":"input_text","text":"Thanks."}]}`,
		top:  []string{"model", "instructions", "store"},
	},
}

func TestProxySendsUntouchedMessagesInEachAPI(t *testing.T) {
	// Digests by the indices of the thread (its first message is the
	// client's system message), each over messages no other covers.
	ranges := []struct {
		name       string
		start, end int
	}{
		{"a digest that opens the thread after its system message", 1, 4},
		{"a digest in the middle", 4, 5},
	}
	for _, c := range verbatimCases {
		for _, r := range ranges {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				rig := newProxyRig(t, rigOptions{})
				rig.up.setAnswer(c.answer)
				code, got := rig.send(t, c.path, c.body(c.thread...))
				if code != http.StatusOK {
					t.Fatalf("turn 1: %d %s", code, got)
				}
				sid := rig.onlySession()
				rig.messages(sid, len(c.thread)+1)
				const summary = "Found the bug: the refill reads the wall clock."
				digest(t, rig.svc, sid, r.start, r.end, summary)

				msgs := append(append(append([]string(nil), c.thread...), c.back), c.next)
				body := c.body(msgs...)
				if code, got := rig.send(t, c.path, body); code != http.StatusOK {
					t.Fatalf("turn 2: %d %s", code, got)
				}
				sent := rig.up.last().Body
				var fields map[string]json.RawMessage
				if err := json.Unmarshal(sent, &fields); err != nil {
					t.Fatalf("the body sent is not JSON: %v\n%s", err, sent)
				}
				var came map[string]json.RawMessage
				_ = json.Unmarshal([]byte(body), &came)
				for _, name := range c.top {
					if string(fields[name]) != string(came[name]) {
						t.Errorf("%s went as %s, not as it came: %s", name, fields[name], came[name])
					}
				}
				var list []json.RawMessage
				if err := json.Unmarshal(fields[c.list], &list); err != nil {
					t.Fatalf("%s: %v", c.list, err)
				}
				// What the client sent, the digest's range one summary.
				want := append(append(append([]string(nil), msgs[:r.start]...), ""), msgs[r.end+1:]...)
				if len(list) != len(want) {
					t.Fatalf("%d messages sent, want %d:\n%s", len(list), len(want), fields[c.list])
				}
				for k, w := range want {
					if w == "" {
						checkSummary(t, list[k], summary)
						continue
					}
					if string(list[k]) != w {
						t.Errorf("message %d went as\n%s\nnot as it came:\n%s", k, list[k], w)
					}
				}
			})
		}
	}
}

// checkSummary checks that a message sent is a summary alone: a system
// (or developer) message whose text is the summary.
func checkSummary(t *testing.T, raw json.RawMessage, summary string) {
	t.Helper()
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("summary %s: %v", raw, err)
	}
	text := ""
	var s string
	var blocks []struct {
		Text string `json:"text"`
	}
	switch {
	case json.Unmarshal(m.Content, &s) == nil:
		text = s
	case json.Unmarshal(m.Content, &blocks) == nil:
		for _, b := range blocks {
			text += b.Text
		}
	}
	if (m.Role != "system" && m.Role != "developer") || text != summary {
		t.Errorf("the summary went as %s, want a %q message of its own", raw, summary)
	}
}

// A message an operation reaches without removing it is written anew,
// and only it: with a tool's result snipped, the call it answered goes
// as text (the provider takes no call without its result), in a message
// written anew that keeps the client's cache breakpoint and fields of
// its own; every other message goes as it came.
func TestProxyWritesAnewOnlyWhatAnOperationReached(t *testing.T) {
	for _, c := range verbatimCases[:2] {
		t.Run(c.name, func(t *testing.T) {
			thread := append([]string(nil), c.thread...)
			want := `{"role":"assistant","content":"[tool call grep] {\"q\":\"refill\"}"}`
			if c.name == "anthropic" {
				thread[2] = `{"role":"assistant","content":[{"type":"text","text":"Looking.","cache_control":{"type":"ephemeral"}},{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"refill"}}],"x_turn":{"n":1}}`
				want = `{"role":"assistant","content":[{"type":"text","text":"Looking.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"[tool call Grep] {\"q\":\"refill\"}"}],"x_turn":{"n":1}}`
			}
			rig := newProxyRig(t, rigOptions{})
			rig.up.setAnswer(c.answer)
			if code, got := rig.send(t, c.path, c.body(thread...)); code != http.StatusOK {
				t.Fatalf("turn 1: %d %s", code, got)
			}
			sid := rig.onlySession()
			rig.messages(sid, len(thread)+1)
			snip(t, rig.svc, sid, "m4") // the result
			msgs := append(append(thread, c.back), c.next)
			if code, got := rig.send(t, c.path, c.body(msgs...)); code != http.StatusOK {
				t.Fatalf("turn 2: %d %s", code, got)
			}
			list := sentList(t, rig.up.last().Body, c.list)
			if len(list) != len(msgs)-1 {
				t.Fatalf("%d messages sent, want %d: %s", len(list), len(msgs)-1, rig.up.last().Body)
			}
			for k, m := range append(msgs[:3:3], msgs[4:]...) {
				switch {
				case k == 2:
					if string(compactJSON(t, list[k])) != string(compactJSON(t, []byte(want))) {
						t.Errorf("the call went as\n%s\nwant\n%s", list[k], want)
					}
				case string(list[k]) != m:
					t.Errorf("message %d went as\n%s\nnot as it came:\n%s", k, list[k], m)
				}
			}
		})
	}
}

// sentList is the elements of a body's list field, each as it is in the
// body.
func sentList(t *testing.T, body []byte, name string) []json.RawMessage {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("the body sent is not JSON: %v\n%s", err, body)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(fields[name], &list); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return list
}
