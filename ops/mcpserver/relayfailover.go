package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"weft/ops"
	"weft/ops/tools"
)

// RelayOptions configure a relay beyond the address it starts with.
type RelayOptions struct {
	// Token is the bearer token of the weft relayed to.
	Token string
	// Rediscover returns the address the weft holding the file lists now
	// (ReadAddrFile), or "": a relay whose weft stopped answering follows
	// a weft started since on another port.
	Rediscover func() string
	// Takeover opens the file in this process, for when no weft holds it
	// any more: the relay then serves in-process. It fails while another
	// weft still holds the file.
	Takeover func() (*ops.Service, error)
}

// NewRelayWith is NewRelay with a way on when the weft relayed to stops:
// on a connection that fails, the relay reads the address file again and
// calls the weft it names now, or, when the file is free, opens it itself
// and serves in-process (RelayOptions).
func NewRelayWith(target string, ro RelayOptions, opts Options) (*Server, error) {
	base, err := relayBase(target)
	if err != nil {
		return nil, err
	}
	b := &relayBackend{remote: newRemoteBackend(base, ro.Token), rediscover: ro.Rediscover, takeover: ro.Takeover}
	s := newServer(b, opts)
	b.logger = s.logger
	return s, nil
}

// relayBackend is a relay's backend: the holding weft's API while it
// answers, then the weft that holds the file now, or the file itself.
type relayBackend struct {
	remote     *remoteBackend
	rediscover func() string
	takeover   func() (*ops.Service, error)
	logger     interface {
		Warn(msg string, args ...any)
		Info(msg string, args ...any)
	}

	mu    sync.Mutex
	local *localBackend // set once the relay serves the file itself
}

func (b *relayBackend) inProcess() *localBackend {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.local
}

// direct is what the relay calls through: the weft relayed to, or the
// file itself once the relay has taken it over.
type direct interface {
	call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (json.RawMessage, any, error)
	invoke(ctx context.Context, tool *tools.Tool, args, out any) error
	sessionPicker
}

// either runs a request where the relay calls now and, when that weft did
// not answer, once more where it turned to. Only a request that never
// reached the weft is sent again: one that broke on the way may have been
// applied.
func (b *relayBackend) either(do func(direct) error) error {
	if l := b.inProcess(); l != nil {
		return do(l)
	}
	before := b.remote.target()
	err := do(b.remote)
	if unreachable(err) && b.failover(before) {
		if l := b.inProcess(); l != nil {
			return do(l)
		}
		return do(b.remote)
	}
	return err
}

func (b *relayBackend) call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (out json.RawMessage, value any, err error) {
	err = b.either(func(d direct) error {
		out, value, err = d.call(ctx, tool, args)
		return err
	})
	return out, value, err
}

func (b *relayBackend) invoke(ctx context.Context, tool *tools.Tool, args, out any) error {
	return b.either(func(d direct) error { return d.invoke(ctx, tool, args, out) })
}

// failover finds where to go after the weft at before stopped answering:
// the address the file lists now, if it is another, else the file
// itself. It reports whether there is somewhere new to call.
func (b *relayBackend) failover(before string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.local != nil || b.remote.target() != before {
		return true // another call found the way already
	}
	if b.rediscover != nil {
		if addr := b.rediscover(); addr != "" {
			if base, err := relayBase(addr); err == nil && base != before {
				b.remote.moveTo(base)
				b.logger.Info("relaying to the weft that holds the file now", "url", base)
				return true
			}
		}
	}
	if b.takeover == nil {
		return false
	}
	svc, err := b.takeover()
	if err != nil {
		b.logger.Warn("the weft relayed to is gone, and the file is not free", "url", before, "error", err)
		return false
	}
	b.local = &localBackend{svc}
	b.logger.Info("the weft relayed to is gone: serving the file in-process", "url", before)
	return true
}

// unreachable reports whether err is a connection that could not be made:
// the request never reached a weft.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// watch follows the events of wherever the relay calls: the holder's
// /events, or the file's own once the relay serves it. A stream that
// broke is opened again at once, then every eventsRetry; one that opens
// after a break starts with an eventGap, since writes in the break were
// missed. Only a call takes the file over: the watch follows a weft
// started on another port, and otherwise waits, so that the weft
// restarting gets its file back.
func (b *relayBackend) watch(ctx context.Context, fn func(ops.Event)) {
	own := apiOrigin + b.remote.id + "/"
	broke := false
	relayed := func(ev ops.Event) {
		if o, ok := strings.CutPrefix(ev.Origin, own); ok {
			ev.Origin = o
		} else if ev.Origin != "" {
			ev.Origin = heldOrigin + ev.Origin
		}
		fn(ev)
	}
	opened := func() {
		if broke {
			fn(ops.Event{Kind: eventGap})
		}
	}
	for failures := 0; ctx.Err() == nil; {
		if l := b.inProcess(); l != nil {
			if broke {
				fn(ops.Event{Kind: eventGap})
			}
			l.watch(ctx, fn)
			return
		}
		before := b.remote.target()
		read, err := b.remote.readEvents(ctx, opened, relayed)
		if ctx.Err() != nil {
			return
		}
		broke = true
		if read {
			failures = 0
		} else {
			failures++
		}
		if unreachable(err) && b.follow(before) {
			continue
		}
		if failures == 0 {
			continue // it was open: try again at once
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(eventsRetry):
		}
	}
}

// follow points the relay at the address the file lists now, if it is
// not before, and reports whether it did or another call moved it.
func (b *relayBackend) follow(before string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.local != nil || b.remote.target() != before {
		return true
	}
	if b.rediscover == nil {
		return false
	}
	if addr := b.rediscover(); addr != "" {
		if base, err := relayBase(addr); err == nil && base != before {
			b.remote.moveTo(base)
			return true
		}
	}
	return false
}
