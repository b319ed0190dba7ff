package memory

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"weft/formats"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/store"
)

// Tier is one tier of a session's memory.
type Tier struct {
	// Items are the effective thread's items in it; Turns the turns it
	// stands for (a summary's, those it digested).
	Items  int `json:"items"`
	Turns  int `json:"turns"`
	Tokens int `json:"tokens"`
	// Messages is how many stored messages it stands for.
	Messages      int    `json:"messages"`
	TimeSpanStart string `json:"time_span_start,omitempty"`
	TimeSpanEnd   string `json:"time_span_end,omitempty"`
}

// SummaryOut is one summary of the summary tier, or the archive.
type SummaryOut struct {
	ID     model.ItemID `json:"id"`
	Index  int          `json:"index"`
	Author string       `json:"author"`
	Rule   string       `json:"rule,omitempty"`
	Source string       `json:"summary_source,omitempty"`
	Tier
}

// TieredHistoryArgs are get_tiered_history's arguments.
type TieredHistoryArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
}

// TieredResult is get_tiered_history's result: the session's memory in
// the seed's three tiers, as counts, spans and tokens (the items
// themselves are read with get_message_range).
type TieredResult struct {
	SessionID string              `json:"session_id"`
	Version   uint64              `json:"version"`
	Policy    *model.MemoryPolicy `json:"policy"`
	// Preamble is the system prompt before the first turn.
	Preamble Tier `json:"preamble"`
	// Active are the turns after the last summary, raw.
	Active Tier `json:"active"`
	// Summaries are the summaries that are not the archive, oldest
	// first, at most maxSummariesOut of the latest (SummariesOmitted
	// counts the others).
	Summaries        []SummaryOut `json:"summaries"`
	SummariesOmitted int          `json:"summaries_omitted,omitempty"`
	// Archive is the summary of the oldest summaries, if there is one.
	Archive *SummaryOut `json:"archive,omitempty"`
	// Older are the raw turns before the last summary that no summary
	// covers (an operator's digest of a middle stretch leaves them).
	Older Tier `json:"older"`
	// Tokens is the effective thread's, RawTokens the stored thread's.
	Tokens    int `json:"tokens"`
	RawTokens int `json:"raw_tokens"`
	// Proxy is the session's requests through the context proxy since
	// this weft started: what the provider said they cost, and how often
	// the prompt cache's prefix broke.
	Proxy *ops.ProxyStats `json:"proxy,omitempty"`
}

// maxSummariesOut bounds the summaries a tiered history lists (about
// 250 bytes each): a thread summarized by hand may hold hundreds, and the
// result stays within what every client keeps whole.
const maxSummariesOut = 20

// GetTieredHistory returns a session's memory by tier
// (get_tiered_history).
func GetTieredHistory(s *ops.Service, ctx context.Context, a TieredHistoryArgs) (TieredResult, error) {
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return TieredResult{}, err
	}
	its, err := items(s, snap)
	if err != nil {
		return TieredResult{}, err
	}
	v := snap.View
	res := TieredResult{SessionID: snap.Info.ID, Version: snap.Info.Version, Policy: snap.Info.Memory, Tokens: v.Tokens, RawTokens: v.RawTokens, Summaries: []SummaryOut{}, Proxy: s.ProxyStatsOf(snap.Info.ID)}
	us := units(its)
	last := -1
	for ui, u := range us {
		if u.kind == unitSummary {
			last = ui
		}
	}
	for ui, u := range us {
		switch {
		case u.kind == unitPreamble:
			res.Preamble.add(v, snap.Heads, u, 0)
		case u.kind == unitSummary:
			sum := summaryOut(v, snap, its, u)
			if u.archive {
				res.Archive = &sum
			} else {
				res.Summaries = append(res.Summaries, sum)
			}
		case ui > last:
			res.Active.add(v, snap.Heads, u, 1)
		default:
			res.Older.add(v, snap.Heads, u, 1)
		}
	}
	if n := len(res.Summaries); n > maxSummariesOut {
		res.SummariesOmitted = n - maxSummariesOut
		res.Summaries = res.Summaries[n-maxSummariesOut:]
	}
	return res, nil
}

// add counts the unit u of v, standing for turns turns, in t.
func (t *Tier) add(v *model.View, heads []model.Head, u unit, turns int) {
	t.Items += u.last - u.first + 1
	t.Turns += turns
	t.Tokens += u.tokens
	for i := u.first; i <= u.last; i++ {
		it := v.Items[i]
		var from, to time.Time
		if it.Seq > 0 {
			t.Messages++
			from = heads[it.Seq-1].Time()
			to = from
		} else {
			sy := v.Synth[it.Synth]
			t.Messages += sy.MessageCount
			from, to = sy.TimeSpanStart, sy.TimeSpanEnd
		}
		t.span(from, to)
	}
}

func (t *Tier) span(from, to time.Time) {
	if from.IsZero() {
		return
	}
	if f := ops.FormatTime(from); t.TimeSpanStart == "" || f < t.TimeSpanStart {
		t.TimeSpanStart = f
	}
	if l := ops.FormatTime(to); l > t.TimeSpanEnd {
		t.TimeSpanEnd = l
	}
}

// summaryOut describes the summary unit u.
func summaryOut(v *model.View, snap ops.Snapshot, its []Item, u unit) SummaryOut {
	it := its[u.first]
	out := SummaryOut{ID: it.ID, Index: u.first, Author: it.Author, Rule: it.Rule}
	out.add(v, snap.Heads, u, 0)
	for i := range snap.Ops {
		if op := &snap.Ops[i]; op.ID == it.Op {
			out.Source = op.Payload.SummarySource
			out.Turns = turnsCovered(op)
		}
	}
	return out
}

// turnsCovered is how many turns a digest of the policy covered (it
// records them); 0 for another's digest, which does not say.
func turnsCovered(op *model.Op) int {
	if op.Rule == "" {
		return 0
	}
	return op.Turns
}

// SummarizeConversationArgs are summarize_conversation's arguments.
type SummarizeConversationArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
}

// SummarizeConversation digests the oldest active turns now, whatever
// the thresholds (the seed's forceSummarize): summary_turn_count of
// them (of the session's policy, or the seed's 5), the latest turn
// always kept raw. The digest is the policy's, reversible like any.
func SummarizeConversation(s *ops.Service, ctx context.Context, a SummarizeConversationArgs) (CheckResult, error) {
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return CheckResult{}, err
	}
	p := model.DefaultMemoryPolicy()
	if snap.Info.Memory != nil {
		p = *snap.Info.Memory
	}
	res := CheckResult{SessionID: snap.Info.ID, Version: snap.Info.Version, Policy: snap.Info.Memory != nil, TokensBefore: snap.View.Tokens, TokensAfter: snap.View.Tokens}
	its, err := items(s, snap)
	if err != nil {
		return res, err
	}
	act, ok := forced(its, p, snap.Ops)
	if !ok {
		return res, ops.Invalidf("session %s has no turns to summarize: the active turns are the latest one or none (get_tiered_history shows the tiers)", snap.Info.ID)
	}
	made, err := make1(ops.WithRule(ops.WithAuthor(ctx, model.MemoryAuthor), ops.Rule{Name: act.Rule, Turns: act.Turns}), s, snap, act, its, snap.Info.Version)
	if err != nil {
		return res, err
	}
	res.Made = []Made{made}
	after, err := s.Snapshot(snap.Info.ID)
	if err != nil {
		return res, err
	}
	res.Version, res.TokensAfter = after.Info.Version, after.View.Tokens
	return res, nil
}

// forced is the digest summarize_conversation makes: the oldest active
// turns, up to summary_turn_count, never the latest.
func forced(its []Item, p model.MemoryPolicy, opsMade []model.Op) (Action, bool) {
	us := units(its)
	b := blockedBy(opsMade)
	last := -1
	for ui, u := range us {
		if u.kind == unitSummary {
			last = ui
		}
	}
	var active []int
	for ui := last + 1; ui < len(us); ui++ {
		if u := us[ui]; u.kind == unitTurn && !b.any(model.RuleTurns, its, u.first, u.last) {
			active = append(active, ui)
		}
	}
	if len(active) < 2 {
		return Action{}, false
	}
	run := consecutive(active[:min(p.SummaryTurnCount, len(active)-1)])
	a := Action{Type: model.OpDigest, Rule: model.RuleTurns, First: us[run[0]].first, Last: us[run[len(run)-1]].last, Turns: len(run)}
	for i := a.First; i <= a.Last; i++ {
		a.Targets = append(a.Targets, its[i].ID)
		a.Tokens += its[i].Tokens
	}
	return a, true
}

// FormatHistoryArgs are format_history_for_prompt's arguments.
type FormatHistoryArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"the most the history may count (default: the policy's max_tokens, else 2000; 100..100000)"`
}

// FormatHistoryResult is format_history_for_prompt's result.
type FormatHistoryResult struct {
	SessionID string `json:"session_id"`
	Version   uint64 `json:"version"`
	// History is the text to put in a prompt: the archive, the
	// summaries, then the latest turns, oldest first.
	History   string `json:"history"`
	Tokens    int    `json:"tokens"`
	MaxTokens int    `json:"max_tokens"`
	// Summaries and Turns are how many of each it holds; LeftOut the
	// items that did not fit (the oldest first).
	Summaries int `json:"summaries"`
	Turns     int `json:"turns"`
	LeftOut   int `json:"left_out"`
}

// FormatHistoryForPrompt writes the session's memory as text for a
// prompt, within a budget (the seed's formatHistoryForPrompt): the
// summaries, oldest first, and the latest turns that fit after them.
// What does not fit goes, the oldest turns first, then the oldest
// summaries.
func FormatHistoryForPrompt(s *ops.Service, ctx context.Context, a FormatHistoryArgs) (FormatHistoryResult, error) {
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return FormatHistoryResult{}, err
	}
	budget := model.DefaultMemoryPolicy().MaxTokens
	if p := snap.Info.Memory; p != nil {
		budget = p.MaxTokens
	}
	if a.MaxTokens != nil {
		budget = *a.MaxTokens
		if budget < 100 || budget > 100_000 {
			return FormatHistoryResult{}, ops.Invalidf("max_tokens %d is outside 100..100000", budget)
		}
	} else if c, ok := reads.CapFrom(ctx); ok {
		// Within what the calling client keeps whole, with room for the
		// result's other fields and the text's escapes.
		budget = min(budget, c.Tokens*8/10)
		if c.Bytes > 0 {
			budget = min(budget, c.Bytes/5)
		}
	}
	its, err := items(s, snap)
	if err != nil {
		return FormatHistoryResult{}, err
	}
	v := snap.View
	res := FormatHistoryResult{SessionID: snap.Info.ID, Version: snap.Info.Version, MaxTokens: budget}
	// The summaries first, then turns from the latest back, while they
	// fit; a turn whole or not at all.
	var sums, turns []unit
	for _, u := range units(its) {
		switch u.kind {
		case unitSummary:
			sums = append(sums, u)
		case unitTurn:
			turns = append(turns, u)
		}
	}
	var indices []int
	lineCost := func(u unit) int { return u.tokens + 4*(u.last-u.first+1) }
	room := budget - 10
	keptSums := sums
	for sumCost(keptSums, lineCost) > room && len(keptSums) > 0 {
		keptSums = keptSums[1:]
		res.LeftOut++
	}
	room -= sumCost(keptSums, lineCost)
	// The latest turn always goes in, cut if it must be: it is what
	// the prompt follows on from.
	k := len(turns)
	for k > 0 && (k == len(turns) || lineCost(turns[k-1]) <= room) {
		room -= lineCost(turns[k-1])
		k--
	}
	for _, t := range turns[:k] {
		res.LeftOut += t.last - t.first + 1
	}
	for _, u := range keptSums {
		for i := u.first; i <= u.last; i++ {
			indices = append(indices, i)
		}
	}
	for _, u := range turns[k:] {
		for i := u.first; i <= u.last; i++ {
			indices = append(indices, i)
		}
	}
	res.Summaries, res.Turns = len(keptSums), len(turns)-k
	var text []formats.Item
	err = s.Store().View(func(tx store.Tx) error {
		text, _, err = ops.TextItems(tx, v, indices)
		return err
	})
	if err != nil {
		return res, err
	}
	var b strings.Builder
	for _, it := range text {
		if it.Synthetic && it.OpType == model.OpDigest {
			fmt.Fprintf(&b, "[summary] %s\n\n", strings.TrimSpace(it.Content))
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n\n", it.Role, strings.TrimSpace(it.Content))
	}
	res.History = strings.TrimSpace(b.String())
	res.Tokens = tokens.Count(res.History)
	if res.Tokens > budget {
		// The counts above are the items' own; the text may count more:
		// it is cut at its start (the oldest) to the budget.
		res.History = "… " + cutStart(res.History, budget-2)
		res.Tokens = tokens.Count(res.History)
	}
	return res, nil
}

// cutStart keeps the end of s that counts about n tokens, from a line
// start where one is near.
func cutStart(s string, n int) string {
	for range 8 {
		c := tokens.Count(s)
		if c <= n {
			return s
		}
		at := len(s) - int(int64(len(s))*int64(n)*9/10/int64(c))
		for at < len(s) && !utf8.RuneStart(s[at]) {
			at++
		}
		if nl := strings.IndexByte(s[at:], '\n'); nl >= 0 && nl < 200 {
			at += nl + 1
		}
		s = s[at:]
	}
	return s
}

func sumCost(us []unit, cost func(unit) int) int {
	n := 0
	for _, u := range us {
		n += cost(u)
	}
	return n
}
