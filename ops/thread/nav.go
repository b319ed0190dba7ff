package thread

import (
	"cmp"
	"slices"
	"time"

	"weft/model"
)

// Navigation over a view. These functions are pure: they decide which
// items a request returns, as indices into the view; the service then
// reads the bodies it needs.

// TimeIndex finds stored messages by time without scanning the thread.
// The store's bytime index implements it, and so does HeadIndex.
type TimeIndex interface {
	// TimeAscend calls fn for stored messages with created_at >= from, in
	// (created_at, seq) order, until fn returns false.
	TimeAscend(from time.Time, fn func(seq uint64, at int64) bool) error
}

// HeadIndex is a TimeIndex over heads held in memory (for tests and for
// callers without a store).
type HeadIndex []model.Head

// TimeAscend implements TimeIndex.
func (h HeadIndex) TimeAscend(from time.Time, fn func(seq uint64, at int64) bool) error {
	order := make([]int, len(h))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case h[a].At < h[b].At:
			return -1
		case h[a].At > h[b].At:
			return 1
		}
		return 0
	})
	t := from.UnixNano()
	for _, i := range order {
		if h[i].At >= t && !fn(uint64(i+1), h[i].At) {
			return nil
		}
	}
	return nil
}

// Summaries returns the indices of the view's summaries, in thread order:
// the items of digests in effect (and of revisions of exactly one such
// item) that no later operation hides.
func Summaries(v *model.View) []int {
	var out []int
	for si, w := range v.SynthWhere {
		if w >= 0 && v.Synth[si].Summary {
			out = append(out, int(w))
		}
	}
	slices.Sort(out)
	return out
}

// Unsummarized returns the indices of the turns of the effective thread,
// in thread order: every item that is not a summary (stored messages,
// revisions and insertions).
func Unsummarized(v *model.View) []int {
	out := make([]int, 0, len(v.Items))
	for i := range v.Items {
		if !v.IsSummary(i) {
			out = append(out, i)
		}
	}
	return out
}

// ContextPlan is what get_conversation_context returns, as indices.
type ContextPlan struct {
	Summaries         []int // oldest first
	RawTurns          []int // thread order
	UnsummarizedCount int
	TurnsCovered      int
}

// PlanContext blends summaries and raw turns to cover turns turns: all the
// recent unsummarized turns if they are enough, else all of them plus as
// many of the latest summaries as it takes, counting each summary's real
// message_count.
func PlanContext(v *model.View, turns int) ContextPlan {
	sums := Summaries(v)
	p := ContextPlan{UnsummarizedCount: v.Len() - len(sums)}
	if turns <= 0 {
		return p
	}
	// The latest turns, found from the end.
	raw := make([]int, 0, min(turns, p.UnsummarizedCount))
	for i := v.Len() - 1; i >= 0 && len(raw) < turns; i-- {
		if !v.IsSummary(i) {
			raw = append(raw, i)
		}
	}
	slices.Reverse(raw)
	p.RawTurns = raw
	covered := len(raw)
	if covered >= turns {
		p.TurnsCovered = turns
		return p
	}
	first := len(sums)
	for first > 0 && covered < turns {
		first--
		covered += v.Synth[v.Items[sums[first]].Synth].MessageCount
	}
	p.Summaries = sums[first:]
	p.TurnsCovered = covered
	return p
}

// SincePlan is what get_turns_since returns, as indices (or seqs).
type SincePlan struct {
	// Messages are, with summaries, the turns of the effective thread
	// created at or after the time (stored messages it shows, revisions
	// and insertions, by the time they stand at), oldest first.
	Messages []int
	// Stored are, without summaries, every stored message created at or
	// after the time, shown or hidden, oldest first (seed 000's query).
	Stored []uint64
	// Summaries whose span ends at or after the time, by span start.
	Summaries []int
	// Truncated says limit cut the list; More is how many it left out.
	Truncated bool
	More      int
}

// PlanSince finds, oldest first and at most limit, the turns created at
// or after t and the summaries whose time span ends at or after it; or,
// without summaries, every stored message created at or after t.
func PlanSince(v *model.View, idx TimeIndex, t time.Time, includeSummaries bool, limit int) (SincePlan, error) {
	var p SincePlan
	tn := t.UnixNano()
	if !includeSummaries {
		err := idx.TimeAscend(t, func(seq uint64, _ int64) bool {
			if len(p.Stored) < limit {
				p.Stored = append(p.Stored, seq)
			} else {
				p.More++
			}
			return true
		})
		p.Truncated = p.More > 0
		return p, err
	}
	// Synthetic turns at or after t, merged in by the time they stand at.
	type turn struct {
		at  int64
		idx int
	}
	var synth []turn
	for si, w := range v.SynthWhere {
		if sy := &v.Synth[si]; w >= 0 && !sy.Summary && sy.CreatedAt.UnixNano() >= tn {
			synth = append(synth, turn{sy.CreatedAt.UnixNano(), int(w)})
		}
	}
	slices.SortFunc(synth, func(a, b turn) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.idx, b.idx)
	})
	add := func(i int) {
		if len(p.Messages) < limit {
			p.Messages = append(p.Messages, i)
		} else {
			p.More++
		}
	}
	k := 0
	err := idx.TimeAscend(t, func(seq uint64, at int64) bool {
		i := v.IndexOfSeq(seq)
		if i < 0 {
			return true // summarized, revised or snipped: not a turn now
		}
		for k < len(synth) && (synth[k].at < at || synth[k].at == at && synth[k].idx < i) {
			add(synth[k].idx)
			k++
		}
		add(i)
		return true
	})
	if err != nil {
		return p, err
	}
	for ; k < len(synth); k++ {
		add(synth[k].idx)
	}
	p.Truncated = p.More > 0
	for _, i := range Summaries(v) {
		if s := &v.Synth[v.Items[i].Synth]; s.MessageCount > 0 && s.TimeSpanEnd.UnixNano() >= tn {
			p.Summaries = append(p.Summaries, i)
		}
	}
	slices.SortStableFunc(p.Summaries, func(a, b int) int {
		return v.Synth[v.Items[a].Synth].TimeSpanStart.Compare(v.Synth[v.Items[b].Synth].TimeSpanStart)
	})
	return p, nil
}

// AroundPlan is the window get_turns_around returns: Items[Start:End],
// with Before items before the pivot and After from it.
type AroundPlan struct {
	Start, End    int
	Before, After int
}

// PlanAround centres a window of count items on the first stored message
// created at or after t (or on the item that now stands for it, if an
// operation hid it). before_ratio is clamped to [0, 1]; when one side runs
// out, the other side gives the rest of count.
func PlanAround(v *model.View, idx TimeIndex, t time.Time, count int, beforeRatio float64) (AroundPlan, error) {
	n := v.Len()
	pivot := n // after every message: the window ends the thread
	err := idx.TimeAscend(t, func(seq uint64, _ int64) bool {
		if p, _ := v.PlaceOfSeq(seq); p >= 0 {
			pivot = p
		}
		return false
	})
	if err != nil || count <= 0 {
		return AroundPlan{Start: pivot, End: pivot}, err
	}
	count = min(count, n) // the window is no larger than the thread
	beforeRatio = min(max(beforeRatio, 0), 1)
	want := int(float64(count) * beforeRatio)
	before := min(want, pivot)
	after := min(count-before, n-pivot)
	before = min(count-after, pivot)
	return AroundPlan{Start: pivot - before, End: pivot + after, Before: before, After: after}, nil
}

// StartupPlan is the seed-003 startup package, as indices.
type StartupPlan struct {
	Summaries    []int // the latest summaries, oldest first
	Unsummarized []int // every unsummarized turn, no cap
}

// PlanStartup returns the latest n summaries and all unsummarized turns:
// recency, not search.
func PlanStartup(v *model.View, n int) StartupPlan {
	sums := Summaries(v)
	if n < len(sums) {
		sums = sums[len(sums)-max(n, 0):]
	}
	return StartupPlan{Summaries: sums, Unsummarized: Unsummarized(v)}
}
