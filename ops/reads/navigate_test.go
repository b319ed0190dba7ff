package reads_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/ops/search"
	"weft/ops/timeparse"
	"weft/ops/tools/toolstest"
)

// summarized makes a 300-message session whose first 260 messages are
// digested in five summaries (50, 50, 50, 50 and 60 messages), leaving 40
// unsummarized turns: seed 000's test situation.
func summarized(t *testing.T) (*toolstest.Fixture, string) {
	f := toolstest.New(t)
	sid := f.Session("navigation", 300)
	for k, size := range []int{50, 50, 50, 50, 60} {
		f.MustCall("digest_messages", fmt.Sprintf(`{"start_idx":%d,"end_idx":%d,"summary":"part %d"}`, k, k+size-1, k+1))
	}
	return f, sid
}

func at(minutes int) string {
	return opstest.T0.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)
}

func TestGetConversationContext(t *testing.T) {
	t.Parallel()
	f, _ := summarized(t)
	tests := []struct {
		name                        string
		turns                       int
		raw, summaries, covered     int
		firstSummary, firstRawIndex string
	}{
		{"fewer turns than unsummarized: raw only", 30, 30, 0, 30, "", "m271"},
		{"blend: 200 turns over 40 unsummarized", 200, 40, 3, 200, "part 3", "m261"},
		{"more than the history: everything", 500, 40, 5, 300, "part 1", "m261"},
		{"zero turns: empty", 0, 0, 0, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.MustCall("get_conversation_context", fmt.Sprintf(`{"turns":%d}`, tt.turns)).(reads.ConversationContextResult)
			if r.UnsummarizedCount != 40 || r.RawTurnsCount != tt.raw || r.SummariesCount != tt.summaries || r.TurnsCoveredApprox != tt.covered {
				t.Fatalf("got unsummarized %d raw %d summaries %d covered %d", r.UnsummarizedCount, r.RawTurnsCount, r.SummariesCount, r.TurnsCoveredApprox)
			}
			if len(r.RawTurns) != tt.raw || len(r.Summaries) != tt.summaries {
				t.Fatalf("lists: %d raw, %d summaries", len(r.RawTurns), len(r.Summaries))
			}
			if tt.raw > 0 && string(r.RawTurns[0].ID) != tt.firstRawIndex {
				t.Errorf("first raw turn %s, want %s", r.RawTurns[0].ID, tt.firstRawIndex)
			}
			if tt.summaries > 0 && r.Summaries[0].Content != tt.firstSummary {
				t.Errorf("first summary %q, want %q (oldest first)", r.Summaries[0].Content, tt.firstSummary)
			}
		})
	}
	// The seed's exact keys.
	raw, _ := json.Marshal(f.MustCall("get_conversation_context", `{"turns":200}`))
	for _, key := range []string{"unsummarized_count", "summaries_count", "raw_turns_count", "turns_covered_approx", "summaries", "raw_turns", "time_span_start", "message_count"} {
		if !strings.Contains(string(raw), `"`+key+`"`) {
			t.Errorf("result has no %q", key)
		}
	}
}

func TestGetTurnsSince(t *testing.T) {
	t.Parallel()
	f, _ := summarized(t)
	tests := []struct {
		name                string
		args                string
		messages, summaries int
	}{
		{"before any messages: all history", `{"timestamp":"2026-01-01"}`, 40, 5},
		{"in the future: empty", `{"timestamp":"2030-01-01T00:00:00Z"}`, 0, 0},
		{"inside the 4th summary", fmt.Sprintf(`{"timestamp":%q}`, at(180)), 40, 2},
		// Without summaries: every stored message since, digested or not.
		{"without summaries", fmt.Sprintf(`{"timestamp":%q,"include_summaries":false}`, at(180)), 120, 0},
		{"limited", fmt.Sprintf(`{"timestamp":%q,"limit":10}`, at(180)), 10, 2},
		{"inside the unsummarized turns", fmt.Sprintf(`{"timestamp":%q}`, at(290)), 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.MustCall("get_turns_since", tt.args).(reads.TurnsSinceResult)
			if r.MessagesCount != tt.messages || r.SummariesCount != tt.summaries || len(r.Messages) != tt.messages {
				t.Fatalf("got %d messages, %d summaries; want %d, %d", r.MessagesCount, r.SummariesCount, tt.messages, tt.summaries)
			}
			for i := 1; i < len(r.Messages); i++ {
				if r.Messages[i].CreatedAt < r.Messages[i-1].CreatedAt {
					t.Fatalf("messages not oldest first")
				}
			}
		})
	}
}

func TestGetTurnsAround(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("around", 100)
	tests := []struct {
		name          string
		args          string
		before, after int
		first         model.ItemID
	}{
		{"centre: 20 before, 20 after", fmt.Sprintf(`{"timestamp":%q,"count":40}`, at(50)), 20, 20, "m31"},
		{"start of history: 0 before, 40 after", fmt.Sprintf(`{"timestamp":%q}`, at(-30)), 0, 40, "m1"},
		{"before_ratio 0.7: 28 before, 12 after", fmt.Sprintf(`{"timestamp":%q,"before_ratio":0.7}`, at(50)), 28, 12, "m23"},
		{"count 0: empty", fmt.Sprintf(`{"timestamp":%q,"count":0}`, at(50)), 0, 0, ""},
		{"end of history: only before", `{"timestamp":"2030-01-01T00:00:00Z"}`, 40, 0, "m61"},
		{"ratio above 1 clamps", fmt.Sprintf(`{"timestamp":%q,"before_ratio":3}`, at(50)), 40, 0, "m11"},
		{"ratio below 0 clamps", fmt.Sprintf(`{"timestamp":%q,"before_ratio":-1,"count":10}`, at(50)), 0, 10, "m51"},
		{"near the start the after side fills", fmt.Sprintf(`{"timestamp":%q,"count":40}`, at(5)), 5, 35, "m1"},
		{"between two messages: the later one centres", `{"timestamp":"2026-01-26T09:50:30Z","count":2}`, 1, 1, "m51"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.MustCall("get_turns_around", tt.args).(reads.TurnsAroundResult)
			if r.BeforeCount != tt.before || r.AfterCount != tt.after || r.TotalCount != tt.before+tt.after || len(r.Messages) != r.TotalCount {
				t.Fatalf("got before %d after %d total %d (%d messages)", r.BeforeCount, r.AfterCount, r.TotalCount, len(r.Messages))
			}
			if tt.first != "" && r.Messages[0].ID != tt.first {
				t.Errorf("window starts at %s, want %s", r.Messages[0].ID, tt.first)
			}
		})
	}
}

func TestGetTurnsAroundADigestedMoment(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("around digest", 20)
	f.MustCall("digest_messages", `{"start_idx":5,"end_idx":14,"summary":"middle"}`)
	r := f.MustCall("get_turns_around", fmt.Sprintf(`{"timestamp":%q,"count":3}`, at(9))).(reads.TurnsAroundResult)
	if len(r.Messages) != 3 || !r.Messages[1].Synthetic || r.Messages[1].Content != "middle" {
		t.Fatalf("around a digested moment: %+v", r.Messages)
	}
}

func TestGetStartupContext(t *testing.T) {
	t.Parallel()
	f, _ := summarized(t)
	r := f.MustCall("get_startup_context", `{}`).(reads.StartupContextResult)
	if len(r.Summaries) != 2 || r.Summaries[0].Content != "part 4" || r.Summaries[1].Content != "part 5" {
		t.Fatalf("summaries: %+v", r.Summaries)
	}
	if r.UnsummarizedCount != 40 || len(r.Unsummarized) != 40 {
		t.Fatalf("unsummarized: %d (%d listed), want ALL 40", r.UnsummarizedCount, len(r.Unsummarized))
	}
	if s := r.Summaries[1]; s.MessageCount != 60 || s.TimeSpanStart != at(200) || s.TimeSpanEnd != at(259) {
		t.Errorf("summary 5: %+v", s)
	}
	none := f.MustCall("get_startup_context", `{"summaries":0}`).(reads.StartupContextResult)
	if len(none.Summaries) != 0 || none.UnsummarizedCount != 40 {
		t.Errorf("summaries=0: %+v", none)
	}
}

func TestSearchSessionHistory(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("search", 30)
	f.MustCall("append_messages", `{"messages":[{"role":"user","content":"Should we use PostgreSQL with asyncpg?"},{"role":"assistant","content":"Yes: postgres, pooled."}]}`)
	f.MustCall("digest_messages", `{"start_idx":0,"end_idx":9,"summary":"Early talk about the DATABASE"}`)

	r := f.MustCall("search_session_history", `{"query":"postgres"}`).(reads.SearchResult)
	if r.TotalMatches != 2 || r.Matches[0].ID != "m31" || r.Matches[0].Index != 21 || r.Matches[0].Message != nil {
		t.Fatalf("substring: %+v", r)
	}
	if got := r.Matches[0].Snippet; got != "Should we use **PostgreS**QL with asyncpg?" {
		t.Errorf("snippet %q", got)
	}
	r = f.MustCall("search_session_history", `{"query":"database","whole":true}`).(reads.SearchResult)
	if r.TotalMatches != 1 || r.Matches[0].Message == nil || !r.Matches[0].Message.Synthetic || r.Matches[0].Message.Content != "Early talk about the DATABASE" {
		t.Fatalf("synthetic items are searched: %+v", r)
	}
	r = f.MustCall("search_session_history", `{"query":"message 3"}`).(reads.SearchResult)
	// message 3, 30 are in the effective thread; message 3 itself is digested.
	if r.TotalMatches != 1 || r.Matches[0].ID != "m30" {
		t.Fatalf("digested messages are not in the effective thread: %+v", r)
	}
	r = f.MustCall("search_session_history", `{"query":"message 3","view":"raw"}`).(reads.SearchResult)
	if r.TotalMatches != 2 || r.Matches[0].Index != 2 {
		t.Fatalf("raw: %+v", r)
	}
	r = f.MustCall("search_session_history", `{"query":"pgsql","mode":"fuzzy"}`).(reads.SearchResult)
	if r.TotalMatches != 1 || r.Matches[0].ID != "m31" || !strings.Contains(r.Matches[0].Snippet, "**") {
		t.Fatalf("fuzzy: %+v", r)
	}
	r = f.MustCall("search_session_history", `{"query":"message","limit":3}`).(reads.SearchResult)
	if r.TotalMatches != 20 || len(r.Matches) != 3 {
		t.Fatalf("limit: total %d, %d listed", r.TotalMatches, len(r.Matches))
	}
	_ = sid
}

func TestContextPreferencesAreUsedOnce(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("prefs", 20)
	f.MustCall("request_context_slice", `{"start_message_index":4,"end_message_index":6,"include_search_results":true,"query":"message 19"}`)
	// An edit before the assembly does not shift the slice: it is kept by ID.
	f.MustCall("snip_messages", `{"start_idx":0,"end_idx":1}`)
	r := f.MustCall("assemble_context", `{}`).(reads.AssembleResult)
	if r.Preferences == nil || r.Count != 4 {
		t.Fatalf("first assembly: %d messages, prefs %v", r.Count, r.Preferences)
	}
	var got []string
	for _, m := range r.Messages {
		got = append(got, m.Content)
	}
	if want := "message 5,message 6,message 7,message 19"; strings.Join(got, ",") != want {
		t.Fatalf("assembled %q, want %q", strings.Join(got, ","), want)
	}
	r = f.MustCall("assemble_context", `{"format":"text","max_messages":2}`).(reads.AssembleResult)
	if r.Preferences != nil || r.Count != 2 || !strings.Contains(r.Text, "message 20") {
		t.Fatalf("second assembly used preferences again or ignored max_messages: %+v", r)
	}
}

func TestFuzzyLines(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("fuzzy", 10)
	f.MustCall("append_messages", `{"messages":[{"role":"user","content":"first line\nwe should use PostgreSQL here\nlast"},{"role":"assistant","content":"pg sql? maybe"}]}`)
	hits, state, err := search.FuzzyLines(f.Svc, sid, "pgsql", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || state.Candidates() != 2 {
		t.Fatalf("hits %+v candidates %d", hits, state.Candidates())
	}
	for _, h := range hits {
		if strings.Contains(h.Line, "\n") || len(h.Matched) != 5 {
			t.Errorf("hit %+v: want one line and 5 matched bytes", h)
		}
	}
	// Narrowing: the candidates of "pgsql" hold every match of "pgsqlh".
	narrowed, _, _ := search.FuzzyLines(f.Svc, sid, "pgsqlh", state, 10)
	full, _, _ := search.FuzzyLines(f.Svc, sid, "pgsqlh", nil, 10)
	if len(narrowed) != len(full) || len(full) != 1 || full[0].Index != 10 {
		t.Fatalf("narrowed %+v, full %+v", narrowed, full)
	}
	// A state from before an edit is not used: indices have moved.
	f.MustCall("snip_messages", `{"start_idx":0,"end_idx":0}`)
	after, _, _ := search.FuzzyLines(f.Svc, sid, "pgsqlh", state, 10)
	if len(after) != 1 || after[0].Index != 9 {
		t.Fatalf("after a snip, with the old state: %+v", after)
	}
}

func TestTimelineAndItemAt(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("timeline", 60) // one a minute from opstest.T0
	f.MustCall("digest_messages", `{"start_idx":10,"end_idx":19,"summary":"s"}`)
	tl, err := f.Svc.Timeline(sid, 6)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range tl.Counts {
		total += c
	}
	if total != 60 || tl.Counts[0] != 10 || !tl.Start.Equal(opstest.T0) {
		t.Fatalf("timeline %+v", tl)
	}
	// Every message is counted in the span Bucket puts its time in, the
	// one the TUI's strip marks the cursor's message in.
	want := make([]int, 6)
	for k := range 60 {
		want[tl.Bucket(opstest.T0.Add(time.Duration(k)*time.Minute))]++
	}
	if !slices.Equal(tl.Counts, want) {
		t.Fatalf("timeline counts %v, Bucket's %v", tl.Counts, want)
	}
	for _, tt := range []struct {
		when string
		want int
	}{
		{at(5), 5}, {at(15), 10}, {at(25), 16}, {at(-10), 0}, {"2030-01-01", 51},
	} {
		got, _, err := f.Svc.ItemAt(sid, tt.when, time.Time{})
		if err != nil || got != tt.want {
			t.Errorf("ItemAt(%s) = %d (%v), want %d", tt.when, got, err, tt.want)
		}
	}
	var perr *timeparse.Error
	if _, _, err := f.Svc.ItemAt(sid, "soonish", time.Time{}); !errors.As(err, &perr) || !strings.Contains(err.Error(), "accepted forms") {
		t.Errorf("bad time: %v", err)
	}
	// Forms without a date, and relative ones, count from the base.
	base := opstest.T0.Add(30 * time.Minute)
	for _, tt := range []struct {
		when string
		want int
	}{
		{"-10m", 11}, {"10 minutes ago", 11}, {base.Local().Add(5 * time.Minute).Format("15:04"), 26}, {"now", 21},
	} {
		got, _, err := f.Svc.ItemAt(sid, tt.when, base)
		if err != nil || got != tt.want {
			t.Errorf("ItemAt(%s) from %v = %d (%v), want %d", tt.when, base, got, err, tt.want)
		}
	}
}
