package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"weft/formats/export"
)

// A Chat Completions message's members besides those weft writes (role,
// content, name, tool_calls, tool_call_id) stay on it when weft writes
// the thread anew: a DeepSeek-style assistant's reasoning_content, a
// message's cache_control, a vendor's own fields. Their values go as the
// client wrote them, byte for byte; a message an operation removed takes
// its fields with it, and a message that had none gets none.
func TestProxyKeepsChatMessageFields(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	headers := map[string]string{"Authorization": "Bearer sk-test"}
	oaBody := func(msgs ...string) string {
		return fmt.Sprintf(`{"model":"deepseek-test","temperature":0.2,"messages":[%s],"x_future":{"keep":true}}`, strings.Join(msgs, ","))
	}
	sys := `{"role":"system","content":"Be brief."}`
	u0 := `{"role":"user","content":"Hello.","x_vendor":{"trace": "u0"}}`
	a0 := `{"role":"assistant","content":"Hi.","reasoning_content":"Greet back."}`
	u1 := `{"role":"user","content":"Find the TODOs","x_vendor":{"trace": "u1", "n": 1.50, "s": "caf\u00e9"}}`
	a1 := `{"role":"assistant","content":null,"reasoning_content":"Grep is quickest \u2014 one call.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"grep","arguments":"{\"q\":\"TODO\"}"}}]}`
	t1 := `{"role":"tool","tool_call_id":"call_1","content":"a.go:3: TODO\nb.go:9: TODO","x_exit":{"code":0, "ms":12}}`
	a2 := `{"role":"assistant","content":"Two: a.go and b.go.","reasoning_content":"Count the lines."}`
	u2 := `{"role":"user","content":[{"type":"text","text":"Fix the first."}],"cache_control":{"type":"ephemeral"}}`
	a3 := `{"reasoning_content":"Edit a.go, line 3.","role":"assistant","content":"Fixed."}`
	u3 := `{"role":"user","content":"Now b.go.","x_vendor":{"trace":"u3"},"prefix":false}`

	var sid string
	turn := func(answer func(http.ResponseWriter, *http.Request, []byte), msgs ...string) []byte {
		t.Helper()
		rig.up.setAnswer(answer)
		body := oaBody(msgs...)
		resp, got := rig.post("/v1/chat/completions", body, headers)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d messages: %d %s", len(msgs), resp.StatusCode, got)
		}
		if sid == "" {
			sid = resp.Header.Get(SessionHeader)
		} else if s := resp.Header.Get(SessionHeader); s != sid {
			t.Fatalf("%d messages: session %s, want %s", len(msgs), s, sid)
		}
		rig.messages(sid, len(msgs)+1)
		return rig.up.last().Body
	}
	// With no operation the body goes as it came, every member of every
	// message with it.
	for _, msgs := range [][]string{{sys, u0}, {sys, u0, a0, u1}} {
		answer := answerText("Hi.")
		if len(msgs) == 4 {
			answer = answerWith("", []toolCall{{"call_1", "grep", `{"q":"TODO"}`}})
		}
		if sent, want := turn(answer, msgs...), oaBody(msgs...); string(sent) != want {
			t.Fatalf("no operation, yet the body changed:\n%s\nwant\n%s", sent, want)
		}
	}
	turn(answerText("Two: a.go and b.go."), sys, u0, a0, u1, a1, t1)
	turn(answerText("Fixed."), sys, u0, a0, u1, a1, t1, a2, u2)

	// The operator snips the assistant's count and digests the greeting.
	snip(t, rig.svc, sid, "m7")
	digest(t, rig.svc, sid, 1, 2, "Greeted.")
	sent := turn(answerText("Done."), sys, u0, a0, u1, a1, t1, a2, u2, a3, u3)

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(sent, &fields); err != nil {
		t.Fatalf("the upstream got no JSON object: %v\n%s", err, sent)
	}
	var got []map[string]json.RawMessage
	if err := json.Unmarshal(fields["messages"], &got); err != nil {
		t.Fatalf("messages: %v\n%s", err, fields["messages"])
	}
	// Each message sent, and the request's message whose own members it
	// should carry ("" for one that had none, or a summary).
	want := []struct{ role, own string }{
		{"system", sys}, {"system", ""}, {"user", u1}, {"assistant", a1}, {"tool", t1}, {"user", u2}, {"assistant", a3}, {"user", u3},
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages sent, want %d:\n%s", len(got), len(want), fields["messages"])
	}
	for k, w := range want {
		var role string
		json.Unmarshal(got[k]["role"], &role)
		if role != w.role {
			t.Errorf("message %d is %s's, want %s's", k, role, w.role)
		}
		wantOwn := map[string]json.RawMessage{}
		if w.own != "" {
			wantOwn = ownMembers(t, []byte(w.own))
		}
		gotOwn := withoutWritten(got[k])
		names := func(m map[string]json.RawMessage) []string {
			var s []string
			for n := range m {
				s = append(s, n)
			}
			slices.Sort(s)
			return s
		}
		if !slices.Equal(names(gotOwn), names(wantOwn)) {
			t.Errorf("message %d (%s) has own members %v, want %v", k, role, names(gotOwn), names(wantOwn))
			continue
		}
		for n, v := range wantOwn {
			if !bytes.Equal(gotOwn[n], v) {
				t.Errorf("message %d: %s is %s, want %s as the client wrote it", k, n, gotOwn[n], v)
			}
		}
	}
	// What the snipped and digested messages said alone is not sent.
	for _, gone := range []string{"Count the lines.", "Greet back.", `"u0"`} {
		if bytes.Contains(fields["messages"], []byte(gone)) {
			t.Errorf("%s, of a message an operation removed, is sent: %s", gone, fields["messages"])
		}
	}
	for _, name := range []string{"model", "temperature", "x_future"} {
		if field(t, sent, name) != field(t, []byte(oaBody()), name) {
			t.Errorf("%s changed on the way: %s", name, field(t, sent, name))
		}
	}
}

// ownMembers are a chat message's members besides those the exporter
// writes, their values as they are in raw.
func ownMembers(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a message: %s", raw)
	}
	return withoutWritten(m)
}

// withoutWritten is a message's members but those the exporter writes;
// json.Unmarshal leaves each value's bytes as they came.
func withoutWritten(m map[string]json.RawMessage) map[string]json.RawMessage {
	for _, n := range []string{"role", "content", "name", "tool_calls", "tool_call_id"} {
		delete(m, n)
	}
	return m
}

// How a chat message's own fields find the message the exporter wrote
// for it: a developer message is written as a system one, a message of
// several texts as one text with blank lines between, a refusal as the
// text; a text that only begins another's is not it, and of two
// messages saying the same, each keeps its own.
func TestChatFieldsFindTheirMessage(t *testing.T) {
	body := oaTestBody(
		`{"role":"developer","content":"Rules.","x":1}`,
		`{"role":"user","content":[{"type":"text","text":"<reminder>"},{"type":"text","text":"Q"}],"x":2}`,
		`{"role":"assistant","content":null,"refusal":"I can't.","x":3}`,
		`{"role":"user","content":"Go","x":4}`,
		`{"role":"user","content":"continue","x":5}`,
		`{"role":"assistant","content":"ok"}`,
		`{"role":"user","content":"continue","x":6}`,
	)
	b, err := parseProxyBody(OpenAI, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.own) != 6 {
		t.Fatalf("%d messages with fields of their own, want 6", len(b.own))
	}
	msgs := []export.OpenAIMessage{
		{Role: "system", Content: "Rules."},
		{Role: "user", Content: "<reminder>\n\nQ"},
		{Role: "assistant", Content: "I can't."},
		{Role: "user", Content: "Go on"},
		{Role: "user", Content: "continue"},
		{Role: "assistant", Content: "ok"},
		{Role: "user", Content: "continue"},
	}
	th := b.chatThread(&Turn{OpenAI: msgs, anSegs: []anSeg{{raw: -1, n: len(msgs)}}})
	want := map[int]string{0: `"x":1`, 1: `"x":2`, 2: `"refusal":"I can't.","x":3`, 4: `"x":5`, 6: `"x":6`}
	for m := range msgs {
		if got := string(th.own[m]); got != want[m] {
			t.Errorf("message %d (%v) gets %q, want %q", m, msgs[m].Content, got, want[m])
		}
	}
	out, err := th.appendJSON(nil)
	if err != nil || !json.Valid(out) {
		t.Fatalf("%v: %s", err, out)
	}
}

// oaTestBody is a Chat Completions body around messages.
func oaTestBody(msgs ...string) string {
	return `{"model":"m","messages":[` + strings.Join(msgs, ",") + `]}`
}
