package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/memory"
)

// A session the proxy keeps under a memory policy (the file's default
// for proxied sessions) is brought within it by the very request that
// crosses it: that request waits for its messages and the policy's
// check, and goes upstream with the summary in place of the oldest
// turns. The requests between go as they are, at once.
func TestProxyKeepsTheSessionWithinItsPolicy(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, rigOptions{Memory: true})
	seed := model.DefaultMemoryPolicy()
	if err := rig.svc.SetDefaultPolicy(ops.SettingMemoryProxied, &seed); err != nil {
		t.Fatal(err)
	}
	// The stand-in writes the summaries too, asked with the client's
	// credentials (the policy names no summarizer: the upstream is the
	// first at hand).
	var summaryAsked []upstreamRequest
	var mu sync.Mutex
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Contains(body, []byte("Summarize this part of a conversation")) {
			mu.Lock()
			summaryAsked = append(summaryAsked, upstreamRequest{Header: r.Header.Clone(), Body: body})
			mu.Unlock()
			answerText("Five questions on bursts: the limiter refills at a fixed rate.")(w, r, body)
			return
		}
		answerText("Done.")(w, r, body)
	})
	var msgs []string
	for k := range 14 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"Question %d: how should the limiter treat bursts?"}`, k))
		rig.post("/v1/messages", anBody(false, msgs...), anHeaders)
		up := lastAgentRequest(rig)
		prompts := strings.Count(up, "Question ")
		sid := rig.onlySession()
		rig.messages(sid, 2*(k+1))
		switch {
		case k+1 <= 10 && prompts != k+1:
			t.Errorf("request %d (%d turns): %d prompts went upstream, want all", k, k+1, prompts)
		case k+1 > 10 && (prompts > 11 || !strings.Contains(up, "Five questions on bursts")):
			t.Errorf("request %d (%d turns): %d prompts went upstream, want the summary of the first five in their place:\n%.400s", k, k+1, prompts, up)
		}
		msgs = append(msgs, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`)
		// The agent reads its answer and types: the request and its
		// answer are stored, the policy's check made, and the summaries
		// it asked for ahead written meanwhile.
		rig.proxy.background.Wait()
		memory.Settle(rig.svc)
	}
	// The thread changed once, at the compaction: the prompt cache's
	// prefix broke there only.
	if st := rig.svc.ProxyStatsOf(rig.onlySession()); st == nil || st.PrefixBreaks != 1 {
		t.Errorf("proxy stats %+v, want one prefix break in 14 requests", st)
	}
	ops, err := rig.svc.Operations(rig.onlySession())
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Author != model.MemoryAuthor || ops[0].Rule != model.RuleTurns || ops[0].Payload.SummarySource != model.SummarizerUpstream {
		t.Errorf("operations %+v, want memory's one digest, its summary by the upstream", ops)
	}
	// Written ahead (the first five turns', then the next five's, ready
	// for the next compaction), with the client's key and model.
	mu.Lock()
	defer mu.Unlock()
	if len(summaryAsked) != 2 || !bytes.Contains(summaryAsked[0].Body, []byte(`Question 0:`)) || !bytes.Contains(summaryAsked[1].Body, []byte(`Question 5:`)) {
		t.Errorf("the upstream was asked for %d summaries, want the first five turns' and the next five's", len(summaryAsked))
	}
	for _, a := range summaryAsked {
		if a.Header.Get("X-Api-Key") != anHeaders["X-Api-Key"] || !bytes.Contains(a.Body, []byte(`"model":"claude-test"`)) {
			t.Errorf("a summary was asked without the client's key or model: %v\n%s", a.Header, a.Body)
		}
	}
}

// lastAgentRequest is the body of the latest request the stand-in got
// that is not a summary's (those are asked in the background).
func lastAgentRequest(rig *proxyRig) string {
	rig.up.mu.Lock()
	defer rig.up.mu.Unlock()
	for i := len(rig.up.got) - 1; i >= 0; i-- {
		if b := rig.up.got[i].Body; !bytes.Contains(b, []byte("Summarize this part of a conversation")) {
			return string(b)
		}
	}
	rig.t.Fatal("the stand-in got no agent's request")
	return ""
}

// The operator reverts the policy's digest while the agent runs: the
// agent's next request carries the originals, and the policy never
// digests those turns again (it may digest others, later ones).
func TestProxySendsWhatTheOperatorTookBackFromThePolicy(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, rigOptions{Memory: true})
	seed := model.DefaultMemoryPolicy()
	if err := rig.svc.SetDefaultPolicy(ops.SettingMemoryProxied, &seed); err != nil {
		t.Fatal(err)
	}
	rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, body []byte) {
		if bytes.Contains(body, []byte("Summarize this part of a conversation")) {
			answerText("Questions on bursts.")(w, r, body)
			return
		}
		answerText("Done.")(w, r, body)
	})
	var msgs []string
	turn := func(k int) string {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"Question %d: how should the limiter treat bursts?"}`, k))
		rig.post("/v1/messages", anBody(false, msgs...), anHeaders)
		up := lastAgentRequest(rig)
		rig.messages(rig.onlySession(), 2*(k+1))
		msgs = append(msgs, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`)
		rig.proxy.background.Wait()
		memory.Settle(rig.svc)
		return up
	}
	for k := range 11 {
		turn(k)
	}
	sid := rig.onlySession()
	list, err := rig.svc.Operations(sid)
	if err != nil || len(list) != 1 || list[0].Author != model.MemoryAuthor {
		t.Fatalf("after 11 turns: operations %+v (%v), want memory's digest", list, err)
	}
	digest := list[0]
	// The operator, in the TUI, takes the digest back.
	op := ops.WithAuthor(t.Context(), "operator")
	if _, err := rig.svc.RevertOperation(op, ops.OperationArgs{OperationID: digest.ID, SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	up := turn(11)
	for k := range 12 {
		if !strings.Contains(up, fmt.Sprintf("Question %d:", k)) {
			t.Errorf("the request after the revert lacks question %d: the originals must go upstream again", k)
		}
	}
	if strings.Contains(up, "Questions on bursts.") {
		t.Errorf("the reverted summary still went upstream")
	}
	for k := 12; k < 16; k++ {
		turn(k)
	}
	list, err = rig.svc.Operations(sid)
	if err != nil {
		t.Fatal(err)
	}
	later := 0
	for _, o := range list {
		if o.ID != digest.ID && o.Author == model.MemoryAuthor {
			later++
		}
		t.Logf("%s %s by %s over %d items (%s..%s), reverted %v", o.ID, o.Type, o.Author, len(o.Targets), o.Targets[0], o.Targets[len(o.Targets)-1], o.Reverted())
		if o.ID == digest.ID {
			if !o.Reverted() {
				t.Errorf("the operator's revert of %s was undone", o.ID)
			}
			continue
		}
		for _, id := range o.Targets {
			if o.Author == model.MemoryAuthor && slices.Contains(digest.Targets, id) {
				t.Errorf("the policy made %s over item %s again, which the operator took back from %s", o.ID, id, digest.ID)
				break
			}
		}
	}
	if later == 0 {
		t.Errorf("16 turns and no digest of the policy after the revert: it must go on with the turns the operator left it")
	}
}
