package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestProxySendsUntouchedMessagesAsTheyCame: with an operation in the
// way, the messages outside its reach go upstream byte for byte (a
// string content stays a string, a result's keys keep their order and
// its "is_error": false), the client's system prompt too, and a
// summary is a message of its own where its range was. A removal that
// leaves a call without its result writes that message anew (the call
// folded into text), and only it.
func TestProxySendsUntouchedMessagesAsTheyCame(t *testing.T) {
	t.Parallel()
	u1 := `{"role":"user","content":"Find the TODOs in the repo."}`
	a1 := `{"role":"assistant","content":[{"type":"text","text":"Searching."},{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"TODO"}}]}`
	r1 := `{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"a.go:3: TODO","is_error":false}]}`
	a2 := `{"role":"assistant","content":[{"type":"text","text":"One, in a.go."}]}`
	u2 := `{"role":"user","content":"Fix it."}`
	a3 := `{"role":"assistant","content":[{"type":"text","text":"Fixed."}]}`
	u3 := `{"role":"user","content":"Run the tests.","x_turn":{"n":3}}`

	t.Run("a digest at the start", func(t *testing.T) {
		t.Parallel()
		rig := newProxyRig(t, rigOptions{})
		body := anBody(false, u1, a1, r1, a2, u2, a3, u3)
		resp, got := rig.post("/v1/messages", body, anHeaders)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, got)
		}
		sid := resp.Header.Get(SessionHeader)
		rig.messages(sid, 8)
		digest(t, rig.svc, sid, 0, 3, "Found one TODO, in a.go.")
		body = anBody(false, u1, a1, r1, a2, u2, a3, u3, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`, `{"role":"user","content":"Thanks."}`)
		rig.post("/v1/messages", body, anHeaders)
		sent := rig.up.last().Body
		want := `[{"role":"system","content":[{"type":"text","text":"Found one TODO, in a.go."}]},` + u2 + "," + a3 + "," + u3 + `,{"role":"assistant","content":[{"type":"text","text":"Done."}]},{"role":"user","content":"Thanks."}]`
		if msgs := rawField(t, sent, "messages"); msgs != want {
			t.Errorf("messages sent\n%s\nwant\n%s", msgs, want)
		}
		if rawField(t, sent, "system") != rawField(t, []byte(body), "system") {
			t.Errorf("the system prompt changed on the way: %s", rawField(t, sent, "system"))
		}
	})

	t.Run("a result removed", func(t *testing.T) {
		t.Parallel()
		rig := newProxyRig(t, rigOptions{})
		body := anBody(false, u1, a1, r1, a2, u2)
		resp, _ := rig.post("/v1/messages", body, anHeaders)
		sid := resp.Header.Get(SessionHeader)
		rig.messages(sid, 6)
		snip(t, rig.svc, sid, "m3")
		rig.post("/v1/messages", anBody(false, u1, a1, r1, a2, u2, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`, `{"role":"user","content":"Thanks."}`), anHeaders)
		msgs := rawField(t, rig.up.last().Body, "messages")
		if !strings.HasPrefix(msgs, "["+u1+",") || !strings.Contains(msgs, ","+u2+",") || strings.Contains(msgs, a1) || strings.Contains(msgs, "toolu_1") {
			t.Errorf("messages sent %s: want u1 and u2 as they came, and a1 written anew without its call", msgs)
		}
	})
}

// The same for Chat Completions, where each result is a message of its
// own: the messages no operation reached go as they came, and a call
// whose results do not all follow it as they came is written anew with
// every one of its results.
func TestProxySendsUntouchedChatMessagesAsTheyCame(t *testing.T) {
	t.Parallel()
	sys := `{"role":"system","content":"Be brief.","x_vendor":1}`
	u1 := `{"role":"user","content":[{"type":"text","text":"Read a.go and b.go."}]}`
	a1 := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},{"id":"call_b","type":"function","function":{"name":"read","arguments":"{\"path\":\"b.go\"}"}}]}`
	ra := `{"role":"tool","tool_call_id":"call_a","content":"package a"}`
	rb := `{"role":"tool","tool_call_id":"call_b","content":"package b"}`
	a2 := `{"role":"assistant","content":"Both are tiny."}`
	u2 := `{"content":"Thanks.","role":"user"}`
	rig := newProxyRig(t, rigOptions{})
	resp, _ := rig.post("/v1/chat/completions", oaTestBody(sys, u1, a1, ra, rb, a2, u2), nil)
	sid := resp.Header.Get(SessionHeader)
	rig.messages(sid, 8)

	// A snip of one result: the call and the other result are written
	// anew (the call of the snipped one folded), the rest go as they came.
	snip(t, rig.svc, sid, "m5")
	answer := `{"role":"assistant","content":"Done."}`
	rig.post("/v1/chat/completions", oaTestBody(sys, u1, a1, ra, rb, a2, u2, answer, `{"role":"user","content":"Bye."}`), nil)
	msgs := rawField(t, rig.up.last().Body, "messages")
	if !strings.HasPrefix(msgs, "["+sys+","+u1+",") || !strings.HasSuffix(msgs, ","+a2+","+u2+","+answer+`,{"role":"user","content":"Bye."}]`) {
		t.Errorf("messages sent %s: want the untouched ones as they came", msgs)
	}
	if strings.Contains(msgs, a1) || strings.Contains(msgs, "package b") || !strings.Contains(msgs, "package a") {
		t.Errorf("messages sent %s: the call whose result was snipped goes as it came", msgs)
	}
}
