package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"weft/formats"
	"weft/ops"
	"weft/ops/sessionmatch"
)

// Backend is where a face or a command runs the tools: in this process
// over a Service (Local), or on the weft that holds the file, through its
// listener (ops/relay's Remote). Every face and command goes through one,
// so a request gets the same result, and the same error, either way:
// errors a request caused are *ops.Error (test their kind with
// errors.Is).
type Backend interface {
	// Call runs a tool on JSON arguments, as the protocols carry them,
	// and gives its JSON result (as Encode writes it), and the result as
	// a Go value too where the backend has one (nil where it has only
	// the JSON: a remote weft's answer).
	Call(ctx context.Context, tool *Tool, args json.RawMessage) (json.RawMessage, any, error)
	// Invoke runs a tool on its own argument type (or a pointer to
	// one) and fills out, a pointer to its result type, so that what a
	// caller asks for itself is not encoded and decoded again in this
	// process.
	Invoke(ctx context.Context, tool *Tool, args, out any) error
	// Watch calls fn with every write's event until ctx ends. A watch
	// that may have missed writes (its stream of events broke, and
	// opened again) passes an event of kind EventGap.
	Watch(ctx context.Context, fn func(ops.Event))
	// SessionPage and MatchSessions read session records, for the
	// pickers of the faces (ops.Service's methods of the same names).
	SessionPage(ctx context.Context, a sessionmatch.PageArgs) (sessionmatch.Page, error)
	MatchSessions(ctx context.Context, a sessionmatch.Args) (sessionmatch.Result, error)
}

// EventGap is no write: a Watch passes it on when its stream of events
// opens again after a break, in which writes were missed.
const EventGap ops.EventKind = "gap"

// Local runs tools, and the whole-file work (Files), in this process,
// over Service.
type Local struct{ Service *ops.Service }

// Schema is the layout version of the service's store.
func (l Local) Schema() uint32 { return l.Service.Schema() }

// Call runs the tool here and encodes its result.
func (l Local) Call(ctx context.Context, tool *Tool, args json.RawMessage) (json.RawMessage, any, error) {
	res, err := tool.Call(ctx, l.Service, args)
	if err != nil {
		return nil, nil, err
	}
	out, err := formats.Encode(res)
	return out, res, err
}

// Invoke runs the tool here on typed arguments, its result into out.
func (l Local) Invoke(ctx context.Context, tool *Tool, args, out any) error {
	res, err := tool.Invoke(ctx, l.Service, args)
	if err != nil {
		return err
	}
	dst := reflect.ValueOf(out)
	if dst.Kind() != reflect.Pointer || dst.Elem().Type() != tool.ResultType {
		return fmt.Errorf("%s gives %s, not %T", tool.Name, tool.ResultType, out)
	}
	dst.Elem().Set(reflect.ValueOf(res))
	return nil
}

// Subscribe is the service's Subscribe: the events of every write from
// now on, until the function returned is called.
func (l Local) Subscribe() (<-chan ops.Event, func()) { return l.Service.Subscribe() }

// Watch follows the service's events.
func (l Local) Watch(ctx context.Context, fn func(ops.Event)) {
	events, stop := l.Service.Subscribe()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			fn(ev)
		}
	}
}

// SessionPage is the service's SessionPage.
func (l Local) SessionPage(ctx context.Context, a sessionmatch.PageArgs) (sessionmatch.Page, error) {
	return sessionmatch.PageOf(l.Service, ctx, a)
}

// MatchSessions is the service's MatchSessions.
func (l Local) MatchSessions(ctx context.Context, a sessionmatch.Args) (sessionmatch.Result, error) {
	return sessionmatch.Match(l.Service, ctx, a)
}
