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

// TestContextPreferencesAreWrittenAside: pending preferences go through
// the write path (an event says so) but are not a change to the thread:
// the version stays, and an assembly with nothing pending writes nothing.
func TestContextPreferencesAreWrittenAside(t *testing.T) {
	f := newFixture(t)
	sid := f.session("prefs", 10)
	before, _, _ := f.svc.View(sid)
	ch, done := f.svc.Subscribe()
	defer done()
	f.mustCall("request_context_slice", `{"start_message_index":2,"end_message_index":4}`)
	f.mustCall("assemble_context", `{}`)
	f.mustCall("assemble_context", `{}`) // nothing pending now
	evs := events(ch)
	if len(evs) != 2 || evs[0].Kind != EventPreferences || evs[1].Kind != EventPreferences {
		t.Fatalf("events %+v", evs)
	}
	for _, e := range evs {
		if e.Version != before.Version {
			t.Errorf("event %+v moved the version from %d", e, before.Version)
		}
	}
	if after, _, _ := f.svc.View(sid); after.Version != before.Version || len(after.Changes) != len(before.Changes) {
		t.Errorf("version %d → %d, changes %d → %d", before.Version, after.Version, len(before.Changes), len(after.Changes))
	}
}
