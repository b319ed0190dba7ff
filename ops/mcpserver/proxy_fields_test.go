package mcpserver

import (
	"net/http"
	"testing"
)

// A message's fields besides role and content stay on it when weft
// writes the thread anew: Claude Code 2.1.330 sends its per-turn
// output_config on the system turn that carries its environment, and a
// digest elsewhere in the thread must not take it off. A field of a
// message an operation removed goes with the message.
func TestProxyKeepsMessageFields(t *testing.T) {
	rig := newProxyRig(t, HandlerOptions{})
	u1 := `{"role":"user","content":[{"type":"text","text":"What is a token bucket?"}]}`
	env := `{"role":"system","content":"# Environment\nPrimary working directory: /w","output_config":{"effort":"medium"}}`
	a1 := `{"role":"assistant","content":[{"type":"text","text":"A rate limiter."}]}`
	u2 := `{"role":"user","content":"And a leaky bucket?","x_turn":{"n":2}}`
	a2 := `{"role":"assistant","content":[{"type":"text","text":"A queue."}]}`
	u3 := `{"role":"user","content":[{"type":"text","text":"Which one for a gateway?","cache_control":{"type":"ephemeral"}}],"x_turn":{"n":3}}`

	rig.up.setAnswer(answerText("A rate limiter."))
	resp, got := rig.post("/v1/messages", anBody(false, u1, env), anHeaders)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("turn 1: %d %s", resp.StatusCode, got)
	}
	sid := resp.Header.Get(SessionHeader)
	rig.up.setAnswer(answerText("A queue."))
	if resp, got = rig.post("/v1/messages", anBody(false, u1, env, a1, u2), anHeaders); resp.StatusCode != http.StatusOK {
		t.Fatalf("turn 2: %d %s", resp.StatusCode, got)
	}
	rig.messages(sid, 5)

	digest(t, rig.svc, sid, 3, 4, "Asked about leaky buckets too.")
	rig.up.setAnswer(answerText("The token bucket."))
	if resp, got = rig.post("/v1/messages", anBody(false, u1, env, a1, u2, a2, u3), anHeaders); resp.StatusCode != http.StatusOK {
		t.Fatalf("turn 3: %d %s", resp.StatusCode, got)
	}
	want := `[{"content":[{"text":"What is a token bucket?","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"# Environment\nPrimary working directory: /w","type":"text"}],"output_config":{"effort":"medium"},"role":"system"},` +
		`{"content":[{"text":"A rate limiter.","type":"text"}],"role":"assistant"},` +
		`{"content":[{"text":"Asked about leaky buckets too.","type":"text"}],"role":"system"},` +
		`{"content":[{"cache_control":{"type":"ephemeral"},"text":"Which one for a gateway?","type":"text"}],"role":"user","x_turn":{"n":3}}]`
	if msgs := field(t, rig.up.last().Body, "messages"); msgs != want {
		t.Errorf("messages sent\n%s\nwant\n%s", msgs, want)
	}
}
