package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/store"
)

// Arguments at the edges of their types are refused with a clear error,
// never a panic that takes the process down.
func TestHostileArgumentsAreRefused(t *testing.T) {
	f := newFixture(t)
	f.session("hostile", 30)
	for _, args := range []string{
		fmt.Sprintf(`{"timestamp":%q,"count":9223372036854775807,"before_ratio":1}`, at(5)),
		fmt.Sprintf(`{"timestamp":%q,"count":9223372036854775807,"before_ratio":0.5}`, at(5)),
		fmt.Sprintf(`{"timestamp":%q,"count":4611686018427387904,"before_ratio":1e-300}`, at(5)),
	} {
		_, err := f.call("get_turns_around", args)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "count") {
			t.Errorf("get_turns_around %s: %v, want a refusal about count", args, err)
		}
	}
}

// A handler that panics in the write path leaves the service, its lock
// and its other sessions going: the panic reaches the caller (the tool
// registry turns it into an internal error, a PanicError: ops/tools
// tests that), and the next write goes through.
func TestAPanicInTheWritePathLeavesTheServiceGoing(t *testing.T) {
	f := newFixture(t)
	sid := f.session("survives", 3)
	boom := func() (v any) {
		defer func() { v = recover() }()
		_, _ = f.svc.Write(context.Background(), sid, nil, func(_ *store.Tx, _ *Thread, _ *model.Session) (*Change, error) {
			panic("boom in the write path")
		})
		return nil
	}
	if v := boom(); fmt.Sprint(v) != "boom in the write path" {
		t.Fatalf("recovered %v, want the handler's panic", v)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.call("append_messages", `{"messages":[{"role":"user","content":"still here"}]}`)
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
