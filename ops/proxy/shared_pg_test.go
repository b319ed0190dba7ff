package proxy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/reads"
	"weft/store/pgstore"
	"weft/store/pgstore/pgtest"
)

// TestPostgresOneSessionPerConversationBehindTwoWefts: two wefts on one
// PostgreSQL database, each a context proxy, as two weft serve processes
// behind one address: a conversation begun through one and continued
// through the other stays one session, and the second's digest reaches
// the first's next request.
func TestPostgresOneSessionPerConversationBehindTwoWefts(t *testing.T) {
	url := pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv))
	var rigs [2]*proxyRig
	for i := range rigs {
		st, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		rigs[i] = newProxyRig(t, rigOptions{Store: st})
		rigs[i].up.setAnswer(answerText("Done."))
	}
	a, b := rigs[0], rigs[1]
	q1 := `{"role":"user","content":"Question one: what is a token bucket?"}`
	ans := `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`
	q2 := `{"role":"user","content":"Question two: size the burst."}`
	q3 := `{"role":"user","content":"Question three: and the refill?"}`
	// b carries another conversation first: the index of the sessions
	// the proxy started is read then, before a starts this one.
	b.post("/v1/messages", anBody(false, `{"role":"user","content":"Another conversation."}`), anHeaders)
	a.post("/v1/messages", anBody(false, q1), anHeaders)
	var sid string
	for deadline := time.Now().Add(5 * time.Second); sid == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		list, err := reads.ListSessions(a.svc, context.Background(), reads.ListSessionsArgs{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range list.Sessions {
			if strings.HasPrefix(x.Title, "Question one") {
				sid = x.SessionID
			}
		}
	}
	a.messages(sid, 2)
	b.post("/v1/messages", anBody(false, q1, ans, q2), anHeaders)
	b.messages(sid, 4)
	if n := b.sessions(); n != 2 {
		t.Fatalf("%d sessions after the conversation went on through the other weft, want 2 (it and the other conversation)", n)
	}
	// The operator digests the first exchange through b; a's next
	// request goes with it.
	zero, one := 0, 1
	if _, err := b.svc.DigestMessages(context.Background(), ops.DigestArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &zero, EndIdx: &one}, Summary: "Asked what a token bucket is."}); err != nil {
		t.Fatal(err)
	}
	a.post("/v1/messages", anBody(false, q1, ans, q2, ans, q3), anHeaders)
	up := lastAgentRequest(a)
	if !strings.Contains(up, "Asked what a token bucket is.") || strings.Contains(up, "Question one") {
		t.Errorf("a's request after b's digest:\n%.500s", up)
	}
	if n := a.sessions(); n != 2 {
		t.Errorf("%d sessions at the end, want 2", n)
	}
}
