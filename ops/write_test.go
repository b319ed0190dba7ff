package ops_test

import (
	"context"
	"testing"

	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/tools/toolstest"
)

// TestCreateSessionIsOneWrite: a new session is one write, announced once.
func TestCreateSessionIsOneWrite(t *testing.T) {
	f := toolstest.New(t)
	ch, done := f.Svc.Subscribe()
	defer done()
	res, err := f.Svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "one write"})
	if err != nil {
		t.Fatal(err)
	}
	evs := opstest.Events(ch)
	if len(evs) != 1 || evs[0].Kind != ops.EventSessionCreated || evs[0].SessionID != res.SessionID || evs[0].Version != 1 || evs[0].What != "created one write" {
		t.Fatalf("events %+v", evs)
	}
	info, v, err := f.Svc.View(res.SessionID)
	if err != nil || info.Version != 1 || v.Len() != 0 {
		t.Fatalf("session %+v, view %v, %v", info, v, err)
	}
}
