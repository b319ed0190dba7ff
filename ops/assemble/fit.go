// Package assemble fits an effective thread to a budget: which items a
// context keeps (the system prompt, the latest turns, then summaries of
// older parts) and which it leaves out, and why. It reads no store: token
// counts come from the heads and the view.
package assemble

import "weft/model"

// OmittedRange is a run of the effective thread an assembly left out,
// and why.
type OmittedRange struct {
	StartIdx  int          `json:"start_idx"`
	EndIdx    int          `json:"end_idx"`
	FirstID   model.ItemID `json:"first_id"`
	LastID    model.ItemID `json:"last_id"`
	Count     int          `json:"count"`
	Tokens    int          `json:"tokens"`
	Summaries int          `json:"summaries"`
	// Reason is "not requested" (outside the pending preferences'
	// slice), "max_messages" or "max_tokens".
	Reason string `json:"reason"`
}

// MaxOmittedRanges bounds the runs an assembly lists as left out.
const MaxOmittedRanges = 100

// Tokens is an item's token count, from its head or its synthetic
// record: no body is read.
func Tokens(v *model.View, heads []model.Head, i int) int {
	it := v.Items[i]
	if it.Seq > 0 {
		if int(it.Seq) <= len(heads) {
			return int(heads[it.Seq-1].Tokens)
		}
		return 0
	}
	return v.Synth[it.Synth].Tokens
}

// isToolResult reports whether an item is a tool's message.
func isToolResult(v *model.View, heads []model.Head, i int) bool {
	it := v.Items[i]
	if it.Seq > 0 {
		return int(it.Seq) <= len(heads) && heads[it.Seq-1].Role == model.RoleTool.Code()
	}
	return v.Synth[it.Synth].Role == model.RoleTool
}

// isPinned reports whether an item is a stored system message: one
// of the system prompt when only such messages stand before it.
func isPinned(v *model.View, heads []model.Head, i int) bool {
	it := v.Items[i]
	return it.Seq > 0 && int(it.Seq) <= len(heads) && heads[it.Seq-1].Role == model.RoleSystem.Code()
}

// recentShare is the part of a token budget the most recent turns get
// before summaries of older parts are considered; the rest of the budget
// goes to summaries, then to further turns.
const recentShare = 0.75

// Fit chooses, from sel (indices in thread order), what fits in
// budget tokens, by tiers (seed 004): the system prompt (stored system
// messages at the very start) if it fits; the most recent items, newest
// first, up to three quarters of the budget (the newest one up to all
// of it); then the summaries among the older items, newest first, until
// one does not fit; then, with what is left, the items before the recent
// run, newest first, until one does not fit. So what goes first is
// always the oldest: older turns, then older summaries. Tool results at
// the start of a run, whose calls were left out, go too. It returns the
// chosen indices in thread order.
func Fit(v *model.View, heads []model.Head, sel []int, budget int) []int {
	take := make([]bool, len(sel))
	used := 0
	fits := func(k, limit int) bool {
		t := Tokens(v, heads, sel[k])
		if used+t > limit {
			return false
		}
		take[k] = true
		used += t
		return true
	}
	p := 0
	for p < len(sel) && sel[p] == p && isPinned(v, heads, sel[p]) {
		fits(p, budget)
		p++
	}
	share := used + int(float64(budget-used)*recentShare)
	k := len(sel) - 1
	for ; k >= p; k-- {
		limit := share
		if k == len(sel)-1 {
			limit = budget
		}
		if !fits(k, limit) {
			break
		}
	}
	for j := k; j >= p; j-- {
		if v.IsSummary(sel[j]) && !fits(j, budget) {
			break
		}
	}
	for j := k; j >= p; j-- {
		if !take[j] && !fits(j, budget) {
			break
		}
	}
	// A run that starts with tool results would answer calls that were
	// left out: the results go too, rather than reach the model as
	// answers to nothing.
	for k := range sel {
		if take[k] && (k == 0 || !take[k-1]) && isToolResult(v, heads, sel[k]) {
			take[k] = false
		}
	}
	n := 0
	for _, t := range take {
		if t {
			n++
		}
	}
	out := make([]int, 0, n)
	for k, i := range sel {
		if take[k] {
			out = append(out, i)
		}
	}
	return out
}

// Omitted lists the effective thread's items that are not kept, as
// runs with the reason each was left out: not in picked (the pending
// preferences' selection), not in limited (max_messages), or not in
// kept (max_tokens). All three are sorted, each within the one before.
func Omitted(v *model.View, heads []model.Head, picked, limited, kept []int) (ranges []OmittedRange, notListed, count, tokens int) {
	ranges = []OmittedRange{}
	var pi, li, ki int
	in := func(xs []int, at *int, i int) bool {
		for *at < len(xs) && xs[*at] < i {
			*at++
		}
		return *at < len(xs) && xs[*at] == i
	}
	var cur *OmittedRange
	prev, prevReason := -2, ""
	// closeRun names the last item of the run being built: IDs are made
	// once per run, not per item.
	closeRun := func() {
		if cur != nil {
			cur.LastID = v.ID(v.Items[cur.EndIdx])
			cur = nil
		}
	}
	for i := range v.Len() {
		reason := ""
		switch {
		case !in(picked, &pi, i):
			reason = "not requested"
		case !in(limited, &li, i):
			reason = "max_messages"
		case !in(kept, &ki, i):
			reason = "max_tokens"
		default:
			continue
		}
		t := Tokens(v, heads, i)
		count++
		tokens += t
		if i != prev+1 || reason != prevReason { // a new run
			closeRun()
			if len(ranges) < MaxOmittedRanges {
				ranges = append(ranges, OmittedRange{StartIdx: i, FirstID: v.ID(v.Items[i]), Reason: reason})
				cur = &ranges[len(ranges)-1]
			} else {
				notListed++
			}
		}
		prev, prevReason = i, reason
		if cur == nil {
			continue
		}
		cur.EndIdx = i
		cur.Count++
		cur.Tokens += t
		if v.IsSummary(i) {
			cur.Summaries++
		}
	}
	closeRun()
	return ranges, notListed, count, tokens
}
