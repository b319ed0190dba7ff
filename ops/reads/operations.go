package reads

import (
	"context"
	"fmt"
	"slices"

	"weft/ops"

	"weft/internal/english"
	"weft/model"
)

// ListOperationsArgs are list_operations' arguments.
type ListOperationsArgs struct {
	SessionID  string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	ActiveOnly bool   `json:"active_only,omitempty" jsonschema:"only the operations now in effect (active or partial)"`
	MaxTokens  *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): the latest operations first, long summaries and messages cut with a marker, long target lists shortened (targets_omitted); earlier operations that do not fit are left out, counted, with a next_cursor"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the earlier operations it left out"`
}

// OperationOut describes an operation in results.
type OperationOut struct {
	OperationID string         `json:"operation_id"`
	OpType      model.OpType   `json:"op_type"`
	Status      model.OpStatus `json:"status"`
	// Active says the operation is switched on; a reverted one is not,
	// whatever its switch said when it was reverted.
	Active  bool           `json:"active"`
	Targets []model.ItemID `json:"targets"`
	// TargetsOmitted counts the targets left out of a long list to fit
	// a budget: Targets then holds the first and last ten.
	TargetsOmitted int                `json:"targets_omitted,omitempty"`
	Anchor         model.ItemID       `json:"anchor,omitempty"`
	Tags           []string           `json:"tags,omitempty"`
	WhenTags       []string           `json:"when_tags,omitempty"`
	Summary        string             `json:"summary,omitempty"`
	Messages       []model.NewMessage `json:"messages,omitempty"`
	// Index is where the operation shows in the effective thread: its
	// marker, or its first tagged item. Absent when it shows nowhere.
	Index      *int   `json:"index,omitempty"`
	CreatedAt  string `json:"created_at"`
	RevertedAt string `json:"reverted_at,omitempty"`
	Author     string `json:"author"`
	Version    uint64 `json:"version"`
}

// ListOperationsResult is list_operations' result.
type ListOperationsResult struct {
	SessionID  string         `json:"session_id"`
	Version    uint64         `json:"version"`
	Operations []OperationOut `json:"operations"`
	Fit
}

// listOperations lists a session's operations in creation order: within
// a budget, the latest that fit.
func listOperations(s *ops.Service, _ context.Context, a ListOperationsArgs) (ListOperationsResult, error) {
	const tool = "list_operations"
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return ListOperationsResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return ListOperationsResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return ListOperationsResult{}, err
	}
	v := snap.View
	at := markerIndex(v)
	res := ListOperationsResult{SessionID: snap.Info.ID, Version: snap.Info.Version, Operations: []OperationOut{}}
	var all []OperationOut
	for _, op := range snap.Ops {
		st := v.Status[op.ID]
		if a.ActiveOnly && st != model.StatusActive && st != model.StatusPartial {
			continue
		}
		out := OperationOut{
			OperationID: op.ID, OpType: op.Type, Status: st, Active: op.Active && op.RevertedAt == nil,
			Targets: op.Targets, Anchor: op.Anchor, Tags: op.Payload.Tags, WhenTags: op.WhenTags,
			Summary: op.Payload.Summary, Messages: op.Payload.Messages,
			CreatedAt: ops.FormatTime(op.CreatedAt), Author: op.Author, Version: op.Version,
		}
		if out.Targets == nil {
			out.Targets = []model.ItemID{}
		}
		if op.RevertedAt != nil {
			out.RevertedAt = ops.FormatTime(*op.RevertedAt)
		}
		if i, ok := at[op.ID]; ok {
			out.Index = &i
		} else if op.Type == model.OpTag && (st == model.StatusActive || st == model.StatusPartial) {
			first := -1
			for _, id := range op.Targets {
				if j := v.IndexOf(id); j >= 0 && (first < 0 || j < first) {
					first = j
				}
			}
			if first >= 0 {
				out.Index = &first
			}
		}
		all = append(all, out)
	}
	// Newest first: what fits is the latest operations.
	slices.Reverse(all)
	place := place(snap, tool, a, false)
	start, err := cur.resume(place, len(all), func(k int) string { return all[k].OperationID })
	if err != nil {
		return ListOperationsResult{}, err
	}
	rest := all[start:]
	bodies, metas := make([]int, len(rest)), make([]int, len(rest))
	if budget != NoLimit {
		for k := range rest {
			bodies[k], metas[k] = max(countJSON(rest[k])-80, 0), 80
		}
	}
	pk := newPacker(budget, countJSON(res), bodies, metas)
	for k := range rest {
		var out OperationOut
		ok := pk.takeShaped(func(capBody int) (int, bool) {
			out = rest[k]
			if budget == NoLimit || bodies[k] <= capBody {
				return metas[k] + bodies[k], false
			}
			shortenOp(&out, capBody)
			return countJSON(out), true
		})
		if !ok {
			pk.skip(len(rest) - k - 1)
			break
		}
		res.Operations = append(res.Operations, out)
	}
	slices.Reverse(res.Operations)
	var next *readCursor
	if given := start + pk.taken; pk.omitted > 0 && given > 0 {
		next = place.cursor(all[given-1].OperationID)
	}
	res.Fit = pk.fit(next, fmt.Sprintf("%d earlier operations did not fit: call %s again with the same arguments and cursor=next_cursor", pk.omitted, tool))
	return res, nil
}

// shortenOp fits an operation's description in about capBody tokens:
// its summary and messages cut with a marker, a long target list kept to
// its first and last ten.
func shortenOp(o *OperationOut, capBody int) {
	if n := len(o.Targets); n > 20 {
		o.TargetsOmitted = n - 20
		o.Targets = append(slices.Clone(o.Targets[:10]), o.Targets[n-10:]...)
	}
	parts := 1 + len(o.Messages)
	marker := func(rest int) string {
		return fmt.Sprintf("\n… [%s more characters: list_operations with a larger max_tokens]", english.Thousands(rest))
	}
	if head, _, rest := cutText(o.Summary, textTokens(o.Summary, 0), capBody/parts); rest > 0 {
		o.Summary = head + marker(rest)
	}
	if len(o.Messages) > 0 {
		msgs := slices.Clone(o.Messages)
		for i := range msgs {
			if head, _, rest := cutText(msgs[i].Content, textTokens(msgs[i].Content, 0), capBody/parts); rest > 0 {
				msgs[i].Content, msgs[i].Parts = head+marker(rest), nil
			}
		}
		o.Messages = msgs
	}
}

// markerIndex maps each operation that left a marker to where the marker
// shows; a nested marker shows where its outermost marker does.
func markerIndex(v *model.View) map[string]int {
	at := make(map[string]int, len(v.Markers))
	var walk func(ms []model.Marker, idx int)
	walk = func(ms []model.Marker, idx int) {
		for _, m := range ms {
			at[m.OpID] = idx
			walk(m.Nested, idx)
		}
	}
	for _, m := range v.Markers {
		at[m.OpID] = m.At
		walk(m.Nested, m.At)
	}
	return at
}
