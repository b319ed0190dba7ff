// Package relay is a second weft process's way to the weft that holds
// the file: Remote runs the tools (tools.Backend), the command line's
// whole-file work (tools.Files) and what the operator's own client reads
// and does (tools.Desk) there, through its listener, and follows the
// file when that weft stops; HolderFace is the holder's side of the
// whole-file and Desk endpoints, so that both ends of their wire are
// here. The
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
	"net/url"
	"strings"
	"sync"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/fork"
	"weft/ops/httpx"
	"weft/ops/memory"
	"weft/ops/reads"
	"weft/ops/search"
	"weft/ops/sessionmatch"
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
	r := &Remote{remote: newClient(base, o.Token), rediscover: o.Rediscover, takeover: o.Takeover, logger: logger, eventsRetry: cmp.Or(o.EventsRetry, eventsRetry)}
	r.defaults.idle = sync.NewCond(&r.defaults.mu)
	return r, nil
}

// Remote runs tools, the whole-file work and the Desk's calls on the
// weft that holds the file, through its listener's HTTP API: how a
// second weft process uses a database the first one holds, the remote
// tools.Backend, tools.Files and tools.Desk. Errors are *ops.Error of the same kind as in-process.
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

	defaults defaultSession // what SetDefaultSession sends
}

var _ tools.Desk = (*Remote)(nil)

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
	SessionPage(ctx context.Context, a sessionmatch.PageArgs) (sessionmatch.Page, error)
	MatchSessions(ctx context.Context, a sessionmatch.Args) (sessionmatch.Result, error)
	tools.Files
	deskCalls
}

// deskCalls are tools.Desk's calls but Watch, which Remote makes itself.
type deskCalls interface {
	View(ref string) (model.Session, *model.View, error)
	Messages(ref string, seqs []uint64) ([]model.Message, error)
	Operations(ref string) ([]model.Op, error)
	Timeline(ref string, n int) (ops.Timeline, error)
	ItemAt(ref, when string, base time.Time) (int, time.Time, error)
	SessionSpan(id string) (first, latest time.Time, err error)
	ListSessions(ctx context.Context, a reads.ListSessionsArgs) (reads.ListSessionsResult, error)
	ListOperations(ctx context.Context, a reads.ListOperationsArgs) (reads.ListOperationsResult, error)
	DiffSession(ctx context.Context, a reads.DiffSessionArgs) (reads.DiffSessionResult, error)
	PrepareSearch(ref string) error
	SubstringLines(ref, query string, limit int) (hits []search.LineHit, ids []model.ItemID, total int, err error)
	FuzzyLines(ref, query string, prev *search.FuzzyState, limit int) (hits []search.LineHit, ids []model.ItemID, next *search.FuzzyState, err error)
	FilterItems(v *model.View, f search.ItemFilter) ([]int, error)
	TagMessages(ctx context.Context, a ops.TagArgs) (ops.TagResult, error)
	DigestMessages(ctx context.Context, a ops.DigestArgs) (ops.OpResult, error)
	ReviseMessages(ctx context.Context, a ops.ReviseArgs) (ops.OpResult, error)
	SnipMessages(ctx context.Context, a ops.SnipArgs) (ops.OpResult, error)
	ResequenceMessages(ctx context.Context, a ops.ResequenceArgs) (ops.OpResult, error)
	InsertMessages(ctx context.Context, a ops.InsertArgs) (ops.OpResult, error)
	ToggleOperation(ctx context.Context, a ops.ToggleArgs) (ops.SuccessResult, error)
	RevertOperation(ctx context.Context, a ops.OperationArgs) (ops.SuccessResult, error)
	RestoreOperation(ctx context.Context, a ops.OperationArgs) (ops.SuccessResult, error)
	SummarizeMessageRange(ctx context.Context, a ops.SummarizeArgs) (ops.SummarizeResult, error)
	RenameSession(ctx context.Context, a ops.RenameSessionArgs) (ops.SessionChangeResult, error)
	ForkSession(ctx context.Context, a fork.Args) (fork.Result, error)
	DeleteSession(ctx context.Context, a ops.DeleteSessionArgs) (ops.SessionChangeResult, error)
	GetMemoryPolicy(ctx context.Context, a memory.MemoryPolicyArgs) (memory.MemoryPolicyResult, error)
	SetMemoryPolicy(ctx context.Context, a memory.SetMemoryPolicyArgs) (memory.MemoryPolicyResult, error)
	SetDefaultSession(id string)
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
func (b *Remote) SessionPage(ctx context.Context, a sessionmatch.PageArgs) (out sessionmatch.Page, err error) {
	err = b.either(func(d direct) error {
		out, err = d.SessionPage(ctx, a)
		return err
	})
	return out, err
}

// MatchSessions matches sessions where the relay calls now.
func (b *Remote) MatchSessions(ctx context.Context, a sessionmatch.Args) (out sessionmatch.Result, err error) {
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
// broke is opened again at once, then every b.eventsRetry; when that
// first try fails, an EventLost says the holder is not answering, and
// one that opens after a break starts with an EventGap, since writes in
// the break were missed. Only a call takes the file over: the watch follows a weft
// started on another port, and otherwise waits, so that the weft
// restarting gets its file back.
func (b *Remote) Watch(ctx context.Context, fn func(ops.Event)) { b.WatchOpened(ctx, fn, nil) }

// WatchOpened is Watch, calling ready (if not nil) once the stream has
// opened, once its first try failed, or once the relay serves the file
// itself: from then on a write is heard, or said as a gap. ready says
// whether it was still waited for: a stream that opens after the caller
// stopped waiting says a gap too.
func (b *Remote) WatchOpened(ctx context.Context, fn func(ops.Event), ready func() (waited bool)) {
	var once sync.Once
	waited := true
	isReady := func() bool {
		once.Do(func() {
			if ready != nil {
				waited = ready()
			}
		})
		return waited
	}
	defer isReady()
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
		if !isReady() || broke {
			fn(ops.Event{Kind: tools.EventGap})
		}
	}
	for failures := 0; ctx.Err() == nil; {
		if l := b.inProcess(); l != nil {
			if !isReady() || broke {
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
		isReady() // it broke, or never opened: a gap is said when it does
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
		if failures == 1 {
			fn(ops.Event{Kind: tools.EventLost}) // once a break, until it opens again
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

// Addr is where the weft the relay calls now listens (host:port), or ""
// once the relay serves the file itself.
func (b *Remote) Addr() string {
	if b.inProcess() != nil {
		return ""
	}
	base := b.remote.target()
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		return u.Host
	}
	return base
}

// through runs a call of the Desk where the relay calls now (either).
func through[R any](b *Remote, do func(direct) (R, error)) (out R, err error) {
	err = b.either(func(d direct) error {
		out, err = do(d)
		return err
	})
	return out, err
}

// View is the view of session ref, where the relay calls now.
func (b *Remote) View(ref string) (info model.Session, v *model.View, err error) {
	err = b.either(func(d direct) error {
		info, v, err = d.View(ref)
		return err
	})
	return info, v, err
}

// Messages are stored messages, where the relay calls now.
func (b *Remote) Messages(ref string, seqs []uint64) ([]model.Message, error) {
	return through(b, func(d direct) ([]model.Message, error) { return d.Messages(ref, seqs) })
}

// Operations are a session's operations, where the relay calls now.
func (b *Remote) Operations(ref string) ([]model.Op, error) {
	return through(b, func(d direct) ([]model.Op, error) { return d.Operations(ref) })
}

// Timeline is a session's timeline, where the relay calls now.
func (b *Remote) Timeline(ref string, n int) (ops.Timeline, error) {
	return through(b, func(d direct) (ops.Timeline, error) { return d.Timeline(ref, n) })
}

// ItemAt is the item at a time, where the relay calls now.
func (b *Remote) ItemAt(ref, when string, base time.Time) (i int, at time.Time, err error) {
	err = b.either(func(d direct) error {
		i, at, err = d.ItemAt(ref, when, base)
		return err
	})
	return i, at, err
}

// SessionSpan is a session's span, where the relay calls now.
func (b *Remote) SessionSpan(id string) (first, latest time.Time, err error) {
	err = b.either(func(d direct) error {
		first, latest, err = d.SessionSpan(id)
		return err
	})
	return first, latest, err
}

// ListSessions is list_sessions, where the relay calls now.
func (b *Remote) ListSessions(ctx context.Context, a reads.ListSessionsArgs) (reads.ListSessionsResult, error) {
	return through(b, func(d direct) (reads.ListSessionsResult, error) { return d.ListSessions(ctx, a) })
}

// ListOperations is list_operations, where the relay calls now.
func (b *Remote) ListOperations(ctx context.Context, a reads.ListOperationsArgs) (reads.ListOperationsResult, error) {
	return through(b, func(d direct) (reads.ListOperationsResult, error) { return d.ListOperations(ctx, a) })
}

// DiffSession is diff_session, where the relay calls now.
func (b *Remote) DiffSession(ctx context.Context, a reads.DiffSessionArgs) (reads.DiffSessionResult, error) {
	return through(b, func(d direct) (reads.DiffSessionResult, error) { return d.DiffSession(ctx, a) })
}

// PrepareSearch readies a session's text for searches, where the relay
// calls now.
func (b *Remote) PrepareSearch(ref string) error {
	return b.either(func(d direct) error { return d.PrepareSearch(ref) })
}

// SubstringLines searches where the relay calls now.
func (b *Remote) SubstringLines(ref, query string, limit int) (hits []search.LineHit, ids []model.ItemID, total int, err error) {
	err = b.either(func(d direct) error {
		hits, ids, total, err = d.SubstringLines(ref, query, limit)
		return err
	})
	return hits, ids, total, err
}

// FuzzyLines searches where the relay calls now.
func (b *Remote) FuzzyLines(ref, query string, prev *search.FuzzyState, limit int) (hits []search.LineHit, ids []model.ItemID, next *search.FuzzyState, err error) {
	err = b.either(func(d direct) error {
		hits, ids, next, err = d.FuzzyLines(ref, query, prev, limit)
		return err
	})
	return hits, ids, next, err
}

// FilterItems picks items where the relay calls now.
func (b *Remote) FilterItems(v *model.View, f search.ItemFilter) ([]int, error) {
	return through(b, func(d direct) ([]int, error) { return d.FilterItems(v, f) })
}

// TagMessages tags, where the relay calls now.
func (b *Remote) TagMessages(ctx context.Context, a ops.TagArgs) (ops.TagResult, error) {
	return through(b, func(d direct) (ops.TagResult, error) { return d.TagMessages(ctx, a) })
}

// DigestMessages digests, where the relay calls now.
func (b *Remote) DigestMessages(ctx context.Context, a ops.DigestArgs) (ops.OpResult, error) {
	return through(b, func(d direct) (ops.OpResult, error) { return d.DigestMessages(ctx, a) })
}

// ReviseMessages revises, where the relay calls now.
func (b *Remote) ReviseMessages(ctx context.Context, a ops.ReviseArgs) (ops.OpResult, error) {
	return through(b, func(d direct) (ops.OpResult, error) { return d.ReviseMessages(ctx, a) })
}

// SnipMessages snips, where the relay calls now.
func (b *Remote) SnipMessages(ctx context.Context, a ops.SnipArgs) (ops.OpResult, error) {
	return through(b, func(d direct) (ops.OpResult, error) { return d.SnipMessages(ctx, a) })
}

// ResequenceMessages reorders, where the relay calls now.
func (b *Remote) ResequenceMessages(ctx context.Context, a ops.ResequenceArgs) (ops.OpResult, error) {
	return through(b, func(d direct) (ops.OpResult, error) { return d.ResequenceMessages(ctx, a) })
}

// InsertMessages inserts, where the relay calls now.
func (b *Remote) InsertMessages(ctx context.Context, a ops.InsertArgs) (ops.OpResult, error) {
	return through(b, func(d direct) (ops.OpResult, error) { return d.InsertMessages(ctx, a) })
}

// ToggleOperation switches an operation, where the relay calls now.
func (b *Remote) ToggleOperation(ctx context.Context, a ops.ToggleArgs) (ops.SuccessResult, error) {
	return through(b, func(d direct) (ops.SuccessResult, error) { return d.ToggleOperation(ctx, a) })
}

// RevertOperation reverts an operation, where the relay calls now.
func (b *Remote) RevertOperation(ctx context.Context, a ops.OperationArgs) (ops.SuccessResult, error) {
	return through(b, func(d direct) (ops.SuccessResult, error) { return d.RevertOperation(ctx, a) })
}

// RestoreOperation restores a reverted operation, where the relay calls
// now.
func (b *Remote) RestoreOperation(ctx context.Context, a ops.OperationArgs) (ops.SuccessResult, error) {
	return through(b, func(d direct) (ops.SuccessResult, error) { return d.RestoreOperation(ctx, a) })
}

// SummarizeMessageRange summarizes, where the relay calls now.
func (b *Remote) SummarizeMessageRange(ctx context.Context, a ops.SummarizeArgs) (ops.SummarizeResult, error) {
	return through(b, func(d direct) (ops.SummarizeResult, error) { return d.SummarizeMessageRange(ctx, a) })
}

// ForkSession forks a session, where the relay calls now.
func (b *Remote) ForkSession(ctx context.Context, a fork.Args) (fork.Result, error) {
	return through(b, func(d direct) (fork.Result, error) { return d.ForkSession(ctx, a) })
}

// RenameSession renames a session, where the relay calls now.
func (b *Remote) RenameSession(ctx context.Context, a ops.RenameSessionArgs) (ops.SessionChangeResult, error) {
	return through(b, func(d direct) (ops.SessionChangeResult, error) { return d.RenameSession(ctx, a) })
}

// GetMemoryPolicy reads a session's memory policy, where the relay
// calls now.
func (b *Remote) GetMemoryPolicy(ctx context.Context, a memory.MemoryPolicyArgs) (memory.MemoryPolicyResult, error) {
	return through(b, func(d direct) (memory.MemoryPolicyResult, error) { return d.GetMemoryPolicy(ctx, a) })
}

// SetMemoryPolicy sets a memory policy, where the relay calls now.
func (b *Remote) SetMemoryPolicy(ctx context.Context, a memory.SetMemoryPolicyArgs) (memory.MemoryPolicyResult, error) {
	return through(b, func(d direct) (memory.MemoryPolicyResult, error) { return d.SetMemoryPolicy(ctx, a) })
}

// DeleteSession deletes a session, where the relay calls now.
func (b *Remote) DeleteSession(ctx context.Context, a ops.DeleteSessionArgs) (ops.SessionChangeResult, error) {
	return through(b, func(d direct) (ops.SessionChangeResult, error) { return d.DeleteSession(ctx, a) })
}

// SetDefaultSession names the default session where the relay calls
// now, from a goroutine of its own, so that it never waits on the
// network: names given while one is on its way are sent after it, the
// latest only. Settle waits for them.
func (b *Remote) SetDefaultSession(id string) {
	d := &b.defaults
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next, d.pending = id, true
	if d.sending {
		return
	}
	d.sending = true
	go func() {
		for {
			d.mu.Lock()
			if !d.pending {
				d.sending = false
				d.idle.Broadcast()
				d.mu.Unlock()
				return
			}
			id := d.next
			d.pending = false
			d.mu.Unlock()
			_ = b.either(func(to direct) error {
				to.SetDefaultSession(id)
				return nil
			})
		}
	}()
}

// Settle waits until the default session named last has been sent.
func (b *Remote) Settle() {
	d := &b.defaults
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.sending {
		d.idle.Wait()
	}
}

// defaultSession is what SetDefaultSession has still to send.
type defaultSession struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when nothing is on its way
	next    string
	pending bool // next is still to be sent
	sending bool // a goroutine sends
}
