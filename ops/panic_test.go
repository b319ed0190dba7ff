package ops_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/tools/toolstest"
	"weft/store"
)

// A handler that panics in the write path leaves the service, its lock
// and its other sessions going: the panic reaches the caller (the tool
// registry turns it into an internal error, a PanicError: ops/tools
// tests that), and the next write goes through.
func TestAPanicInTheWritePathLeavesTheServiceGoing(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("survives", 3)
	boom := func() (v any) {
		defer func() { v = recover() }()
		_, _ = f.Svc.Write(context.Background(), sid, nil, func(_ store.Tx, _ *ops.Thread, _ *model.Session) (*ops.Change, error) {
			panic("boom in the write path")
		})
		return nil
	}
	if v := boom(); fmt.Sprint(v) != "boom in the write path" {
		t.Fatalf("recovered %v, want the handler's panic", v)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Call("append_messages", `{"messages":[{"role":"user","content":"still here"}]}`)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the next write: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the next write hangs: the panic left the service locked")
	}
}
