package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A request sent again after it succeeded (a retry, several samples from
// one prefix) or a thread the session holds the start of (a regenerate:
// the last answer dropped, the rest sent again) continues the session:
// nothing is stored twice, and what goes upstream is the session's view
// of those messages, the operator's edits applied.
func TestProxyResendContinuesTheSession(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	u1, a1 := `{"role":"user","content":"Find the TODOs"}`, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`
	sid := ""
	for i := range 3 {
		resp, got := rig.post("/v1/messages", anBody(false, u1), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, got)
		}
		if i == 0 {
			sid = resp.Header.Get(SessionHeader)
		} else if s := resp.Header.Get(SessionHeader); s != sid {
			t.Fatalf("request %d went to session %s, not %s", i, s, sid)
		}
		rig.messages(sid, 2) // the question and the first answer, once
	}

	u2 := `{"role":"user","content":"Which files?"}`
	rig.up.setAnswer(answerText("a.go, b.go."))
	resp, _ := rig.post("/v1/messages", anBody(false, u1, a1, u2), nil)
	if resp.Header.Get(SessionHeader) != sid {
		t.Fatalf("the next turn went to %s, not %s", resp.Header.Get(SessionHeader), sid)
	}
	rig.messages(sid, 4)

	// The operator digests the first turn; a regenerate of the last
	// answer sends the thread without it, and gets the summary in place
	// of the first turn, not the answer it drops.
	digest(t, rig.svc, sid, 0, 1, "Looked for TODOs.")
	rig.up.setAnswer(answerText("a.go only."))
	resp, got := rig.post("/v1/messages", anBody(false, u1, a1, u2), nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(SessionHeader) != sid {
		t.Fatalf("the regenerate: %d %s, session %s (want %s)", resp.StatusCode, got, resp.Header.Get(SessionHeader), sid)
	}
	sent := rig.up.last().Body
	if msgs := field(t, sent, "messages"); !strings.HasPrefix(msgs, `[{"content":[{"text":"Looked for TODOs.","type":"text"}],"role":"system"}`) {
		t.Errorf("messages sent %s: the summary does not open them", msgs)
	}
	if msgs := field(t, sent, "messages"); strings.Contains(msgs, "Find the TODOs") || strings.Contains(msgs, "a.go, b.go.") || !strings.Contains(msgs, "Which files?") {
		t.Errorf("messages sent %s, want the question after the summary and nothing after it", msgs)
	}
	rig.messages(sid, 4)
	if n := rig.sessions(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}

// The same new conversation sent several times at once is one session,
// and every answer says it.
func TestProxyResendsAtOnceAreOneSession(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	body := anBody(false, `{"role":"user","content":"Say it eight times."}`)
	sids := make(chan string, 8)
	for range 8 {
		go func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, rig.weft.URL+"/v1/messages", strings.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				sids <- err.Error()
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			sids <- resp.Header.Get(SessionHeader)
		}()
	}
	sid := rig.onlySession()
	for range 8 {
		if got := <-sids; got != sid {
			t.Errorf("an answer says session %q, not %s", got, sid)
		}
	}
	rig.messages(sid, 2)
	if strings.Contains(rig.logs.String(), "level=ERROR") {
		t.Errorf("the log says\n%s", rig.logs.String())
	}
}
