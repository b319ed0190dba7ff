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

// A tool that panics answers an internal error; the service, its lock
// and its other sessions go on.
func TestAPanickingToolIsAnError(t *testing.T) {
	f := newFixture(t)
	sid := f.session("survives", 3)
	boom := def("boom", "panics", readOnly, func(s *Service, ctx context.Context, a ListSessionsArgs) (ListSessionsResult, error) {
		_, err := s.Write(ctx, sid, nil, func(_ *store.Tx, _ *Thread, _ *model.Session) (*Change, error) {
			panic("boom in the write path")
		})
		return ListSessionsResult{}, err
	})
	_, err := boom.Call(context.Background(), f.svc, []byte(`{}`))
	var pe *PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "internal error in boom") || !strings.Contains(string(pe.Stack), "panic_test.go") {
		t.Fatalf("error %v (%T), want a PanicError naming the tool with its stack", err, err)
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
