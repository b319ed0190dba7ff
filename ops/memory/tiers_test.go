package memory_test

import (
	"context"
	"strings"
	"testing"

	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/memory"
	"weft/ops/opstest"
)

// The seed's tiers, read back: after the policy made its summaries and
// its archive, get_tiered_history counts each tier's turns, items and
// tokens, and the archive stands for every turn it took in.
func TestTieredHistory(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	sid := f.Messages("limiter", append([]model.NewMessage{{Role: model.RoleSystem, Content: "You are a careful engineer."}}, turns(0, 31)...))
	res := setSeed(t, f, sid)
	// 31 turns: 21 go into summaries of 5 (turns 0..19; 20 stays with
	// the 11 active... ) — the archive takes all but the newest summary.
	if res.Check == nil || len(res.Check.Made) == 0 {
		t.Fatalf("set_memory_policy made nothing: %+v", res)
	}
	tiers, err := memory.GetTieredHistory(f.Svc, ctx, memory.TieredHistoryArgs{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	if tiers.Preamble.Items != 1 || tiers.Active.Turns > 10 || tiers.Active.Turns < 6 {
		t.Errorf("preamble %+v, active %+v", tiers.Preamble, tiers.Active)
	}
	if tiers.Archive == nil || tiers.Archive.Rule != model.RuleArchive || tiers.Archive.Source != ops.SourceExtractive {
		t.Fatalf("archive %+v", tiers.Archive)
	}
	covered := tiers.Archive.Turns + tiers.Active.Turns
	for _, s := range tiers.Summaries {
		covered += s.Turns
	}
	if covered != 31 || len(tiers.Summaries) > 3 {
		t.Errorf("the tiers stand for %d turns (archive %d, %d summaries, %d active), want 31", covered, tiers.Archive.Turns, len(tiers.Summaries), tiers.Active.Turns)
	}
	if tiers.Tokens >= tiers.RawTokens {
		t.Errorf("effective %d tokens, stored %d", tiers.Tokens, tiers.RawTokens)
	}
}

// summarize_conversation digests the oldest active turns now, below any
// threshold, and never the latest; with one turn there is nothing to do.
func TestSummarizeConversation(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	sid := f.Messages("limiter", turns(0, 3))
	res, err := memory.SummarizeConversation(f.Svc, ctx, memory.SummarizeConversationArgs{SessionID: sid})
	if err != nil || len(res.Made) != 1 || res.Made[0].Items != 4 {
		t.Fatalf("made %+v, %v: want turns 0 and 1 digested", res.Made, err)
	}
	one := f.Messages("short", turns(0, 1))
	before := f.FileHash()
	if _, err := memory.SummarizeConversation(f.Svc, ctx, memory.SummarizeConversationArgs{SessionID: one}); err == nil {
		t.Error("a session of one turn was summarized")
	}
	if f.FileHash() != before {
		t.Error("a refused summarize changed the file")
	}
}

// format_history_for_prompt gives the summaries and the latest turns
// within its budget, oldest first.
func TestFormatHistoryForPrompt(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	sid := f.Messages("limiter", turns(0, 40))
	setSeed(t, f, sid)
	for _, budget := range []int{100, 400, 2000} {
		res, err := memory.FormatHistoryForPrompt(f.Svc, ctx, memory.FormatHistoryArgs{SessionID: sid, MaxTokens: &budget})
		if err != nil {
			t.Fatal(err)
		}
		if res.Tokens > budget || tokens.Count(res.History) != res.Tokens {
			t.Errorf("budget %d: %d tokens (counted %d)", budget, res.Tokens, tokens.Count(res.History))
		}
		if !strings.Contains(res.History, "Answer 39") {
			t.Errorf("budget %d: the latest turn is not in the history:\n%s", budget, res.History)
		}
		if budget == 2000 && (res.Summaries == 0 || !strings.Contains(res.History, "[summary]")) {
			t.Errorf("budget 2000: %d summaries:\n%s", res.Summaries, res.History)
		}
		if i, j := strings.Index(res.History, "Answer 38"), strings.Index(res.History, "Answer 39"); i >= 0 && i > j {
			t.Errorf("budget %d: not oldest first", budget)
		}
	}
	if _, err := memory.FormatHistoryForPrompt(f.Svc, ctx, memory.FormatHistoryArgs{SessionID: sid, MaxTokens: new(5)}); err == nil {
		t.Error("max_tokens 5 was taken")
	}
}
