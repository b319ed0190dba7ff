package ingest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"weft/formats"
	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
)

// published drains the events a subscription holds. Each write of the
// service publishes its event before it returns, and an import's Close
// returns once its last write has: there is nothing later to wait for.
func published(ch <-chan ops.Event) []ops.Event {
	var out []ops.Event
	for {
		select {
		case e := <-ch:
			out = append(out, e)
		default:
			return out
		}
	}
}

// TestImportWritesEachBatchThroughTheWritePath: every batch of an import
// is one write of the service (one version, one event), the first one
// making the session, and what the cache shows afterwards is what the
// store holds.
func TestImportWritesEachBatchThroughTheWritePath(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ch, done := f.Svc.Subscribe()
	defer done()
	im := New(context.Background(), f.Svc, Options{})
	im.batchSize = 2
	if err := im.Begin(formats.ThreadInfo{Key: "k", Title: "batched", Source: formats.OpenAI}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		m := formats.Message{Key: fmt.Sprint(i), NewMessage: model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("message %d", i), CreatedAt: opstest.T0.Add(time.Duration(i) * time.Minute)}}
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
	evs := published(ch)
	want := []ops.EventKind{ops.EventSessionCreated, ops.EventAppended, ops.EventAppended}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, e := range evs {
		if e.Kind != want[i] || e.Version != uint64(i+1) || e.SessionID != sid || e.Author != "operator" {
			t.Errorf("event %d: %+v, want %s at version %d", i, e, want[i], i+1)
		}
	}
	info, v, err := f.Svc.View(sid)
	if err != nil || info.Version != 3 || info.MessageCount != 5 || v.Len() != 5 {
		t.Fatalf("after the import: %+v, %d items, %v", info, v.Len(), err)
	}
	// Importing again writes nothing and announces nothing.
	again := New(context.Background(), f.Svc, Options{})
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
	if evs := published(ch); len(evs) != 0 {
		t.Errorf("a re-import announced %+v", evs)
	}
	if info, _, _ := f.Svc.View(sid); info.Version != 3 {
		t.Errorf("a re-import moved the version to %d", info.Version)
	}
}
