package tools

import (
	"context"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/fork"
	"weft/ops/memory"
	"weft/ops/reads"
	"weft/ops/search"
)

// Desk is what the operator's own client — weft's terminal interface —
// reads and does with a file: a session's effective view whole, the
// stored messages it shows, its operations and timeline, searches by
// line, the operator's edits (restoring a reverted operation too, which
// no tool does) and the file's events. Local serves it over a Service in
// this process; ops/relay's Remote serves it through the weft that holds
// the file, with the same results and the same errors (*ops.Error of the
// same kind), so the client cannot tell them apart but by speed.
//
// Each method is the ops.Service method of the same name, or the read
// of ops/reads or ops/search it names; a write without an author in its
// context is the operator's.
type Desk interface {
	// View is the session ref names (ID, unique prefix or title; "" the
	// default), and its effective view.
	View(ref string) (model.Session, *model.View, error)
	// Messages are the stored messages seqs of session ref.
	Messages(ref string, seqs []uint64) ([]model.Message, error)
	// Operations are session ref's operations, in the order made.
	Operations(ref string) ([]model.Op, error)
	// Timeline counts session ref's messages in n spans of time.
	Timeline(ref string, n int) (ops.Timeline, error)
	// ItemAt is the item at a time, read as every face reads times
	// (ops.Service.ItemAt).
	ItemAt(ref, when string, base time.Time) (int, time.Time, error)
	// SessionSpan is when session id's first and latest messages were
	// made.
	SessionSpan(id string) (first, latest time.Time, err error)
	// ListSessions and ListOperations are the reads of the tools of
	// those names.
	ListSessions(ctx context.Context, a reads.ListSessionsArgs) (reads.ListSessionsResult, error)
	ListOperations(ctx context.Context, a reads.ListOperationsArgs) (reads.ListOperationsResult, error)
	// DiffSession is diff_session's read: the stored thread against the
	// effective one.
	DiffSession(ctx context.Context, a reads.DiffSessionArgs) (reads.DiffSessionResult, error)

	// PrepareSearch reads session ref's text for searches, so that the
	// first search does not wait for it (search.Prepare).
	PrepareSearch(ref string) error
	// SubstringLines and FuzzyLines are ops/search's, with the hits'
	// item IDs; FuzzyLines' state may be nil (where it cannot be kept),
	// and a nil prev searches afresh.
	SubstringLines(ref, query string, limit int) (hits []search.LineHit, ids []model.ItemID, total int, err error)
	FuzzyLines(ref, query string, prev *search.FuzzyState, limit int) (hits []search.LineHit, ids []model.ItemID, next *search.FuzzyState, err error)
	// FilterItems is the indices of v's items that f picks.
	FilterItems(v *model.View, f search.ItemFilter) ([]int, error)

	// The edits, as the Service makes them.
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
	// GetMemoryPolicy and SetMemoryPolicy are the tools of those names.
	GetMemoryPolicy(ctx context.Context, a memory.MemoryPolicyArgs) (memory.MemoryPolicyResult, error)
	SetMemoryPolicy(ctx context.Context, a memory.SetMemoryPolicyArgs) (memory.MemoryPolicyResult, error)

	// SetDefaultSession names the session that requests naming none go
	// to: the one the operator has open. It never waits on the network.
	SetDefaultSession(id string)
	// Watch is Backend's: every write's event until ctx ends, EventGap
	// after a break in which writes were missed, and EventLost when the
	// weft that holds the file stopped answering.
	Watch(ctx context.Context, fn func(ops.Event))
}

// EventLost is no write: a Watch passes it on when the weft it follows
// stopped answering and could not be reached again at once. Writes are
// not heard until an EventGap says the stream is open again.
const EventLost ops.EventKind = "lost"

var _ Desk = Local{}

// View is the service's View.
func (l Local) View(ref string) (model.Session, *model.View, error) { return l.Service.View(ref) }

// Messages is the service's Messages.
func (l Local) Messages(ref string, seqs []uint64) ([]model.Message, error) {
	return l.Service.Messages(ref, seqs)
}

// Operations is the service's Operations.
func (l Local) Operations(ref string) ([]model.Op, error) { return l.Service.Operations(ref) }

// Timeline is the service's Timeline.
func (l Local) Timeline(ref string, n int) (ops.Timeline, error) { return l.Service.Timeline(ref, n) }

// ItemAt is the service's ItemAt.
func (l Local) ItemAt(ref, when string, base time.Time) (int, time.Time, error) {
	return l.Service.ItemAt(ref, when, base)
}

// SessionSpan is the service's SessionSpan.
func (l Local) SessionSpan(id string) (first, latest time.Time, err error) {
	return l.Service.SessionSpan(id)
}

// ListSessions is list_sessions' read.
func (l Local) ListSessions(ctx context.Context, a reads.ListSessionsArgs) (reads.ListSessionsResult, error) {
	return reads.ListSessions(l.Service, ctx, a)
}

// DiffSession is diff_session's read.
func (l Local) DiffSession(ctx context.Context, a reads.DiffSessionArgs) (reads.DiffSessionResult, error) {
	return reads.DiffSession(l.Service, ctx, a)
}

// ListOperations is list_operations' read.
func (l Local) ListOperations(ctx context.Context, a reads.ListOperationsArgs) (reads.ListOperationsResult, error) {
	return reads.ListOperations(l.Service, ctx, a)
}

// PrepareSearch is search.Prepare.
func (l Local) PrepareSearch(ref string) error { return search.Prepare(l.Service, ref) }

// SubstringLines is search.SubstringLines.
func (l Local) SubstringLines(ref, query string, limit int) ([]search.LineHit, []model.ItemID, int, error) {
	return search.SubstringLines(l.Service, ref, query, limit)
}

// FuzzyLines is search.FuzzyLines, with the hits' item IDs in the view
// searched.
func (l Local) FuzzyLines(ref, query string, prev *search.FuzzyState, limit int) ([]search.LineHit, []model.ItemID, *search.FuzzyState, error) {
	hits, next, err := search.FuzzyLines(l.Service, ref, query, prev, limit)
	ids := make([]model.ItemID, len(hits))
	for k, h := range hits {
		ids[k] = next.ItemID(h.Index)
	}
	return hits, ids, next, err
}

// FilterItems is search.FilterItems.
func (l Local) FilterItems(v *model.View, f search.ItemFilter) ([]int, error) {
	return search.FilterItems(l.Service, v, f)
}

// TagMessages is the service's TagMessages.
func (l Local) TagMessages(ctx context.Context, a ops.TagArgs) (ops.TagResult, error) {
	return l.Service.TagMessages(ctx, a)
}

// DigestMessages is the service's DigestMessages.
func (l Local) DigestMessages(ctx context.Context, a ops.DigestArgs) (ops.OpResult, error) {
	return l.Service.DigestMessages(ctx, a)
}

// ReviseMessages is the service's ReviseMessages.
func (l Local) ReviseMessages(ctx context.Context, a ops.ReviseArgs) (ops.OpResult, error) {
	return l.Service.ReviseMessages(ctx, a)
}

// SnipMessages is the service's SnipMessages.
func (l Local) SnipMessages(ctx context.Context, a ops.SnipArgs) (ops.OpResult, error) {
	return l.Service.SnipMessages(ctx, a)
}

// ResequenceMessages is the service's ResequenceMessages.
func (l Local) ResequenceMessages(ctx context.Context, a ops.ResequenceArgs) (ops.OpResult, error) {
	return l.Service.ResequenceMessages(ctx, a)
}

// InsertMessages is the service's InsertMessages.
func (l Local) InsertMessages(ctx context.Context, a ops.InsertArgs) (ops.OpResult, error) {
	return l.Service.InsertMessages(ctx, a)
}

// ToggleOperation is the service's ToggleOperation.
func (l Local) ToggleOperation(ctx context.Context, a ops.ToggleArgs) (ops.SuccessResult, error) {
	return l.Service.ToggleOperation(ctx, a)
}

// RevertOperation is the service's RevertOperation.
func (l Local) RevertOperation(ctx context.Context, a ops.OperationArgs) (ops.SuccessResult, error) {
	return l.Service.RevertOperation(ctx, a)
}

// RestoreOperation is the service's RestoreOperation.
func (l Local) RestoreOperation(ctx context.Context, a ops.OperationArgs) (ops.SuccessResult, error) {
	return l.Service.RestoreOperation(ctx, a)
}

// SummarizeMessageRange is the service's SummarizeMessageRange.
func (l Local) SummarizeMessageRange(ctx context.Context, a ops.SummarizeArgs) (ops.SummarizeResult, error) {
	return l.Service.SummarizeMessageRange(ctx, a)
}

// ForkSession is the service's ForkSession.
func (l Local) ForkSession(ctx context.Context, a fork.Args) (fork.Result, error) {
	return fork.Session(l.Service, ctx, a)
}

// RenameSession is the service's RenameSession.
func (l Local) RenameSession(ctx context.Context, a ops.RenameSessionArgs) (ops.SessionChangeResult, error) {
	return l.Service.RenameSession(ctx, a)
}

// GetMemoryPolicy is get_memory_policy.
func (l Local) GetMemoryPolicy(ctx context.Context, a memory.MemoryPolicyArgs) (memory.MemoryPolicyResult, error) {
	return memory.GetMemoryPolicy(l.Service, ctx, a)
}

// SetMemoryPolicy is set_memory_policy.
func (l Local) SetMemoryPolicy(ctx context.Context, a memory.SetMemoryPolicyArgs) (memory.MemoryPolicyResult, error) {
	return memory.SetMemoryPolicy(l.Service, ctx, a)
}

// DeleteSession is the service's DeleteSession.
func (l Local) DeleteSession(ctx context.Context, a ops.DeleteSessionArgs) (ops.SessionChangeResult, error) {
	return l.Service.DeleteSession(ctx, a)
}

// SetDefaultSession is the service's SetDefaultSession.
func (l Local) SetDefaultSession(id string) { l.Service.SetDefaultSession(id) }
