package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// A client on a keep-alive connection may send its next turn, with the
// answer it just had, before weft has stored that answer: the answer
// stored keeps its meta (the model that answered) whichever write comes
// first.
func TestProxyAnswerKeepsItsMetaWhenTheNextTurnComesFirst(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	rig.up.setAnswer(answerText("Four."))
	// The first answer is held back until the next request has stored
	// its messages, or waits for that answer.
	release, next := make(chan struct{}), make(chan struct{}, 1)
	var answers atomic.Int32
	signal := func() {
		select {
		case next <- struct{}{}:
		default:
		}
	}
	rig.proxy.answerHook = func(*Turn) {
		if answers.Add(1) == 1 {
			<-release
			return
		}
		signal()
	}
	rig.proxy.engine.awaitHook = func(string) { signal() }

	u1, a1, u2 := `{"role":"user","content":"2+2?"}`, `{"role":"assistant","content":[{"type":"text","text":"Four."}]}`, `{"role":"user","content":"And 3+3?"}`
	resp, _ := rig.post("/v1/messages", anBody(true, u1), nil)
	sid := resp.Header.Get(SessionHeader)
	done := make(chan string)
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, rig.weft.URL+"/v1/messages", strings.NewReader(anBody(true, u1, a1, u2)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err.Error()
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.Header.Get(SessionHeader)
	}()
	<-next
	close(release)
	if got := <-done; got != sid {
		t.Fatalf("the next turn went to %q, not %s", got, sid)
	}
	rig.messages(sid, 4)
	msgs, err := rig.svc.Messages(sid, []uint64{2, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role != "assistant" || m.Meta["model"] != "stand-in" {
			t.Errorf("stored answer %d (%s %q) has meta %v, want the model that answered", m.Seq, m.Role, m.Content, m.Meta)
		}
	}
}
