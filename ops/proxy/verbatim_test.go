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
