package reads_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// taggedSession makes 12 messages, "message <seq>", with db on m3, m4
// and m8 and auth on m6; then a digest of m10..m11, so that indices and
// seqs part (the digest's summary is index 9, m12 is index 10).
func taggedSession(t *testing.T) (*toolstest.Fixture, string) {
	t.Helper()
	f := toolstest.New(t)
	sid := f.Session("tagged reads", 12)
	f.MustCall("tag_messages", `{"ids":["m3","m4","m8"],"tags":["db"]}`)
	f.MustCall("tag_messages", `{"ids":["m6"],"tags":["auth"]}`)
	f.MustCall("digest_messages", `{"ids":["m10","m11"],"summary":"a message about the weather"}`)
	f.MustCall("tag_messages", `{"ids":["m12"],"tags":["db"]}`)
	return f, sid
}

// given are the items a read gave, by index.
func given(t *testing.T, res any) []int {
	t.Helper()
	var out []int
	switch r := res.(type) {
	case reads.MessageRangeResult:
		for _, m := range r.Messages {
			out = append(out, m.Index)
		}
	case reads.SearchResult:
		for _, m := range r.Matches {
			out = append(out, m.Index)
		}
	case reads.SessionHistoryResult:
		for _, m := range r.Messages {
			out = append(out, m.Index)
		}
		for _, at := range regexp.MustCompile(`(?m)^\[(\d+)\]`).FindAllStringSubmatch(r.Text, -1) {
			i, _ := strconv.Atoi(at[1])
			out = append(out, i)
		}
	default:
		t.Fatalf("result %T", res)
	}
	return out
}

func TestReadsFilterByTag(t *testing.T) {
	t.Parallel()
	f, _ := taggedSession(t)
	tests := []struct {
		tool, args string
		want       []int
	}{
		{"get_message_range", `{"tags":["db"]}`, []int{2, 3, 7, 10}},
		{"get_message_range", `{"start_idx":3,"end_idx":9,"tags":["db"]}`, []int{3, 7}},
		{"get_message_range", `{"start_idx":0,"end_idx":10,"tags":["auth","db"]}`, []int{2, 3, 5, 7, 10}},
		{"get_message_range", `{"tags":["DB"]}`, []int{2, 3, 7, 10}},
		{"get_message_range", `{"start_idx":8,"end_idx":9,"tags":["db"]}`, nil},
		{"search_session_history", `{"query":"message","tags":["db"]}`, []int{2, 3, 7, 10}},
		{"search_session_history", `{"query":"message","tags":["auth","db"],"whole":true}`, []int{2, 3, 5, 7, 10}},
		{"search_session_history", `{"query":"message 1","tags":["db"]}`, []int{10}},
		{"search_session_history", `{"query":"mesage","mode":"fuzzy","tags":["auth"]}`, []int{5}},
		{"search_session_history", `{"query":"weather","tags":["db"]}`, nil},
		{"get_session_history", `{"format":"json","tags":["db"]}`, []int{2, 3, 7, 10}},
		{"get_session_history", `{"format":"text","tags":["auth","db"]}`, []int{2, 3, 5, 7, 10}},
		{"get_session_history", `{"format":"json","tags":["db"],"limit":2}`, []int{7, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			res := f.MustCall(tt.tool, tt.args)
			if got := given(t, res); !slices.Equal(got, tt.want) {
				t.Errorf("items %v, want %v", got, tt.want)
			}
			switch r := res.(type) {
			case reads.SearchResult:
				if r.TotalMatches != len(tt.want) {
					t.Errorf("total_matches %d, want %d", r.TotalMatches, len(tt.want))
				}
			case reads.MessageRangeResult:
				if r.Tagged == nil || *r.Tagged != len(tt.want) || r.Total != 11 || !r.Complete {
					t.Errorf("tagged %v, total %d, complete %v: want %d tagged of 11, complete", r.Tagged, r.Total, r.Complete, len(tt.want))
				}
			case reads.SessionHistoryResult:
				if r.Tagged == nil || *r.Tagged != 4+strings.Count(tt.args, "auth") || r.Count != len(tt.want) || r.FirstIndex != tt.want[0] {
					t.Errorf("tagged %v, count %d, first_index %d", r.Tagged, r.Count, r.FirstIndex)
				}
			}
		})
	}
}

func TestReadByUnknownTagIsRefused(t *testing.T) {
	t.Parallel()
	f, sid := taggedSession(t)
	plain := f.Session("no tags", 3)
	tests := []struct {
		tool, args, says string
	}{
		{"get_message_range", `{"tags":["dbx"]}`, `tags: no item of the effective thread carries tag "dbx"; the session's tags: auth, db`},
		{"get_message_range", `{"start_idx":0,"end_idx":3,"tags":["db","nope"]}`, `carries tag "nope"`},
		{"get_message_range", `{"start_idx":0,"end_idx":3,"tags":["db"],"view":"raw"}`, "leave view=raw out"},
		{"get_message_range", `{"tags":["db"],"start_idx":0,"end_idx":40}`, "end_idx 40 is past the end"},
		{"get_message_range", `{"start_idx":0}`, "give start_idx and end_idx"},
		{"search_session_history", `{"query":"message","tags":["nope"]}`, `carries tag "nope"; the session's tags: auth, db`},
		{"search_session_history", `{"query":"message","tags":["db"],"view":"raw"}`, "leave view=raw out"},
		{"get_session_history", `{"tags":["nope"]}`, `carries tag "nope"`},
		{"get_session_history", `{"tags":["db"],"view":"raw"}`, "leave view=raw out"},
		{"get_session_history", fmt.Sprintf(`{"session_id":%q,"tags":["db"]}`, plain), "the session has no tags"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			args := tt.args
			if !strings.Contains(args, "session_id") {
				args = fmt.Sprintf(`{"session_id":%q,`, sid) + args[1:]
			}
			f.CheckRefusal(t, sid, tt.tool, args, ops.ErrInvalid, tt.says)
		})
	}
}

// TestTaggedReadsKeepTheirBounds: filtered by tag, a read still fits its
// budget, and what it leaves out is the tagged items alone, reached by
// next_start_idx or the cursor.
func TestTaggedReadsKeepTheirBounds(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	const n = 60
	msgs := make([]model.NewMessage, n)
	for i := range msgs {
		msgs[i] = model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("needle %d %s", i, strings.Repeat("lorem ipsum dolor ", 60))}
	}
	sid := f.Messages("long", msgs)
	var ids []string
	var want []int
	for i := 0; i < n; i += 3 {
		ids = append(ids, fmt.Sprintf("%q", model.MessageID(uint64(i+1))))
		want = append(want, i)
	}
	f.MustCall("tag_messages", fmt.Sprintf(`{"session_id":%q,"ids":[%s],"tags":["t"]}`, sid, strings.Join(ids, ",")))
	const budget = 2000

	// get_message_range: pages by next_start_idx.
	var got []int
	start := 0
	for page := 0; ; page++ {
		if page > n {
			t.Fatal("get_message_range never ends")
		}
		r := f.MustCall("get_message_range", fmt.Sprintf(`{"start_idx":%d,"end_idx":%d,"tags":["t"],"max_tokens":%d}`, start, n-1, budget)).(reads.MessageRangeResult)
		if r.ResultTokens > budget {
			t.Fatalf("page %d: %d tokens, over %d", page, r.ResultTokens, budget)
		}
		if len(r.Messages) == 0 {
			t.Fatalf("page %d from %d: nothing given", page, start)
		}
		got = append(got, given(t, r)...)
		if r.NextStartIdx == nil {
			if page == 0 {
				t.Error("get_message_range gave every tagged item at once: the budget paged nothing")
			}
			if !r.Complete || r.Omitted != 0 {
				t.Errorf("last page: complete %v, omitted %d", r.Complete, r.Omitted)
			}
			break
		}
		left := len(want) - len(got)
		if r.Omitted != left || !slices.Contains(want, *r.NextStartIdx) || !strings.Contains(r.Next, "same tags") {
			t.Fatalf("page %d: omitted %d (want %d), next_start_idx %d, next %q", page, r.Omitted, left, *r.NextStartIdx, r.Next)
		}
		start = *r.NextStartIdx
	}
	if !slices.Equal(got, want) {
		t.Errorf("get_message_range gave %v, want %v", got, want)
	}

	// get_session_history and search_session_history: page by cursor.
	for _, tool := range []string{"get_session_history", "search_session_history"} {
		got = nil
		cursor := ""
		for page := 0; ; page++ {
			if page > n {
				t.Fatalf("%s never ends", tool)
			}
			args := fmt.Sprintf(`{"query":"needle","whole":true,"tags":["t"],"max_tokens":%d`, budget)
			if tool == "get_session_history" {
				args = fmt.Sprintf(`{"format":"json","tags":["t"],"max_tokens":%d`, budget)
			}
			if cursor != "" {
				args += fmt.Sprintf(`,"cursor":%q`, cursor)
			}
			res := f.MustCall(tool, args+"}")
			var fit reads.Fit
			switch r := res.(type) {
			case reads.SessionHistoryResult:
				fit = r.Fit
			case reads.SearchResult:
				fit = r.Fit
			}
			if fit.ResultTokens > budget {
				t.Fatalf("%s page %d: %d tokens, over %d", tool, page, fit.ResultTokens, budget)
			}
			items := given(t, res)
			if len(items) == 0 {
				t.Fatalf("%s page %d: nothing given", tool, page)
			}
			got = append(got, items...)
			if h, ok := res.(reads.SessionHistoryResult); ok && h.LeftOut != len(want)-len(got) {
				t.Fatalf("page %d: left_out %d, want %d (the tagged items not given)", page, h.LeftOut, len(want)-len(got))
			}
			if fit.NextCursor == "" {
				if page == 0 {
					t.Errorf("%s gave every tagged item at once: the budget paged nothing", tool)
				}
				break
			}
			cursor = fit.NextCursor
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s gave %v, want %v", tool, got, want)
		}
	}
}
