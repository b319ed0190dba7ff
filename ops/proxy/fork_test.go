package proxy

import (
	"context"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
)

// An agent that rewinds (its next request edits an earlier prompt)
// departs from its session in the middle: the new path is stored as a
// fork of the old session at the last message they share, carrying the
// operator's digest there, and the old session is left as it was. The
// fork's next request goes with the digest.
func TestProxyForksARewoundConversation(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, rigOptions{})
	rig.up.setAnswer(answerText("Done."))
	q1 := `{"role":"user","content":"Question one: what is a token bucket?"}`
	a := `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`
	q2 := `{"role":"user","content":"Question two: size the burst."}`
	q3 := `{"role":"user","content":"Question three: and the refill?"}`
	rig.post("/v1/messages", anBody(false, q1), anHeaders)
	sid := rig.onlySession()
	rig.messages(sid, 2)
	rig.post("/v1/messages", anBody(false, q1, a, q2), anHeaders)
	rig.messages(sid, 4)
	rig.post("/v1/messages", anBody(false, q1, a, q2, a, q3), anHeaders)
	rig.messages(sid, 6)
	// The operator digests the first exchange.
	end := 1
	d, err := rig.svc.DigestMessages(ops.WithAuthor(context.Background(), "operator"), ops.DigestArgs{Selection: ops.Selection{SessionID: sid, StartIdx: new(0), EndIdx: &end}, Summary: "Asked what a token bucket is."})
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := rig.svc.View(sid)

	// The agent rewinds to after the first answer and asks otherwise.
	edited := `{"role":"user","content":"Question two, again: what about leaky buckets?"}`
	resp, _ := rig.post("/v1/messages", anBody(false, q1, a, edited), anHeaders)
	if n := rig.sessions(); n != 2 {
		t.Fatalf("%d sessions after the rewind, want the old one and its fork", n)
	}
	fork := resp.Header.Get(SessionHeader)
	if fork == "" || fork == sid {
		t.Fatalf("the rewind went to session %q (the old one is %s)", fork, sid)
	}
	rig.messages(fork, 4) // and its answer
	snap, err := rig.svc.Snapshot(fork)
	if err != nil {
		t.Fatal(err)
	}
	if f := snap.Info.ForkOf; f == nil || f.SessionID != sid || f.At != model.SyntheticID(d.OperationID, 0) || f.Index != 0 {
		t.Errorf("the new path's session says it came from %+v, want the old session at the digest's summary", snap.Info.ForkOf)
	}
	if len(snap.Ops) != 1 || snap.Ops[0].Type != model.OpDigest || snap.Ops[0].Payload.Summary != "Asked what a token bucket is." {
		t.Errorf("the fork carries %+v, want the operator's digest", snap.Ops)
	}
	after, _, _ := rig.svc.View(sid)
	if after.MessageCount != before.MessageCount || after.Version != before.Version {
		t.Errorf("the old session changed: %+v, was %+v", after, before)
	}
	// The fork's next request goes with the digest.
	rig.post("/v1/messages", anBody(false, q1, a, edited, a, q3), anHeaders)
	up := lastAgentRequest(rig)
	if !strings.Contains(up, "Asked what a token bucket is.") || strings.Contains(up, "Question one") {
		t.Errorf("the fork's next request did not go with the digest:\n%.600s", up)
	}
	if n := rig.sessions(); n != 2 {
		t.Errorf("%d sessions after the fork's next request, want 2", n)
	}
}

// Two conversations that only open alike (a Chat Completions client's
// system prompt, then each its own question) are two sessions, neither
// a fork of the other: nothing was answered that one of them rewound.
func TestProxyDoesNotForkConversationsThatOnlyOpenAlike(t *testing.T) {
	t.Parallel()
	rig := newProxyRig(t, rigOptions{})
	rig.up.setAnswer(answerText("Done."))
	body := func(msgs ...string) string {
		return `{"model":"gpt-test","messages":[` + strings.Join(msgs, ",") + `]}`
	}
	sys := `{"role":"system","content":"You are a careful assistant."}`
	first, _ := rig.post("/v1/chat/completions", body(sys, `{"role":"user","content":"First conversation."}`), nil)
	second, _ := rig.post("/v1/chat/completions", body(sys, `{"role":"user","content":"Another, unrelated conversation."}`), nil)
	a, b := first.Header.Get(SessionHeader), second.Header.Get(SessionHeader)
	if a == "" || b == "" || a == b {
		t.Fatalf("sessions %q and %q, want two", a, b)
	}
	snap, err := rig.svc.Snapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Info.ForkOf != nil {
		t.Errorf("the second conversation is a fork of %+v", snap.Info.ForkOf)
	}
}
