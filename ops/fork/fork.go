// Package fork makes forks: a new session whose thread is another's
// effective thread up to an item, with the operations there carried
// (fork_session), and the fork the context proxy makes of a session a
// request departs from in the middle (CarryOps).
package fork

import (
	"context"
	"fmt"
	"slices"

	"weft/model"
	"weft/ops"
	"weft/ops/thread"
)

// Args are fork_session's arguments.
type Args struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session to fork; default: the one the operator has open in weft, else the most recently updated"`
	// AtIdx or At is the last item the fork keeps; neither: the whole
	// thread.
	AtIdx *int         `json:"at_idx,omitempty" jsonschema:"the index (0-based, in the effective thread) of the last item the fork keeps; default: the last"`
	At    model.ItemID `json:"at,omitempty" jsonschema:"the ID of the last item the fork keeps (m12, or <op-id>/<k>), instead of at_idx"`
	Title string       `json:"title,omitempty" jsonschema:"the fork's title; default: the source's, marked as a fork"`
}

// Result is fork_session's result.
type Result struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	// ForkOf is the source and the item the fork ends at.
	ForkOf model.Fork `json:"fork_of"`
	// Items is the fork's effective thread's length: the source's items
	// 0..at.
	Items int `json:"items"`
	// Messages are the stored messages the fork holds (the source's
	// 1..Messages), Operations the source's operations it carries.
	Messages   int `json:"messages"`
	Operations int `json:"operations"`
}

// Session makes a new session whose effective thread is the source's
// up to an item (fork_session): the stored messages it rests on, and the
// operations over them as far as they apply there (an operation's
// targets past the fork are left out of it; one with none left is not
// carried; reverted ones are not). Should the carried operations show an
// item the source did not show up to there, a snip by the caller cuts
// it, so the fork's thread is the source's, item for item. The source is
// unchanged; the fork records where it came from (Session.ForkOf).
func Session(s *ops.Service, ctx context.Context, a Args) (Result, error) {
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return Result{}, err
	}
	v := snap.View
	if len(v.Items) == 0 {
		return Result{}, ops.Invalidf("session %s has an empty thread: there is nothing to fork", snap.Info.ID)
	}
	at := len(v.Items) - 1
	switch {
	case a.AtIdx != nil && a.At != "":
		return Result{}, ops.Invalidf("give at_idx or at, not both")
	case a.AtIdx != nil:
		if *a.AtIdx < 0 || *a.AtIdx >= len(v.Items) {
			return Result{}, ops.Invalidf("at_idx %d is outside the thread: its items are 0..%d", *a.AtIdx, len(v.Items)-1)
		}
		at = *a.AtIdx
	case a.At != "":
		if at = v.IndexOf(a.At); at < 0 {
			return Result{}, ops.Invalidf("item %s is not in session %s's effective thread", a.At, snap.Info.ID)
		}
	}
	title := a.Title
	if title == "" {
		title = "fork of " + snap.Info.Title
	}
	if title, err = ops.ValidTitle(title); err != nil {
		return Result{}, err
	}
	want := make([]model.ItemID, at+1)
	for i := range want {
		want[i] = v.ID(v.Items[i])
	}
	last := lastSeqUnder(snap.Ops, want)
	now := s.Clock()
	id := s.NewID(now)
	carried, renamed := carryOps(snap.Ops, last, func() string { return s.NewID(now) })

	// The fork's thread with what is carried; what it shows past the
	// source's items is cut.
	heads := snap.Heads[:last]
	got := thread.Apply(heads, carried, snap.Info.ActiveTags)
	keep := make(map[model.ItemID]bool, len(want))
	for _, w := range want {
		keep[renamed(w)] = true
	}
	var extra []model.ItemID
	for _, it := range got.Items {
		if item := got.ID(it); !keep[item] {
			extra = append(extra, item)
		}
	}
	if len(extra) > 0 {
		carried = append(carried, model.Op{ID: s.NewID(now), Type: model.OpSnip, Targets: extra, Active: true, CreatedAt: now, Author: ops.AuthorFrom(ctx)})
		got = thread.Apply(heads, carried, snap.Info.ActiveTags)
	}
	if len(got.Items) != len(want) {
		return Result{}, fmt.Errorf("the fork of %s at %d would show %d items, not %d", snap.Info.ID, at, len(got.Items), len(want))
	}
	for i, it := range got.Items {
		if got.ID(it) != renamed(want[i]) {
			return Result{}, ops.Invalidf("session %s cannot be forked at %d: its operations order the items up to there differently without those after it (item %d is %s, not %s)", snap.Info.ID, at, i, got.ID(it), renamed(want[i]))
		}
	}

	fork := &model.Fork{SessionID: snap.Info.ID, At: want[at], Index: at}
	seqs := make([]uint64, last)
	for i := range seqs {
		seqs[i] = uint64(i + 1)
	}
	msgs, err := s.Messages(snap.Info.ID, seqs)
	if err == nil && len(msgs) != last {
		err = fmt.Errorf("session %s holds %d of the %d messages the fork rests on", snap.Info.ID, len(msgs), last)
	}
	if err != nil {
		return Result{}, err
	}
	info, err := s.CreateWith(ctx, model.Session{
		ID: id, Title: title, CreatedAt: now,
		ActiveTags: slices.Clone(snap.Info.ActiveTags), Memory: snap.Info.Memory, ForkOf: fork,
	}, msgs, carried, fmt.Sprintf("forked from %s at %s", snap.Info.ID, want[at]))
	if err != nil {
		return Result{}, err
	}
	return Result{SessionID: info.ID, Title: info.Title, ForkOf: *fork, Items: len(want), Messages: last, Operations: len(carried)}, nil
}

// lastSeqUnder is the highest seq of a stored message the items show or
// stand for (a summary for what its digest replaced, recursively): the
// stored messages a fork at the last of them rests on are 1..that.
func lastSeqUnder(ops []model.Op, items []model.ItemID) int {
	byID := make(map[string]*model.Op, len(ops))
	for i := range ops {
		byID[ops[i].ID] = &ops[i]
	}
	seen := map[string]bool{}
	last := uint64(0)
	var under func(id model.ItemID)
	under = func(id model.ItemID) {
		if seq, ok := id.Seq(); ok {
			last = max(last, seq)
			return
		}
		opID, _, ok := id.Synthetic()
		if !ok || seen[opID] {
			return
		}
		seen[opID] = true
		if op := byID[opID]; op != nil {
			for _, t := range op.Targets {
				under(t)
			}
			if op.Anchor != "" {
				under(op.Anchor)
			}
		}
	}
	for _, id := range items {
		under(id)
	}
	return int(last)
}

// carryOps are the operations of a fork resting on stored messages
// 1..last: each not reverted, under a new ID, its targets past last (or
// made by an operation not carried) left out; one with no target left,
// or an insert after an item not carried, is not carried. renamed maps a
// source item's ID to the fork's.
func carryOps(ops []model.Op, last int, newID func() string) (carried []model.Op, renamed func(model.ItemID) model.ItemID) {
	names := map[string]string{}
	renamed = func(id model.ItemID) model.ItemID {
		if opID, k, ok := id.Synthetic(); ok {
			if n, ok := names[opID]; ok {
				return model.SyntheticID(n, k)
			}
		}
		return id
	}
	kept := func(id model.ItemID) bool {
		if seq, ok := id.Seq(); ok {
			return seq <= uint64(last)
		}
		opID, _, ok := id.Synthetic()
		_, carried := names[opID]
		return ok && carried
	}
	for _, op := range ops {
		if op.Reverted() {
			continue
		}
		var targets []model.ItemID
		for _, t := range op.Targets {
			if kept(t) {
				targets = append(targets, renamed(t))
			}
		}
		if op.Type == model.OpInsert {
			if op.Anchor != "" && !kept(op.Anchor) {
				continue
			}
		} else if len(targets) == 0 {
			continue
		}
		c := op
		c.ID = newID()
		c.Targets = targets
		c.Anchor = renamed(op.Anchor)
		c.WhenTags = slices.Clone(op.WhenTags)
		c.Version = 0
		names[op.ID] = c.ID
		carried = append(carried, c)
	}
	return carried, renamed
}

// CarryOps are the operations of source carried to a fork resting on
// its stored messages 1..last, under new IDs (as fork_session carries
// them).
func CarryOps(s *ops.Service, source []model.Op, last int) []model.Op {
	now := s.Clock()
	carried, _ := carryOps(source, last, func() string { return s.NewID(now) })
	return carried
}
