// Package toolstest is opstest's fixture with the tool registry: the
// tests that reach the service as every face does call its tools by
// name, with JSON arguments, through ops/tools. (opstest itself cannot
// import the registry: ops/tools imports the rooms whose tests use it.)
package toolstest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"weft/ops/opstest"
	"weft/ops/tools"
)

// Fixture is an opstest.Fixture whose tools are called by name.
type Fixture struct {
	*opstest.Fixture
}

// New opens a fixture as opstest.New does.
func New(t *testing.T) *Fixture {
	t.Helper()
	return &Fixture{opstest.New(t)}
}

// Call runs a tool by name with JSON arguments, as every face does.
func (f *Fixture) Call(name string, args string) (any, error) {
	f.T.Helper()
	return f.CallContext(context.Background(), name, args)
}

// CallContext is Call within ctx (one that carries a sampler, say).
func (f *Fixture) CallContext(ctx context.Context, name string, args string) (any, error) {
	f.T.Helper()
	tool, ok := tools.Lookup(name)
	if !ok {
		f.T.Fatalf("no tool %s", name)
	}
	return tool.Call(ctx, f.Svc, json.RawMessage(args))
}

// MustCall is Call that must succeed.
func (f *Fixture) MustCall(name string, args string) any {
	f.T.Helper()
	res, err := f.Call(name, args)
	if err != nil {
		f.T.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

// CheckRefusal calls tool with JSON arguments args: the call must be
// refused with an error of kind (errors.Is) that says says, and leave
// the file as it was, and session sid at its version with its
// operations.
func (f *Fixture) CheckRefusal(t *testing.T, sid, tool, args string, kind error, says string) {
	t.Helper()
	before := f.FileHash()
	info, _, _ := f.Svc.View(sid)
	opsBefore, _ := f.Svc.Operations(sid)
	_, err := f.Call(tool, args)
	if err == nil {
		t.Fatalf("accepted; want an error saying %q", says)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error kind: %v, want %v", err, kind)
	}
	if !strings.Contains(err.Error(), says) {
		t.Errorf("error %q does not say %q", err, says)
	}
	if f.FileHash() != before {
		t.Errorf("the database file changed")
	}
	after, _, _ := f.Svc.View(sid)
	opsAfter, _ := f.Svc.Operations(sid)
	if after.Version != info.Version || len(opsAfter) != len(opsBefore) {
		t.Errorf("version %d -> %d, ops %d -> %d", info.Version, after.Version, len(opsBefore), len(opsAfter))
	}
}
