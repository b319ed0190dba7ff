package ops

import (
	"context"
	"testing"
	"time"
)

// events drains what a subscription has received so far.
func events(ch <-chan Event) []Event {
	var out []Event
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		case <-time.After(50 * time.Millisecond):
			return out
		}
	}
}

// TestCreateSessionIsOneWrite: a new session is one write, announced once.
func TestCreateSessionIsOneWrite(t *testing.T) {
	f := newFixture(t)
	ch, done := f.svc.Subscribe()
	defer done()
	res, err := f.svc.CreateSession(context.Background(), CreateSessionArgs{Title: "one write"})
	if err != nil {
		t.Fatal(err)
	}
	evs := events(ch)
	if len(evs) != 1 || evs[0].Kind != EventSessionCreated || evs[0].SessionID != res.SessionID || evs[0].Version != 1 || evs[0].What != "created one write" {
		t.Fatalf("events %+v", evs)
	}
	info, v, err := f.svc.View(res.SessionID)
	if err != nil || info.Version != 1 || v.Len() != 0 {
		t.Fatalf("session %+v, view %v, %v", info, v, err)
	}
}
