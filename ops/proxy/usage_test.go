package proxy

import (
	"fmt"
	"net/http"
	"testing"

	"weft/ops"
)

// What the provider says each answer cost is kept with the session's
// proxy stats, as the three APIs say it, streamed or not.
func TestProxyRecordsTheProvidersUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, path, body, answer string
		stream                   bool
		want                     ops.Usage
	}{
		{name: "messages", path: "/v1/messages", body: anBody(false, `{"role":"user","content":"Hi."}`),
			answer: `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hello."}],"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":4000,"output_tokens":7}}`,
			want:   ops.Usage{Input: 12, CacheRead: 4000, CacheWrite: 300, Output: 7}},
		{name: "messages streamed", path: "/v1/messages", body: anBody(true, `{"role":"user","content":"Hi."}`), stream: true,
			answer: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":12,\"cache_read_input_tokens\":4000,\"output_tokens\":1}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello.\"}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			want: ops.Usage{Input: 12, CacheRead: 4000, Output: 9}},
		{name: "chat completions", path: "/v1/chat/completions", body: `{"model":"m","messages":[{"role":"user","content":"Hi."}]}`,
			answer: `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],"usage":{"prompt_tokens":4100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":4000}}}`,
			want:   ops.Usage{Input: 100, CacheRead: 4000, Output: 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rig := newProxyRig(t, rigOptions{})
			rig.up.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
				if c.stream {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				fmt.Fprint(w, c.answer)
			})
			resp, got := rig.post(c.path, c.body, anHeaders)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, got)
			}
			sid := resp.Header.Get(SessionHeader)
			rig.messages(sid, 2)
			rig.proxy.background.Wait()
			st := rig.svc.ProxyStatsOf(sid)
			if st == nil || st.Usage == nil || *st.Usage != c.want || st.CacheReadTotal != c.want.CacheRead {
				t.Errorf("stats %+v (usage %+v), want usage %+v", st, st.Usage, c.want)
			}
		})
	}
}

// A request whose thread is not the previous one's and more breaks the
// prompt cache's prefix: an operator's digest does, once; the requests
// after it go on from it and do not.
func TestProxyCountsPrefixBreaks(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, rigOptions{})
	msgs := []string{`{"role":"user","content":"One."}`}
	var sid string
	send := func() {
		resp, _ := rig.post("/v1/messages", anBody(false, msgs...), anHeaders)
		sid = resp.Header.Get(SessionHeader)
		rig.messages(sid, len(msgs)+1)
		msgs = append(msgs, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`, fmt.Sprintf(`{"role":"user","content":"Turn %d."}`, len(msgs)))
	}
	for range 3 {
		send()
	}
	if st := rig.svc.ProxyStatsOf(sid); st.PrefixBreaks != 0 {
		t.Fatalf("a growing thread broke the prefix %d times", st.PrefixBreaks)
	}
	digest(t, rig.svc, sid, 0, 1, "Said one, heard done.")
	for range 3 {
		send()
	}
	if st := rig.svc.ProxyStatsOf(sid); st.PrefixBreaks != 1 || st.Requests != 6 {
		t.Errorf("after a digest and two requests more: %d breaks in %d requests, want 1", st.PrefixBreaks, st.Requests)
	}
}

// What each request sent is kept by part: the system prompt and tools
// (counted once for each value), the summaries, turns and tool outputs.
func TestProxyKeepsWhatItSentByPart(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, rigOptions{})
	msgs := []string{`{"role":"user","content":"Grep for TODO."}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"TODO"}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go:3: TODO fix the limiter's refill"}]}`}
	resp, _ := rig.post("/v1/messages", anBody(false, msgs...), anHeaders)
	sid := resp.Header.Get(SessionHeader)
	rig.messages(sid, 4)
	digest(t, rig.svc, sid, 0, 1, "Asked for TODOs; grepped.")
	msgs = append(msgs, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`, `{"role":"user","content":"Fix it."}`)
	rig.post("/v1/messages", anBody(false, msgs...), anHeaders)
	st := rig.svc.ProxyStatsOf(sid)
	if st == nil || st.LastSent == nil {
		t.Fatalf("stats %+v", st)
	}
	p := *st.LastSent
	if p.System == 0 || p.Tools == 0 || p.Summaries == 0 || p.ToolOutputs == 0 || p.Turns == 0 || p.Summaries+p.Turns+p.ToolOutputs != st.SentTokens {
		t.Errorf("sent by part %+v, %d tokens in all", p, st.SentTokens)
	}
}
