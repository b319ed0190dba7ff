package ops

import (
	"context"
	"fmt"
	"testing"
	"time"

	"weft/formats"
	"weft/model"
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

// TestImportWritesEachBatchThroughTheWritePath: every batch of an import
// is one write of the service (one version, one event), the first one
// making the session, and what the cache shows afterwards is what the
// store holds.
func TestImportWritesEachBatchThroughTheWritePath(t *testing.T) {
	f := newFixture(t)
	ch, done := f.svc.Subscribe()
	defer done()
	im := f.svc.NewImport(context.Background(), ImportOptions{})
	im.batchSize = 2
	if err := im.Begin(formats.ThreadInfo{Key: "k", Title: "batched", Source: formats.OpenAI}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		m := formats.Message{Key: fmt.Sprint(i), NewMessage: model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("message %d", i), CreatedAt: t0.Add(time.Duration(i) * time.Minute)}}
		if err := im.Message(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := im.End(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, im)
	if len(im.Sessions) != 1 || im.Sessions[0].Added != 5 || !im.Sessions[0].Created {
		t.Fatalf("report %+v", im.Sessions)
	}
	sid := im.Sessions[0].SessionID
	evs := events(ch)
	want := []EventKind{EventSessionCreated, EventAppended, EventAppended}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, e := range evs {
		if e.Kind != want[i] || e.Version != uint64(i+1) || e.SessionID != sid || e.Author != "operator" {
			t.Errorf("event %d: %+v, want %s at version %d", i, e, want[i], i+1)
		}
	}
	info, v, err := f.svc.View(sid)
	if err != nil || info.Version != 3 || info.MessageCount != 5 || v.Len() != 5 {
		t.Fatalf("after the import: %+v, %d items, %v", info, v.Len(), err)
	}
	// Importing again writes nothing and announces nothing.
	again := f.svc.NewImport(context.Background(), ImportOptions{})
	again.batchSize = 2
	if err := again.Begin(formats.ThreadInfo{Key: "k", Title: "batched", Source: formats.OpenAI}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := again.Message(formats.Message{Key: fmt.Sprint(i), NewMessage: model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("message %d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := again.End(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, again)
	if evs := events(ch); len(evs) != 0 {
		t.Errorf("a re-import announced %+v", evs)
	}
	if info, _, _ := f.svc.View(sid); info.Version != 3 {
		t.Errorf("a re-import moved the version to %d", info.Version)
	}
}
