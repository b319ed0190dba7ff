package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"weft/formats/export"
)

// A message's fields besides role and content stay on it when weft
// writes the thread anew: Claude Code 2.1.330 sends its per-turn
// output_config on the system turn that carries its environment, and a
// digest elsewhere in the thread must not take it off. A field of a
// message an operation removed goes with the message.
func TestProxyKeepsMessageFields(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
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
	// The messages the digest did not cover go as they came, their own
	// fields with them; the summary is a system turn of its own.
	want := "[" + u1 + "," + env + "," + a1 + `,{"role":"system","content":[{"type":"text","text":"Asked about leaky buckets too."}]},` + u3 + "]"
	if msgs := rawField(t, rig.up.last().Body, "messages"); msgs != want {
		t.Errorf("messages sent\n%s\nwant\n%s", msgs, want)
	}
}

// Placing the own fields of a long thread's messages is one pass over
// it, not one per message with fields: a DeepSeek-style client sends
// reasoning_content on every assistant message of a thread of
// thousands.
func TestPlaceFieldsIsOnePass(t *testing.T) {
	const turns = 1000
	var msgs []string
	var thread []export.OpenAIMessage
	for i := range turns {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"user","content":"q %d"}`, i),
			fmt.Sprintf(`{"role":"assistant","content":"a %d","reasoning_content":"r %d"}`, i, i))
		thread = append(thread,
			export.OpenAIMessage{Role: "user", Content: fmt.Sprintf("q %d", i)},
			export.OpenAIMessage{Role: "assistant", Content: fmt.Sprintf("a %d", i)})
	}
	b, err := parseProxyBody(OpenAI, []byte(`{"model":"m","messages":[`+strings.Join(msgs, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	looks := 0
	own := b.placeFields(len(thread), func(m int) string { return thread[m].Role }, func(m int, o *ownMsg) bool {
		looks++
		return chatMessageSays(&thread[m], o)
	}, func(int) bool { return false })
	for i := range turns {
		if want := fmt.Sprintf(`"reasoning_content":"r %d"`, i); string(own[2*i+1]) != want {
			t.Fatalf("message %d got %s, want %s", 2*i+1, own[2*i+1], want)
		}
	}
	if len(own) != turns {
		t.Errorf("%d messages got fields, want %d", len(own), turns)
	}
	if looks > 2*len(thread) {
		t.Errorf("%d messages looked at to place the fields of %d on a thread of %d", looks, turns, len(thread))
	}
}
