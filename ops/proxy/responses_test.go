package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/tools"
)

// A Codex CLI conversation's input items, as Codex sends them: its
// instructions as a developer message, the environment as a user
// message, then the user's turns, the model's reasoning (echoed back
// with a "content": null the answer did not have), calls and outputs.
const (
	rsDev  = `{"type":"message","id":"msg_dev","role":"developer","content":[{"type":"input_text","text":"You are a coding agent running in the Codex CLI."}]}`
	rsEnv  = `{"type":"message","id":"msg_env","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/work</cwd>\n</environment_context>"}]}`
	rsU1   = `{"type":"message","id":"msg_u1","role":"user","content":[{"type":"input_text","text":"Find the TODOs"}]}`
	rsRs   = `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Looking for TODOs."}],"content":null,"encrypted_content":"gAAAAB-opaque-18"}`
	rsFc   = `{"type":"function_call","status":"completed","id":"fc_call_1","name":"exec_command","arguments":"{\"cmd\":\"grep -rn TODO .\"}","call_id":"call_1"}`
	rsFco  = `{"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"a.go:3: TODO"}`
	rsAsst = `{"type":"message","status":"completed","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"One TODO, in a.go.","annotations":[]}]}`
	rsU2   = `{"type":"message","id":"msg_u2","role":"user","content":[{"type":"input_text","text":"Fix it."}]}`
)

// rsBody is a Responses API body around input items, as Codex CLI sends
// one: instructions, tools, store false, encrypted reasoning asked for,
// and a field weft does not know.
func rsBody(stream bool, items ...string) string {
	return fmt.Sprintf(`{"model":"gpt-test","instructions":"Be precise.","input":[%s],"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}],"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"summary":"auto"},"store":false,"stream":%v,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k1","x_future_field":{"keep":[1,2,3]}}`,
		strings.Join(items, ","), stream)
}

// rsHeaders are a Codex client's credentials and headers.
var rsHeaders = map[string]string{"Authorization": "Bearer sk-proj-SECRET-codex-key", "Originator": "codex_exec", "Session_id": "s-1"}

// rsTurns runs the conversation's first two turns through rig, checking
// each goes upstream and back byte for byte, and returns its session.
func rsTurns(t *testing.T, rig *proxyRig, stream bool) string {
	t.Helper()
	first := rsAnswer("Looking for TODOs.", "", []toolCall{{"call_1", "exec_command", `{"cmd":"grep -rn TODO ."}`}})
	rig.up.setAnswer(first)
	body := rsBody(stream, rsDev, rsEnv, rsU1)
	resp, got := rig.post("/v1/responses", body, rsHeaders)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("turn 1: %d %s", resp.StatusCode, got)
	}
	up := rig.up.last()
	if up.Path != "/v1/responses" || string(up.Body) != body {
		t.Fatalf("upstream got %s\n%s", up.Path, up.Body)
	}
	for k, v := range rsHeaders {
		if up.Header.Get(k) != v {
			t.Errorf("upstream header %s = %q, want %q", k, up.Header.Get(k), v)
		}
	}
	if want := standInAnswer(first, "/v1/responses", body); string(got) != want {
		t.Errorf("the client got\n%s\nwant what the stand-in sent\n%s", got, want)
	}
	sid := resp.Header.Get(SessionHeader)
	if sid == "" {
		t.Fatalf("no session in the answer's headers: %v", resp.Header)
	}
	rig.messages(sid, 5) // three items in, the reasoning and the call out
	info, _, _ := rig.svc.View(sid)
	if info.Title != "Find the TODOs" || info.Source != "proxy" {
		t.Errorf("session %q from %q", info.Title, info.Source)
	}

	rig.up.setAnswer(rsAnswer("", "One TODO, in a.go.", nil))
	body = rsBody(stream, rsDev, rsEnv, rsU1, rsRs, rsFc, rsFco)
	resp, got = rig.post("/v1/responses", body, rsHeaders)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(SessionHeader) != sid || string(rig.up.last().Body) != body {
		t.Fatalf("turn 2: %d %s, session %s (want %s)", resp.StatusCode, got, resp.Header.Get(SessionHeader), sid)
	}
	rig.messages(sid, 7)
	if rig.sessions() != 1 {
		t.Errorf("%d sessions, want the one", rig.sessions())
	}
	return sid
}

func TestProxyResponsesConversation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			rig := newProxyRig(t, rigOptions{})
			sid := rsTurns(t, rig, stream)

			// The operator digests the turn; the next request carries the
			// summary in its place, every other item and field as it came.
			digest(t, rig.svc, sid, 2, 5, "Looked for TODOs: one, in a.go.")
			body := rsBody(stream, rsDev, rsEnv, rsU1, rsRs, rsFc, rsFco, rsAsst, rsU2)
			resp, got := rig.post("/v1/responses", body, rsHeaders)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("turn 3: %d %s", resp.StatusCode, got)
			}
			sent := rig.up.last().Body
			for _, name := range []string{"model", "instructions", "tools", "tool_choice", "parallel_tool_calls", "reasoning", "store", "stream", "include", "prompt_cache_key", "x_future_field"} {
				if field(t, sent, name) != field(t, []byte(body), name) {
					t.Errorf("%s changed on the way: %s", name, field(t, sent, name))
				}
			}
			summary := `{"type":"message","role":"developer","content":[{"type":"input_text","text":"Looked for TODOs: one, in a.go."}]}`
			want := "[" + strings.Join([]string{rsDev, rsEnv, summary, rsAsst, rsU2}, ",") + "]"
			if in := field(t, sent, "input"); in != string(compactJSON(t, []byte(want))) {
				t.Errorf("input %s\nwant %s", in, compactJSON(t, []byte(want)))
			}
			// The items weft did not write go byte for byte.
			for _, item := range []string{rsDev, rsEnv, rsAsst, rsU2} {
				if !strings.Contains(string(sent), item) {
					t.Errorf("the sent body does not hold %s as it came", item)
				}
			}
			rig.messages(sid, 9)
			if st := rig.svc.ProxyStatsOf(sid); st == nil || st.Requests != 3 || st.SentTokens >= st.RawTokens {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// A call and its output go together or not at all: with one of them
// snipped, the other is sent as text, and the reasoning that led to the
// call is left out with it.
func TestProxyResponsesToolCallsStayPaired(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	sid := rsTurns(t, rig, true)
	body := rsBody(true, rsDev, rsEnv, rsU1, rsRs, rsFc, rsFco, rsAsst, rsU2)

	snip(t, rig.svc, sid, "m5") // the call
	resp, got := rig.post("/v1/responses", body, rsHeaders)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	output := `{"type":"message","role":"user","content":[{"type":"input_text","text":"[tool result] a.go:3: TODO"}]}`
	want := "[" + strings.Join([]string{rsDev, rsEnv, rsU1, output, rsAsst, rsU2}, ",") + "]"
	if in := field(t, rig.up.last().Body, "input"); in != string(compactJSON(t, []byte(want))) {
		t.Errorf("with the call snipped, input %s\nwant %s", in, compactJSON(t, []byte(want)))
	}
	rig.messages(sid, 9)

	// The call back, its output snipped.
	toggleLast(t, rig.svc, sid)
	snip(t, rig.svc, sid, "m6")
	body = rsBody(true, rsDev, rsEnv, rsU1, rsRs, rsFc, rsFco, rsAsst, rsU2, rsAsst, rsU2)
	resp, got = rig.post("/v1/responses", body, rsHeaders)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	call := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"[tool call exec_command] {\"cmd\":\"grep -rn TODO .\"}"}]}`
	want = "[" + strings.Join([]string{rsDev, rsEnv, rsU1, call, rsAsst, rsU2, rsAsst, rsU2}, ",") + "]"
	if in := field(t, rig.up.last().Body, "input"); in != string(compactJSON(t, []byte(want))) {
		t.Errorf("with the output snipped, input %s\nwant %s", in, compactJSON(t, []byte(want)))
	}
	rig.messages(sid, 11)
}

// POST /v1/responses/input_tokens counts the effective thread: it goes
// upstream in place of the input, and nothing is stored.
func TestProxyResponsesInputTokens(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	sid := rsTurns(t, rig, false)
	snip(t, rig.svc, sid, "m3", "m4", "m5", "m6")
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		writeJSON(w, `{"object":"response.input_tokens","input_tokens":42}`)
	})
	body := rsBody(false, rsDev, rsEnv, rsU1, rsRs, rsFc, rsFco, rsAsst, rsU2)
	resp, got := rig.post("/v1/responses/input_tokens", body, rsHeaders)
	if resp.StatusCode != http.StatusOK || string(got) != `{"object":"response.input_tokens","input_tokens":42}` {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	up := rig.up.last()
	want := "[" + strings.Join([]string{rsDev, rsEnv, rsAsst, rsU2}, ",") + "]"
	if in := field(t, up.Body, "input"); up.Path != "/v1/responses/input_tokens" || in != string(compactJSON(t, []byte(want))) {
		t.Errorf("%s got input %s\nwant %s", up.Path, in, compactJSON(t, []byte(want)))
	}
	time.Sleep(50 * time.Millisecond)
	rig.messages(sid, 7)
}

func TestProxyResponsesDisconnectStoresNoHalfAnswer(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	gone := make(chan struct{})
	cut := rsAnswerCut("", "A long answer that is cut.", nil, "", 5)
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, body []byte) {
		cut(w, r, body)
		close(gone)
	})
	sid := rig.leaveMidStream("/v1/responses", rsBody(true, rsU1), gone)
	time.Sleep(50 * time.Millisecond)
	rig.messages(sid, 1)

	// A stream that ends without response.completed, to a client that
	// stays, stores nothing of its answer either.
	for _, last := range []string{"response.failed", "response.incomplete", "error"} {
		rig.up.setAnswer(rsAnswerCut("", "Cut short.", nil, last, -1))
		resp, got := rig.post("/v1/responses", rsBody(true, rsU1), nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get(SessionHeader) != sid || !strings.Contains(string(got), last) {
			t.Fatalf("%s: %d, session %s: %s", last, resp.StatusCode, resp.Header.Get(SessionHeader), got)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); strings.Count(rig.logs.String(), "stopped before its end") < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say the answers were cut: %s", rig.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	rig.messages(sid, 1)
}

// Codex stops reading once response.completed has come, and hangs up:
// the answer reached it whole, and is stored.
func TestProxyResponsesStoresAnAnswerTheClientLeftAfterItsEnd(t *testing.T) {
	for _, c := range []struct {
		path, body string
		answer     func(w http.ResponseWriter, r *http.Request, body []byte)
		end        string
	}{
		{"/v1/responses", rsBody(true, rsU1), rsAnswerCut("", "Whole.", nil, "", 1000), "response.completed"},
		{"/v1/messages", anBody(true, `{"role":"user","content":"Find the TODOs"}`), func(w http.ResponseWriter, r *http.Request, _ []byte) {
			anthropicStream(w, "Whole.", nil, -1)
			<-r.Context().Done()
		}, "message_stop"},
	} {
		rig := newProxyRig(t, rigOptions{})
		rig.up.setAnswer(c.answer)
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rig.weft.URL+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, 4096)
		for !strings.Contains(string(got), c.end) {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				t.Fatalf("%s: the stream ended before %s: %v\n%s", c.path, c.end, err, got)
			}
		}
		for !strings.HasSuffix(string(got), "\n\n") {
			n, _ := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
		}
		cancel() // the client has its answer, and leaves
		resp.Body.Close()
		rig.messages(resp.Header.Get(SessionHeader), 2)
	}
}

func TestProxyResponsesRefusesHostileBodies(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	rig.up.setAnswer(rsAnswer("", "Done.", nil))
	resp, _ := rig.post("/v1/responses", rsBody(false, rsU1), nil)
	rig.messages(resp.Header.Get(SessionHeader), 2)
	before, asked := rig.fileHash(), rig.up.count()
	huge := `{"model":"m","input":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	for _, c := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"huge", huge, http.StatusRequestEntityTooLarge, "larger than 32 MB"},
		{"not JSON", `{"input": [`, http.StatusBadRequest, "not valid JSON"},
		{"not an object", `[1,2]`, http.StatusBadRequest, "not a JSON object"},
		{"deep", `{"input":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, http.StatusBadRequest, "nests deeper"},
		{"input twice", `{"input":[` + rsU1 + `],"input":[]}`, http.StatusBadRequest, `"input" is there twice`},
		{"input a number", `{"input":7}`, http.StatusBadRequest, `"input" is a number`},
		{"an item that is no object", `{"input":[7]}`, http.StatusBadRequest, "input[0]"},
		{"an item of no type", `{"input":[{"call_id":"c"}]}`, http.StatusBadRequest, `no "type"`},
		{"a role weft cannot read", `{"input":[{"type":"message","role":"robot","content":"x"}]}`, http.StatusBadRequest, `role "robot"`},
		{"content of the wrong type", `{"input":[{"role":"user","content":7}]}`, http.StatusBadRequest, "content"},
		{"a call without a name", `{"input":[{"type":"function_call","call_id":"c","arguments":"{}"}]}`, http.StatusBadRequest, "without a tool name"},
		{"empty input", `{"input":[]}`, http.StatusBadRequest, "input is empty"},
		{"not UTF-8", "{\"input\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}", http.StatusBadRequest, "not valid UTF-8"},
		{"not UTF-8, a string input", "{\"input\":\"caf\xe9\"}", http.StatusBadRequest, "not valid UTF-8"},
		{"a GET", "", http.StatusMethodNotAllowed, "POST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := rig.send(t, "/v1/responses", c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if _, msg := oaError(t, body); !strings.Contains(msg, c.says) {
				t.Errorf("error %q does not say %q", msg, c.says)
			}
		})
	}
	if rig.fileHash() != before || rig.up.count() != asked {
		t.Error("a refused request changed the file or reached the upstream")
	}
}

// A request that continues a response the provider stores
// (previous_response_id, or a conversation) sends only its new items:
// weft cannot see the thread, so it passes the request through
// untouched, stores nothing, and says so in its log.
func TestProxyResponsesPassesServerSideStateThrough(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	rig.up.setAnswer(rsAnswer("", "Done.", nil))
	for _, body := range []string{
		`{"model":"gpt-test","previous_response_id":"resp_abc","input":[` + rsU2 + `],"stream":true}`,
		`{"model":"gpt-test","conversation":"conv_123","input":"Fix it.","store":true}`,
		`{"model":"gpt-test","previous_response_id":"resp_abc"}`,
	} {
		resp, got := rig.post("/v1/responses", body, rsHeaders)
		if resp.StatusCode != http.StatusOK || string(rig.up.last().Body) != body || resp.Header.Get(SessionHeader) != "" {
			t.Errorf("%s: %d %s, upstream got %s, session %q", body, resp.StatusCode, got, rig.up.last().Body, resp.Header.Get(SessionHeader))
		}
		if want := standInAnswer(rsAnswer("", "Done.", nil), "/v1/responses", body); string(got) != want {
			t.Errorf("the client got %s, want %s", got, want)
		}
	}
	if n := rig.sessions(); n != 0 {
		t.Errorf("%d sessions stored from requests weft cannot see whole", n)
	}
	for _, says := range []string{"previous_response_id", "conversation", "passed through untouched"} {
		if !strings.Contains(rig.logs.String(), says) {
			t.Errorf("the log does not say %q: %s", says, rig.logs.String())
		}
	}
}

// A request whose input is a string is one user message.
func TestProxyResponsesStringInput(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	rig.up.setAnswer(rsAnswer("", "Hello.", nil))
	body := `{"model":"gpt-test","input":"Say hello"}`
	resp, got := rig.post("/v1/responses", body, nil)
	if resp.StatusCode != http.StatusOK || string(rig.up.last().Body) != body {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	sid := resp.Header.Get(SessionHeader)
	rig.messages(sid, 2)
	info, _, _ := rig.svc.View(sid)
	if info.Title != "Say hello" {
		t.Errorf("title %q", info.Title)
	}
	// The next turn sends the items; the session goes on.
	next := `{"model":"gpt-test","input":[{"role":"user","content":"Say hello"},` + string(rsItems("", "Hello.", nil)[0]) + `,{"role":"user","content":"Again"}]}`
	resp, got = rig.post("/v1/responses", next, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(SessionHeader) != sid {
		t.Fatalf("%d %s, session %s", resp.StatusCode, got, resp.Header.Get(SessionHeader))
	}
	rig.messages(sid, 4)
}

// toggleLast switches the session's latest operation off, through the
// tool registry.
func toggleLast(t *testing.T, svc *ops.Service, sid string) {
	t.Helper()
	list, err := svc.Operations(sid)
	if err != nil || len(list) == 0 {
		t.Fatal(err, len(list))
	}
	tool, _ := tools.Lookup("toggle_operation")
	args := fmt.Sprintf(`{"session_id":%q,"operation_id":%q,"active":false}`, sid, list[len(list)-1].ID)
	if _, err := tool.Call(context.Background(), svc, json.RawMessage(args)); err != nil {
		t.Fatal(err)
	}
}
