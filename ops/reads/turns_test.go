package reads_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// effectiveThread makes 15 messages (m1..m15, one minute apart), inserts
// one after m13 and revises m11..m12 into one: items 0..9 are m1..m10,
// then the revision, m13, the insertion, m14, m15.
func effectiveThread(t *testing.T) (*toolstest.Fixture, string) {
	f := toolstest.New(t)
	sid := f.Session("turns", 15)
	f.MustCall("insert_messages", `{"after_idx":12,"messages":[{"role":"assistant","content":"inserted"}]}`)
	f.MustCall("revise_messages", `{"start_idx":10,"end_idx":11,"replacements":[{"role":"user","content":"revised"}]}`)
	return f, sid
}

func indices(ms []reads.MessageOut) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Index
	}
	return out
}

// Revisions and insertions are turns: the context tools count and return
// them like stored messages.
func TestRevisionsAndInsertionsAreTurns(t *testing.T) {
	t.Parallel()
	f, _ := effectiveThread(t)
	ctx := f.MustCall("get_conversation_context", `{"turns":5}`).(reads.ConversationContextResult)
	if got, want := indices(ctx.RawTurns), []int{10, 11, 12, 13, 14}; !slices.Equal(got, want) {
		t.Errorf("get_conversation_context turns=5: indices %v, want %v", got, want)
	}
	if ctx.UnsummarizedCount != 15 {
		t.Errorf("unsummarized_count %d, want 15", ctx.UnsummarizedCount)
	}
	start := f.MustCall("get_startup_context", `{}`).(reads.StartupContextResult)
	if start.UnsummarizedCount != 15 || len(start.Unsummarized) != 15 {
		t.Errorf("get_startup_context: %d unsummarized (%d listed), want 15", start.UnsummarizedCount, len(start.Unsummarized))
	}
	// Since m11's time: the revision (dated where it stands), m13, the
	// insertion (dated after m13), m14, m15.
	since := f.MustCall("get_turns_since", fmt.Sprintf(`{"timestamp":%q}`, at(10))).(reads.TurnsSinceResult)
	if got, want := indices(since.Messages), []int{10, 11, 12, 13, 14}; !slices.Equal(got, want) {
		t.Errorf("get_turns_since: indices %v, want %v", got, want)
	}
}

// A synthetic item carries the time span it stands for, and a created_at
// inside it, never the time it was made.
func TestSyntheticItemsCarryTheirSpan(t *testing.T) {
	t.Parallel()
	f, _ := effectiveThread(t)
	f.Now = opstest.T0.Add(300 * 24 * time.Hour) // the edits are made long after
	f.MustCall("digest_messages", `{"start_idx":2,"end_idx":4,"summary":"three"}`)
	r := f.MustCall("get_message_range", `{"start_idx":0,"end_idx":12}`).(reads.MessageRangeResult)
	for _, m := range r.Messages {
		if !m.Synthetic {
			continue
		}
		if m.TimeSpanStart == "" || m.TimeSpanEnd == "" {
			t.Errorf("item %d (%s) has no time span", m.Index, m.ID)
			continue
		}
		if m.CreatedAt < m.TimeSpanStart || m.CreatedAt > m.TimeSpanEnd {
			t.Errorf("item %d (%s): created_at %s outside its span %s..%s", m.Index, m.ID, m.CreatedAt, m.TimeSpanStart, m.TimeSpanEnd)
		}
		if m.CreatedAt >= ops.FormatTime(opstest.T0.Add(24*time.Hour)) {
			t.Errorf("item %d (%s) dated %s, when it was made, not when what it stands for was", m.Index, m.ID, m.CreatedAt)
		}
	}
	// The digest of m3..m5 spans their times.
	d := r.Messages[2]
	if d.TimeSpanStart != at(2) || d.TimeSpanEnd != at(4) {
		t.Errorf("digest spans %s..%s, want %s..%s", d.TimeSpanStart, d.TimeSpanEnd, at(2), at(4))
	}
}

// A digest's summary that is revised (exactly that one item) is still a
// summary, covering what the digest covered.
func TestARevisedSummaryIsStillASummary(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("revised summary", 20)
	f.MustCall("digest_messages", `{"start_idx":0,"end_idx":5,"summary":"first six"}`)
	f.MustCall("revise_messages", `{"start_idx":0,"end_idx":0,"replacements":[{"role":"system","content":"first six, better put"}]}`)
	ctx := f.MustCall("get_conversation_context", `{"turns":30}`).(reads.ConversationContextResult)
	if len(ctx.Summaries) != 1 || ctx.Summaries[0].Content != "first six, better put" || ctx.Summaries[0].MessageCount != 6 {
		t.Fatalf("summaries %+v, want the revised one covering 6 messages", ctx.Summaries)
	}
	if s := ctx.Summaries[0]; s.TimeSpanStart != at(0) || s.TimeSpanEnd != at(5) {
		t.Errorf("span %s..%s, want %s..%s", s.TimeSpanStart, s.TimeSpanEnd, at(0), at(5))
	}
	if ctx.UnsummarizedCount != 14 || ctx.TurnsCoveredApprox != 20 {
		t.Errorf("unsummarized %d, covered %d; want 14, 20", ctx.UnsummarizedCount, ctx.TurnsCoveredApprox)
	}
}

// Without summaries, get_turns_since returns every stored message at or
// after the time, as seed 000's query does, saying which the effective
// thread hides.
func TestTurnsSinceWithoutSummariesIsEveryStoredMessage(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("since", 10)
	f.MustCall("digest_messages", `{"start_idx":2,"end_idx":5,"summary":"middle"}`)
	r := f.MustCall("get_turns_since", fmt.Sprintf(`{"timestamp":%q,"include_summaries":false}`, at(1))).(reads.TurnsSinceResult)
	if r.MessagesCount != 9 || len(r.Messages) != 9 {
		t.Fatalf("%d messages, want 9 (m2..m10)", len(r.Messages))
	}
	for _, m := range r.Messages {
		hidden := m.ID >= "m3" && m.ID <= "m6" && len(m.ID) == 2
		if m.Hidden == nil || *m.Hidden != hidden {
			t.Errorf("%s: hidden %v, want %v", m.ID, m.Hidden, hidden)
		}
	}
}

// A limit that cuts a result says so, and how many more there are.
func TestALimitThatCutsSaysSo(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("limit", 30)
	r := f.MustCall("get_turns_since", fmt.Sprintf(`{"timestamp":%q,"limit":10}`, at(0))).(reads.TurnsSinceResult)
	if len(r.Messages) != 10 || !r.Truncated || r.More != 20 {
		t.Errorf("limit 10 of 30: %d messages, truncated %v, more %d", len(r.Messages), r.Truncated, r.More)
	}
	r = f.MustCall("get_turns_since", fmt.Sprintf(`{"timestamp":%q,"limit":30}`, at(0))).(reads.TurnsSinceResult)
	if r.Truncated || r.More != 0 {
		t.Errorf("limit 30 of 30: truncated %v, more %d", r.Truncated, r.More)
	}
}
