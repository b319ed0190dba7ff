// Package memory keeps a session's thread within its memory policy by
// itself (DESIGN.md, "Tiered memory"): the seed's tiers — the latest
// turns raw, older turns digested a few at a time into summaries, the
// oldest summaries digested into one archive — a token budget for live
// agents, and stubs for old, large tool outputs. What it decides is made
// as ordinary operations, authored model.MemoryAuthor with the rule that
// made them, which the operator sees, switches off and reverts like any
// other; an operation of the policy that was switched off or reverted is
// never made again over the same items.
//
// Plan is the pure part: from the items of the effective thread, the
// policy and the operations already made, which operations to make now.
package memory

import (
	"slices"

	"weft/model"
)

// Item is what Plan needs to know of an item of the effective thread.
type Item struct {
	ID     model.ItemID
	Role   model.Role
	Tokens int
	// Prompt marks a message that starts a turn: one from the user that
	// is not only tool results.
	Prompt bool
	// ToolResult marks a message that is only tool results (a user
	// message of tool_result blocks, a tool message).
	ToolResult bool
	// Summary marks a digest's summary (or the revise of one).
	Summary bool
	// Op is the operation that made a synthetic item ("" for a stored
	// message); Author and Rule are that operation's.
	Op, Author, Rule string
	// Turns is, for a summary of the policy's, the turns it stands for.
	Turns int
}

// Action is an operation Plan decides to make.
type Action struct {
	Type model.OpType // digest, revise or snip
	Rule string       // model.Rule...
	// First..Last are the indices of the items it acts on, in the
	// thread Plan was given; Targets their IDs.
	First, Last int
	Targets     []model.ItemID
	// Turns is how many turns a digest covers.
	Turns int
	// Tokens is what the items it acts on count now.
	Tokens int
}

// summaryEstimate is what Plan counts a digest's summary to cost before
// it is written: the summarizer is asked for at most this many tokens
// per turn, and at most summaryCap for one summary.
const (
	summaryPerTurn = 120
	summaryCap     = 800
	stubTokens     = 60
)

// unit is a stretch of the thread Plan reasons about: the preamble (the
// system messages before the first turn), a turn (a prompt and all that
// follows it up to the next prompt or summary), or a summary.
type unit struct {
	kind        unitKind
	first, last int // item indices, inclusive
	tokens      int
	archive     bool // a summary that is the policy's archive
}

type unitKind int

const (
	unitPreamble unitKind = iota
	unitTurn
	unitSummary
)

// units splits the thread into its preamble, turns and summaries. An
// operation's items stay in one unit: a stretch of another operation's
// synthetic items is never split (the policy nests others' operations
// whole, never edits inside them).
func units(items []Item) []unit {
	var out []unit
	start := func(k unitKind, i int) {
		out = append(out, unit{kind: k, first: i, last: i})
	}
	for i, it := range items {
		cont := len(out) > 0 && it.Op != "" && items[i-1].Op == it.Op
		switch {
		case cont:
		case it.Summary && it.Author == model.MemoryAuthor && it.Rule == model.RuleRounds && len(out) > 0 && out[len(out)-1].kind == unitTurn:
			// The earlier rounds of a turn, digested: still that turn.
		case it.Summary:
			start(unitSummary, i)
			out[len(out)-1].archive = it.Author == model.MemoryAuthor && it.Rule == model.RuleArchive
		case it.Prompt:
			start(unitTurn, i)
		case len(out) == 0 && it.Role == model.RoleSystem:
			start(unitPreamble, i)
		case len(out) == 0 || out[len(out)-1].kind == unitSummary || (out[len(out)-1].kind == unitPreamble && it.Role != model.RoleSystem):
			// What follows a summary (or the preamble) before the next
			// prompt belongs to a turn of its own: an answer to a turn
			// the summary began.
			start(unitTurn, i)
		}
		u := &out[len(out)-1]
		u.last = i
		u.tokens += it.Tokens
	}
	return out
}

// blocked are the items an operation of the policy was made over and
// then switched off or reverted, by rule: the policy never acts on them
// again with that rule.
type blocked map[string]map[model.ItemID]bool

func blockedBy(ops []model.Op) blocked {
	b := blocked{}
	for _, op := range ops {
		if op.Author != model.MemoryAuthor || (op.Active && !op.Reverted()) {
			continue
		}
		rule := op.Rule
		if b[rule] == nil {
			b[rule] = map[model.ItemID]bool{}
		}
		for _, t := range op.Targets {
			b[rule][t] = true
		}
	}
	return b
}

func (b blocked) any(rule string, items []Item, first, last int) bool {
	set := b[rule]
	if set == nil {
		return false
	}
	for i := first; i <= last; i++ {
		if set[items[i].ID] {
			return true
		}
	}
	return false
}

// Plan decides the operations that bring the thread within the policy,
// in the order they are to be made: tool outputs stubbed, older turns
// digested into summaries, the oldest summaries into the archive, and,
// past the budget, more turns digested until the thread is at its
// target. Each action's indices are in the thread as given: the actions
// never overlap, so they are made by the IDs of their targets in any
// order.
func Plan(items []Item, p model.MemoryPolicy, ops []model.Op) []Action {
	if p.Check() != nil {
		return nil
	}
	us := units(items)
	b := blockedBy(ops)
	var acts []Action
	taken := make([]bool, len(items)) // items some action already acts on
	take := func(a Action) {
		for i := a.First; i <= a.Last; i++ {
			taken[i] = true
			a.Targets = append(a.Targets, items[i].ID)
			a.Tokens += items[i].Tokens
		}
		acts = append(acts, a)
	}
	free := func(first, last int) bool {
		return !slices.Contains(taken[first:last+1], true)
	}

	turnsBefore := turnCounts(us)

	// Tool outputs: old and large ones become stubs. A stub changes the
	// thread where the provider's prompt cache would otherwise hold, so
	// stubs are made with the other changes of a compaction (or under
	// the budget's pressure), not one a turn.
	stubs := func() {
		t := p.ToolOutput
		if t == nil {
			return
		}
		for ui, u := range us {
			// Older than M turns: more than M turns came after it.
			if u.kind != unitTurn || turnsBefore[len(us)]-turnsBefore[ui+1] <= t.OlderThanTurns || !free(u.first, u.last) {
				continue
			}
			for i := u.first; i <= u.last; i++ {
				it := items[i]
				if it.ToolResult && it.Op == "" && it.Tokens >= t.MinTokens && !taken[i] && !b.any(model.RuleToolOutput, items, i, i) {
					take(Action{Type: model.OpRevise, Rule: model.RuleToolOutput, First: i, Last: i})
				}
			}
		}
	}
	stubbed := false

	// The active tier: the turns after the last summary. Past
	// max_active_turns, the oldest are digested summary_turn_count at a
	// time. Turns the operator kept raw (an operation of the policy over
	// them switched off or reverted) stay, and do not count.
	lastSummary := -1
	for ui, u := range us {
		if u.kind == unitSummary {
			lastSummary = ui
		}
	}
	var active []int // unit indices
	for ui := lastSummary + 1; ui < len(us); ui++ {
		u := us[ui]
		if u.kind == unitTurn && !b.any(model.RuleTurns, items, u.first, u.last) {
			active = append(active, ui)
		}
	}
	summaries := 0
	for _, u := range us {
		if u.kind == unitSummary && !u.archive {
			summaries++
		}
	}
	// As the seed's checkAndSummarize: once the active turns pass the
	// most, the oldest summary_turn_count go into a summary (so the
	// thread changes once every few turns, not on every one).
	for len(active) > p.MaxActiveTurns {
		run := consecutive(active[:min(p.SummaryTurnCount, len(active))])
		first, last := us[run[0]].first, us[run[len(run)-1]].last
		if free(first, last) {
			take(Action{Type: model.OpDigest, Rule: model.RuleTurns, First: first, Last: last, Turns: len(run)})
			summaries++
		}
		active = active[len(run):]
	}

	// The summary tier: past max_summaries, every summary but the
	// newest, with the archive, goes into one archive summary (a digest
	// of digests, which nests them whole).
	if summaries > p.MaxSummaries {
		first, last := archiveSpan(us, acts, items)
		if first >= 0 && !b.any(model.RuleArchive, items, first, last) {
			// The span may hold digests Plan just decided on: the archive
			// takes their turns in their place.
			acts = dropWithin(acts, first, last, taken)
			turns, oldArchive := 0, -1
			for ui, u := range us {
				switch {
				case u.first < first || u.last > last:
				case u.kind == unitTurn:
					turns++
				case u.kind == unitSummary:
					turns += items[u.first].Turns
					if u.archive && u.first == first {
						oldArchive = ui
					}
				}
			}
			// Past max_archived_turns, the archive lets its oldest go:
			// the archive there is snipped (its turns stay stored,
			// readable by ID), and the rest make the new one.
			if oldArchive >= 0 && turns > p.MaxArchivedTurns && !b.any(model.RuleArchiveCap, items, first, us[oldArchive].last) {
				old := us[oldArchive]
				take(Action{Type: model.OpSnip, Rule: model.RuleArchiveCap, First: old.first, Last: old.last, Turns: items[old.first].Turns})
				turns -= items[old.first].Turns
				first = old.last + 1
			}
			if first <= last {
				take(Action{Type: model.OpDigest, Rule: model.RuleArchive, First: first, Last: last, Turns: turns})
			}
		}
	}

	if len(acts) > 0 {
		stubs()
		stubbed = true
	}

	// The budget: past it, old tool outputs are stubbed, then the
	// oldest turns that are still raw digested, until the thread would
	// count its target.
	if p.BudgetTokens > 0 {
		total := 0
		for _, it := range items {
			total += it.Tokens
		}
		estimated := func() int {
			est := total
			for _, a := range acts {
				est += estimate(a) - a.Tokens
			}
			return est
		}
		est := estimated()
		if est > p.BudgetTokens && !stubbed {
			stubs()
			est = estimated()
		}
		if est > p.BudgetTokens {
			// Keep the latest turn raw: it is what the model answers.
			lastTurn := -1
			for ui := len(us) - 1; ui >= 0; ui-- {
				if us[ui].kind == unitTurn {
					lastTurn = ui
					break
				}
			}
			var run []int
			flush := func() {
				if len(run) == 0 {
					return
				}
				first, last := us[run[0]].first, us[run[len(run)-1]].last
				a := Action{Type: model.OpDigest, Rule: model.RuleBudget, First: first, Last: last, Turns: len(run)}
				for i := first; i <= last; i++ {
					a.Tokens += items[i].Tokens
				}
				est += estimate(a) - a.Tokens
				take(a)
				run = nil
			}
			for ui := 0; ui < lastTurn && est > p.Target(); ui++ {
				u := us[ui]
				if u.kind != unitTurn || !free(u.first, u.last) || b.any(model.RuleBudget, items, u.first, u.last) {
					flush()
					continue
				}
				run = append(run, ui)
				// Digest a summary's worth at a time, so each summary
				// says something of its own.
				if len(run) == p.SummaryTurnCount {
					flush()
				}
				saved := 0
				for _, r := range run {
					saved += us[r].tokens
				}
				if est-saved+summaryEstimate(len(run)) <= p.Target() {
					flush()
				}
			}
			flush()
			// Still past the target: an agent's latest turn may hold
			// dozens of tool rounds. Its earlier rounds are digested too,
			// the prompt that opens it and its latest rounds kept raw; a
			// round is cut only after its results, so no call loses its
			// result.
			if est > p.Target() && lastTurn >= 0 {
				if a, ok := withinTurn(items, us[lastTurn], est, p.Target(), p.BudgetTokens, free, b); ok {
					take(a)
				}
			}
		}
	}
	// Targets were filled before a later action could drop an earlier
	// one: recount what each acts on.
	for i := range acts {
		acts[i].Tokens = 0
		for j := acts[i].First; j <= acts[i].Last; j++ {
			acts[i].Tokens += items[j].Tokens
		}
	}
	return acts
}

// turnCounts[i] is how many turns the units before i hold.
func turnCounts(us []unit) []int {
	out := make([]int, len(us)+1)
	for i, u := range us {
		out[i+1] = out[i]
		if u.kind == unitTurn {
			out[i+1]++
		}
	}
	return out
}

// consecutive is the leading run of unit indices that follow one
// another in us.
func consecutive(idx []int) []int {
	n := 1
	for n < len(idx) && idx[n] == idx[n-1]+1 {
		n++
	}
	return idx[:n]
}

// archiveSpan is the items the archive summary covers: from the first
// summary (the archive, if there is one) to the end of the last summary
// but the newest, counting the digests acts adds; -1 when there are
// fewer than two.
func archiveSpan(us []unit, acts []Action, items []Item) (first, last int) {
	type span struct{ first, last int }
	var sums []span
	for _, u := range us {
		if u.kind == unitSummary {
			sums = append(sums, span{u.first, u.last})
		}
	}
	for _, a := range acts {
		if a.Type == model.OpDigest {
			sums = append(sums, span{a.First, a.Last})
		}
	}
	slices.SortFunc(sums, func(a, b span) int { return a.first - b.first })
	if len(sums) < 2 {
		return -1, -1
	}
	return sums[0].first, sums[len(sums)-2].last
}

// dropWithin removes the actions inside first..last, freeing their
// items.
func dropWithin(acts []Action, first, last int, taken []bool) []Action {
	return slices.DeleteFunc(acts, func(a Action) bool {
		if a.First >= first && a.Last <= last {
			for i := a.First; i <= a.Last; i++ {
				taken[i] = false
			}
			return true
		}
		return false
	})
}

// estimate is what the thread counts for a's items once a is made.
func estimate(a Action) int {
	switch a.Type {
	case model.OpDigest:
		return min(summaryEstimate(a.Turns), a.Tokens)
	case model.OpRevise:
		return stubTokens
	}
	return 0
}

func summaryEstimate(turns int) int { return min(summaryPerTurn*max(turns, 1), summaryCap) }

// keptRounds is how many of the latest turn's last items a digest
// within it leaves raw while the thread is within its budget: the
// latest two rounds (a call and its results each). Past the budget only
// the latest round is kept: the results the model is to answer.
const keptRounds = 4

// withinTurn is the digest of the earlier part of turn u that brings a
// thread counting est to target (or as near as it may): from the item
// after the turn's prompt to the end of a round (a message of results
// followed by one that is not), never the latest round, and leaving the
// last keptRounds items raw unless the thread would stay past budget;
// false when there is no such cut.
func withinTurn(items []Item, u unit, est, target, budget int, free func(first, last int) bool, b blocked) (Action, bool) {
	start := u.first
	if items[start].Prompt {
		start++
	}
	// What the client put after the prompt for the model to read first
	// (Claude Code's environment) stays.
	for start < u.last && items[start].Role == model.RoleSystem && !items[start].Summary {
		start++
	}
	// The ends of the turn's rounds, but for the latest round's.
	var ends []int
	for j := start; j <= u.last; j++ {
		if !items[j].ToolResult || (j < u.last && items[j+1].ToolResult) {
			continue // not the end of a round
		}
		if j < u.last && items[j].Op != "" && items[j+1].Op == items[j].Op {
			continue // inside another's operation
		}
		ends = append(ends, j)
	}
	if len(ends) > 0 {
		ends = ends[:len(ends)-1]
	}
	best, saved, at := -1, 0, start
	for _, j := range ends {
		if !free(start, j) || b.any(model.RuleRounds, items, start, j) {
			break
		}
		cur := est
		if best >= 0 {
			cur = est - saved + summaryCap
		}
		if j > u.last-keptRounds && cur <= budget {
			break // within the budget already: the latest two rounds stay
		}
		for ; at <= j; at++ {
			saved += items[at].Tokens
		}
		best = j
		if est-saved+summaryCap <= target {
			break
		}
	}
	if best < 0 {
		return Action{}, false
	}
	return Action{Type: model.OpDigest, Rule: model.RuleRounds, First: start, Last: best}, true
}
