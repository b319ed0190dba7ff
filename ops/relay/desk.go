package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/fork"
	"weft/ops/httpx"
	"weft/ops/memory"
	"weft/ops/reads"
	"weft/ops/search"
	"weft/ops/timeparse"
	"weft/ops/tools"
)

// Both ends of the wire of tools.Desk, what the operator's own client
// reads and does with the file: the weft that holds it answers POST
// /desk/CALL, with CALL's arguments as JSON, from tools.Local; a client
// elsewhere calls it through Remote. The edits the tools already make
// (tag_messages, ...) and the reads they give (list_sessions,
// list_operations) go through /api, as any relayed tool does; /desk
// gives what no tool does: the whole effective view, stored messages by
// seq, the operations as they are stored, the timeline, the item at a
// time, a session's span, searches by line, the filter, restoring an
// operation and naming the default session.

// deskPath is where the holder answers the Desk's calls; deskHeader
// marks its every answer, so that a client can tell a holder that has
// no Desk (a weft older than it) from a session that is not there.
const (
	deskPath   = "/desk/"
	deskHeader = "X-Weft-Desk"
)

// The Desk's calls, by the names the wire gives them.
const (
	deskView       = "view"
	deskMessages   = "messages"
	deskOperations = "operations"
	deskTimeline   = "timeline"
	deskItemAt     = "item_at"
	deskSpan       = "session_span"
	deskPrepare    = "prepare_search"
	deskSubstring  = "substring_lines"
	deskFuzzy      = "fuzzy_lines"
	deskFilter     = "filter_items"
	deskRestore    = "restore_operation"
	deskDefault    = "default_session"
)

// The Desk's arguments and results on the wire.
type (
	deskRef struct {
		Ref string `json:"ref"`
	}
	deskViewOut struct {
		Session model.Session `json:"session"`
		View    *model.View   `json:"view"`
	}
	deskMessagesArgs struct {
		Ref  string   `json:"ref"`
		Seqs []uint64 `json:"seqs"`
	}
	deskTimelineArgs struct {
		Ref string `json:"ref"`
		N   int    `json:"n"`
	}
	// deskItemAtArgs names the time as RFC 3339 with nanoseconds: the
	// client reads what the operator typed, in its own zone, and the
	// holder reads that back exactly.
	deskItemAtArgs struct {
		Ref  string `json:"ref"`
		When string `json:"when"`
	}
	deskItemAtOut struct {
		Index int `json:"index"`
	}
	deskSessionArgs struct {
		SessionID string `json:"session_id"`
	}
	deskSpanOut struct {
		First  time.Time `json:"first"`
		Latest time.Time `json:"latest"`
	}
	deskSearchArgs struct {
		Ref   string `json:"ref"`
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	deskLinesOut struct {
		Hits  []search.LineHit `json:"hits"`
		IDs   []model.ItemID   `json:"ids"`
		Total int              `json:"total"`
	}
	deskFilterArgs struct {
		SessionID string            `json:"session_id"`
		Filter    search.ItemFilter `json:"filter"`
	}
	// deskFilterOut names the items picked by ID, in the holder's view:
	// the client finds them in the view it asked about.
	deskFilterOut struct {
		IDs []model.ItemID `json:"ids"`
	}
	deskNone struct{}
)

// deskMount is the holder's side: each call answered from desk, the
// service of the file held, in this process.
func deskMount(desk tools.Local) httpx.Mount {
	calls := map[string]http.HandlerFunc{
		deskView: deskCall(func(_ context.Context, a deskRef) (deskViewOut, error) {
			info, v, err := desk.View(a.Ref)
			return deskViewOut{info, v}, err
		}),
		deskMessages: deskCall(func(_ context.Context, a deskMessagesArgs) ([]model.Message, error) {
			return desk.Messages(a.Ref, a.Seqs)
		}),
		deskOperations: deskCall(func(_ context.Context, a deskRef) ([]model.Op, error) {
			return desk.Operations(a.Ref)
		}),
		deskTimeline: deskCall(func(_ context.Context, a deskTimelineArgs) (ops.Timeline, error) {
			return desk.Timeline(a.Ref, a.N)
		}),
		deskItemAt: deskCall(func(_ context.Context, a deskItemAtArgs) (deskItemAtOut, error) {
			i, _, err := desk.ItemAt(a.Ref, a.When, time.Time{})
			return deskItemAtOut{i}, err
		}),
		deskSpan: deskCall(func(_ context.Context, a deskSessionArgs) (deskSpanOut, error) {
			first, latest, err := desk.SessionSpan(a.SessionID)
			return deskSpanOut{first, latest}, err
		}),
		deskPrepare: deskCall(func(_ context.Context, a deskRef) (deskNone, error) {
			return deskNone{}, desk.PrepareSearch(a.Ref)
		}),
		deskSubstring: deskCall(func(_ context.Context, a deskSearchArgs) (deskLinesOut, error) {
			hits, ids, total, err := desk.SubstringLines(a.Ref, a.Query, a.Limit)
			return deskLinesOut{hits, ids, total}, err
		}),
		deskFuzzy: deskCall(func(_ context.Context, a deskSearchArgs) (deskLinesOut, error) {
			// What a fuzzy search learns stays here: the next query
			// starts afresh, which costs the holder a little more.
			hits, ids, _, err := desk.FuzzyLines(a.Ref, a.Query, nil, a.Limit)
			return deskLinesOut{hits, ids, len(hits)}, err
		}),
		deskFilter: deskCall(func(_ context.Context, a deskFilterArgs) (deskFilterOut, error) {
			_, v, err := desk.View(a.SessionID)
			if err != nil {
				return deskFilterOut{}, err
			}
			idx, err := desk.FilterItems(v, a.Filter)
			ids := make([]model.ItemID, len(idx))
			for k, i := range idx {
				ids[k] = v.ID(v.Items[i])
			}
			return deskFilterOut{ids}, err
		}),
		deskRestore: deskCall(desk.RestoreOperation),
		deskDefault: deskCall(func(_ context.Context, a deskSessionArgs) (deskNone, error) {
			desk.SetDefaultSession(a.SessionID)
			return deskNone{}, nil
		}),
	}
	// Unsaid at a path nothing serves, as the relays' other paths are
	// (/events, /sessions/...): it is a wire between wefts.
	return httpx.Mount{Pattern: deskPath, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(deskHeader, "1")
		call, ok := calls[strings.TrimPrefix(r.URL.Path, deskPath)]
		if !ok {
			httpx.WriteError(w, http.StatusNotFound, fmt.Sprintf("no call %s: this weft answers POST /desk/ with %s", r.URL.Path, strings.Join(slices.Sorted(maps.Keys(calls)), ", ")))
			return
		}
		call(w, r)
	})}
}

// deskCall answers one call: its arguments read from the body, its
// result or refusal written as the tools' are, a write made as the
// author (and through the origin) its headers name.
func deskCall[A, R any](fn func(context.Context, A) (R, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !httpx.PostOnly(w, r) {
			return
		}
		var args A
		if !httpx.ReadArgs(w, r, &args) {
			return
		}
		ctx := ops.WithAuthor(r.Context(), httpx.Author(r))
		if o := strings.TrimSpace(r.Header.Get(httpx.OriginHeader)); o != "" {
			ctx = ops.WithOrigin(ctx, httpx.APIOrigin+o)
		}
		res, err := fn(ctx, args)
		if err != nil {
			httpx.WriteError(w, httpx.StatusOf(err), err.Error())
			return
		}
		httpx.WriteJSON(w, http.StatusOK, res)
	}
}

// The client's side: each call of tools.Desk made on the holder. The
// reads the Service makes without a context are made without one here
// too: a read waits as long as the holder takes, on a command's own
// goroutine, as it would in-process.

// deskAsk makes call on the holder.
func (b *client) deskAsk(ctx context.Context, call string, args, out any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	resp, err := b.send(ctx, deskPath+call, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	res, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return fmt.Errorf("reading the answer to %s from the weft at %s: %w", call, b.target(), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && resp.Header.Get(deskHeader) == "":
		return fmt.Errorf("the weft at %s that holds the database does not answer %s%s (%s): it is older than this weft; run this weft's serve in its place, or close it to open the file here", b.target(), deskPath, call, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return b.refusal(resp, res)
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("the weft at %s answered %s with JSON this weft cannot read: %w", b.target(), call, err)
	}
	return nil
}

// viaTool runs the tool name on the holder, its result as R.
func viaTool[R any](ctx context.Context, b *client, name string, args any) (R, error) {
	var out R
	tool, ok := tools.Lookup(name)
	if !ok {
		return out, fmt.Errorf("this weft has no tool %s", name)
	}
	return out, b.Invoke(ctx, tool, args, &out)
}

// View is the holder's view of session ref.
func (b *client) View(ref string) (model.Session, *model.View, error) {
	var out deskViewOut
	if err := b.deskAsk(context.Background(), deskView, deskRef{ref}, &out); err != nil {
		return model.Session{}, nil, err
	}
	if out.View == nil {
		return model.Session{}, nil, fmt.Errorf("the weft at %s answered %s without a view", b.target(), deskView)
	}
	unwire(out.View)
	return out.Session, out.View, nil
}

// unwire undoes what JSON changed of a view: a synthetic item without
// parts is nil there, as in-process, not the JSON null.
func unwire(v *model.View) {
	for i := range v.Synth {
		if bytes.Equal(v.Synth[i].Parts, []byte("null")) {
			v.Synth[i].Parts = nil
		}
	}
}

// Messages are the holder's stored messages seqs of session ref.
func (b *client) Messages(ref string, seqs []uint64) (out []model.Message, err error) {
	return out, b.deskAsk(context.Background(), deskMessages, deskMessagesArgs{ref, seqs}, &out)
}

// Operations are session ref's operations there.
func (b *client) Operations(ref string) (out []model.Op, err error) {
	return out, b.deskAsk(context.Background(), deskOperations, deskRef{ref}, &out)
}

// Timeline is session ref's timeline there.
func (b *client) Timeline(ref string, n int) (out ops.Timeline, err error) {
	return out, b.deskAsk(context.Background(), deskTimeline, deskTimelineArgs{ref, n}, &out)
}

// ItemAt reads when here, as the operator typed it, in this process's
// zone and with base (zero: now), as in-process; the holder finds the
// item at the time read. A time that cannot be read is refused here,
// a *timeparse.Error as in-process.
func (b *client) ItemAt(ref, when string, base time.Time) (int, time.Time, error) {
	if base.IsZero() {
		base = time.Now()
	}
	t, err := timeparse.Parse(when, base, time.Local)
	if err != nil {
		return 0, t, fmt.Errorf("time: %w", err)
	}
	var out deskItemAtOut
	err = b.deskAsk(context.Background(), deskItemAt, deskItemAtArgs{ref, t.Format(time.RFC3339Nano)}, &out)
	return out.Index, t, err
}

// SessionSpan is session id's span there.
func (b *client) SessionSpan(id string) (time.Time, time.Time, error) {
	var out deskSpanOut
	err := b.deskAsk(context.Background(), deskSpan, deskSessionArgs{id}, &out)
	return out.First, out.Latest, err
}

// ListSessions is list_sessions there.
func (b *client) ListSessions(ctx context.Context, a reads.ListSessionsArgs) (reads.ListSessionsResult, error) {
	return viaTool[reads.ListSessionsResult](ctx, b, "list_sessions", a)
}

// ListOperations is list_operations there.
func (b *client) ListOperations(ctx context.Context, a reads.ListOperationsArgs) (reads.ListOperationsResult, error) {
	return viaTool[reads.ListOperationsResult](ctx, b, "list_operations", a)
}

// DiffSession is diff_session there.
func (b *client) DiffSession(ctx context.Context, a reads.DiffSessionArgs) (reads.DiffSessionResult, error) {
	return viaTool[reads.DiffSessionResult](ctx, b, "diff_session", a)
}

// PrepareSearch has the holder read session ref's text for searches.
func (b *client) PrepareSearch(ref string) error {
	return b.deskAsk(context.Background(), deskPrepare, deskRef{ref}, &deskNone{})
}

// SubstringLines searches there.
func (b *client) SubstringLines(ref, query string, limit int) ([]search.LineHit, []model.ItemID, int, error) {
	var out deskLinesOut
	err := b.deskAsk(context.Background(), deskSubstring, deskSearchArgs{ref, query, limit}, &out)
	return out.Hits, out.IDs, out.Total, err
}

// FuzzyLines searches there, afresh each time: no state crosses the
// wire, so next is nil and prev is not used.
func (b *client) FuzzyLines(ref, query string, _ *search.FuzzyState, limit int) ([]search.LineHit, []model.ItemID, *search.FuzzyState, error) {
	var out deskLinesOut
	err := b.deskAsk(context.Background(), deskFuzzy, deskSearchArgs{ref, query, limit}, &out)
	return out.Hits, out.IDs, nil, err
}

// FilterItems has the holder pick the items of its view of v's session
// and finds them in v, in v's order: the same items when v is the
// holder's version, and those of them still in v when not.
func (b *client) FilterItems(v *model.View, f search.ItemFilter) ([]int, error) {
	var out deskFilterOut
	if err := b.deskAsk(context.Background(), deskFilter, deskFilterArgs{v.SessionID, f}, &out); err != nil {
		return nil, err
	}
	var idx []int
	for _, id := range out.IDs {
		if i := v.IndexOf(id); i >= 0 {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	return idx, nil
}

// TagMessages is tag_messages there.
func (b *client) TagMessages(ctx context.Context, a ops.TagArgs) (ops.TagResult, error) {
	return viaTool[ops.TagResult](ctx, b, "tag_messages", a)
}

// DigestMessages is digest_messages there.
func (b *client) DigestMessages(ctx context.Context, a ops.DigestArgs) (ops.OpResult, error) {
	return viaTool[ops.OpResult](ctx, b, "digest_messages", a)
}

// ReviseMessages is revise_messages there.
func (b *client) ReviseMessages(ctx context.Context, a ops.ReviseArgs) (ops.OpResult, error) {
	return viaTool[ops.OpResult](ctx, b, "revise_messages", a)
}

// SnipMessages is snip_messages there.
func (b *client) SnipMessages(ctx context.Context, a ops.SnipArgs) (ops.OpResult, error) {
	return viaTool[ops.OpResult](ctx, b, "snip_messages", a)
}

// ResequenceMessages is resequence_messages there.
func (b *client) ResequenceMessages(ctx context.Context, a ops.ResequenceArgs) (ops.OpResult, error) {
	return viaTool[ops.OpResult](ctx, b, "resequence_messages", a)
}

// InsertMessages is insert_messages there.
func (b *client) InsertMessages(ctx context.Context, a ops.InsertArgs) (ops.OpResult, error) {
	return viaTool[ops.OpResult](ctx, b, "insert_messages", a)
}

// ToggleOperation is toggle_operation there.
func (b *client) ToggleOperation(ctx context.Context, a ops.ToggleArgs) (ops.SuccessResult, error) {
	return viaTool[ops.SuccessResult](ctx, b, "toggle_operation", a)
}

// RevertOperation is revert_operation there.
func (b *client) RevertOperation(ctx context.Context, a ops.OperationArgs) (ops.SuccessResult, error) {
	return viaTool[ops.SuccessResult](ctx, b, "revert_operation", a)
}

// RestoreOperation restores a reverted operation there: no tool does.
func (b *client) RestoreOperation(ctx context.Context, a ops.OperationArgs) (out ops.SuccessResult, err error) {
	return out, b.deskAsk(ctx, deskRestore, a, &out)
}

// SummarizeMessageRange is summarize_message_range there: with the
// holder's summarizer, as the client's own model cannot be lent.
func (b *client) SummarizeMessageRange(ctx context.Context, a ops.SummarizeArgs) (ops.SummarizeResult, error) {
	return viaTool[ops.SummarizeResult](ctx, b, "summarize_message_range", a)
}

// ForkSession is fork_session there.
func (b *client) ForkSession(ctx context.Context, a fork.Args) (fork.Result, error) {
	return viaTool[fork.Result](ctx, b, "fork_session", a)
}

// RenameSession is rename_session there.
func (b *client) RenameSession(ctx context.Context, a ops.RenameSessionArgs) (ops.SessionChangeResult, error) {
	return viaTool[ops.SessionChangeResult](ctx, b, "rename_session", a)
}

// GetMemoryPolicy is get_memory_policy there.
func (b *client) GetMemoryPolicy(ctx context.Context, a memory.MemoryPolicyArgs) (memory.MemoryPolicyResult, error) {
	return viaTool[memory.MemoryPolicyResult](ctx, b, "get_memory_policy", a)
}

// SetMemoryPolicy is set_memory_policy there.
func (b *client) SetMemoryPolicy(ctx context.Context, a memory.SetMemoryPolicyArgs) (memory.MemoryPolicyResult, error) {
	return viaTool[memory.MemoryPolicyResult](ctx, b, "set_memory_policy", a)
}

// DeleteSession is delete_session there.
func (b *client) DeleteSession(ctx context.Context, a ops.DeleteSessionArgs) (ops.SessionChangeResult, error) {
	return viaTool[ops.SessionChangeResult](ctx, b, "delete_session", a)
}

// defaultWait bounds how long naming the default session waits for the
// holder: a holder that hangs must not hold a client's closing.
const defaultWait = 2 * time.Second

// SetDefaultSession names the holder's default session, and waits for
// it to be named (at most defaultWait): Remote sends it from a goroutine
// of its own.
func (b *client) SetDefaultSession(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultWait)
	defer cancel()
	_ = b.deskAsk(ctx, deskDefault, deskSessionArgs{id}, &deskNone{})
}
