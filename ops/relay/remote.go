// Package relay is a second weft process's way to the weft that holds
// the file: Remote runs the tools (tools.Backend) and the command line's
// whole-file work (tools.Files) there, through its listener, and follows
// the file when that weft stops; HolderFace is the holder's side of the
// whole-file endpoints, so that both ends of their wire are here. The
// tools' own endpoints (/api, /events, /sessions/...) are the MCP face's
// (ops/mcpserver), under the names both sides share (ops/httpx).
package relay

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/tools"
)

// The relay's way on when the weft it calls stops answering: events
// are read again after Options.EventsRetry, and the writes of others are told
// from its own by their origin.
const (
	// eventsRetry is how long a relay waits by default before it opens
	// the stream of events again after it broke.
	eventsRetry = time.Second
	// heldOrigin starts the origin of a write a relay did not send.
	heldOrigin = "held/"
)

// Options configure a Remote beyond the address it starts with.
type Options struct {
	// Token is the bearer token of the weft called.
	Token string
	// Rediscover returns the address the weft holding the file lists now
	// (listen.ReadAddrFile), or "": a relay whose weft stopped answering
	// follows a weft started since on another port. Nil follows none.
	Rediscover func() string
	// Takeover opens the file in this process, for when no weft holds it
	// any more: the relay then serves in-process. It fails while another
	// weft still holds the file. Nil takes nothing over.
	Takeover func() (*ops.Service, error)
	// Logger is told where the relay turns; nil discards it.
	Logger *slog.Logger
	// EventsRetry is how long Watch waits before it opens the stream of
	// events again after it broke and could not be opened at once; 0 is
	// a second.
	EventsRetry time.Duration
}

// Dial returns the Remote of the weft listening at target (its /mcp URL
// or base URL, as the address file next to the database names it). It
// dials nothing yet: each call does.
func Dial(target string, o Options) (*Remote, error) {
	base, err := baseOf(target)
	if err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Remote{remote: newClient(base, o.Token), rediscover: o.Rediscover, takeover: o.Takeover, logger: logger, eventsRetry: cmp.Or(o.EventsRetry, eventsRetry)}, nil
}

// Remote runs tools, and the whole-file work, on the weft that holds the
// file, through its listener's HTTP API: how a second weft process uses
// a database the first one holds, the remote tools.Backend and
// tools.Files. Errors are *ops.Error of the same kind as in-process.
// With Options' ways on, it follows the file when that weft stops: to
// the weft that holds it now, or the file itself.
//
// A relay cannot lend its client's model to the other weft, so
// summarize_message_range falls back to what that weft has configured;
// its clients' names still reach the operation log, through the author
// header.
type Remote struct {
	remote     *client
	rediscover func() string
	takeover   func() (*ops.Service, error)
	logger     *slog.Logger
	// eventsRetry: Options.EventsRetry, or its default.
	eventsRetry time.Duration

	mu    sync.Mutex
	local *tools.Local // set once the relay serves the file itself
}

func (b *Remote) inProcess() *tools.Local {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.local
}

// direct is what the relay calls through: the weft relayed to, or the
// file itself once the relay has taken it over.
type direct interface {
	Call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (json.RawMessage, any, error)
	Invoke(ctx context.Context, tool *tools.Tool, args, out any) error
	SessionPage(ctx context.Context, a ops.SessionPageArgs) (ops.SessionPage, error)
	MatchSessions(ctx context.Context, a ops.MatchSessionsArgs) (ops.MatchSessionsResult, error)
	tools.Files
}

// either runs a request where the relay calls now and, when that weft did
// not answer, once more where it turned to. Only a request that never
// reached the weft is sent again: one that broke on the way may have been
// applied.
func (b *Remote) either(do func(direct) error) error {
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

// Call runs a tool where the relay calls now.
func (b *Remote) Call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (out json.RawMessage, value any, err error) {
	err = b.either(func(d direct) error {
		out, value, err = d.Call(ctx, tool, args)
		return err
	})
	return out, value, err
}

// Invoke runs a tool on typed arguments where the relay calls now.
func (b *Remote) Invoke(ctx context.Context, tool *tools.Tool, args, out any) error {
	return b.either(func(d direct) error { return d.Invoke(ctx, tool, args, out) })
}

// SessionPage reads a page of session records where the relay calls now.
func (b *Remote) SessionPage(ctx context.Context, a ops.SessionPageArgs) (out ops.SessionPage, err error) {
	err = b.either(func(d direct) error {
		out, err = d.SessionPage(ctx, a)
		return err
	})
	return out, err
}

// MatchSessions matches sessions where the relay calls now.
func (b *Remote) MatchSessions(ctx context.Context, a ops.MatchSessionsArgs) (out ops.MatchSessionsResult, err error) {
	err = b.either(func(d direct) error {
		out, err = d.MatchSessions(ctx, a)
		return err
	})
	return out, err
}

// Outline is the outline, where the relay calls now.
func (b *Remote) Outline(ctx context.Context, ref string) (out tools.Outline, err error) {
	err = b.either(func(d direct) error {
		out, err = d.Outline(ctx, ref)
		return err
	})
	return out, err
}

// Export is the export, where the relay calls now.
func (b *Remote) Export(ctx context.Context, w io.Writer, args tools.ExportArgs) (notes []string, err error) {
	err = b.either(func(d direct) error {
		notes, err = d.Export(ctx, w, args)
		return err
	})
	return notes, err
}

// Import is the import, where the relay calls now.
func (b *Remote) Import(ctx context.Context, r io.Reader, args tools.ImportArgs, progress tools.Progress) (rep tools.ImportReport, err error) {
	err = b.either(func(d direct) error {
		rep, err = d.Import(ctx, r, args, progress)
		return err
	})
	return rep, err
}

// failover finds where to go after the weft at before stopped answering:
// the address the file lists now, if it is another, else the file
// itself. It reports whether there is somewhere new to call.
func (b *Remote) failover(before string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.local != nil || b.remote.target() != before {
		return true // another call found the way already
	}
	if b.rediscover != nil {
		if addr := b.rediscover(); addr != "" {
			if base, err := baseOf(addr); err == nil && base != before {
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
	b.local = &tools.Local{Service: svc}
	b.logger.Info("the weft relayed to is gone: serving the file in-process", "url", before)
	return true
}

// unreachable reports whether err is a connection that could not be made:
// the request never reached a weft.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Watch follows the events of wherever the relay calls: the holder's
// /events, or the file's own once the relay serves it. A stream that
// broke is opened again at once, then every b.eventsRetry; one that opens
// after a break starts with an eventGap, since writes in the break were
// missed. Only a call takes the file over: the watch follows a weft
// started on another port, and otherwise waits, so that the weft
// restarting gets its file back.
func (b *Remote) Watch(ctx context.Context, fn func(ops.Event)) {
	own := httpx.APIOrigin + b.remote.id + "/"
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
			fn(ops.Event{Kind: tools.EventGap})
		}
	}
	for failures := 0; ctx.Err() == nil; {
		if l := b.inProcess(); l != nil {
			if broke {
				fn(ops.Event{Kind: tools.EventGap})
			}
			l.Watch(ctx, fn)
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
		case <-time.After(b.eventsRetry):
		}
	}
}

// follow points the relay at the address the file lists now, if it is
// not before, and reports whether it did or another call moved it.
func (b *Remote) follow(before string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.local != nil || b.remote.target() != before {
		return true
	}
	if b.rediscover == nil {
		return false
	}
	if addr := b.rediscover(); addr != "" {
		if base, err := baseOf(addr); err == nil && base != before {
			b.remote.moveTo(base)
			return true
		}
	}
	return false
}
