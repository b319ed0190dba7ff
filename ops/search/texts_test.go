package search_test

import (
	"context"
	"slices"
	"testing"

	"weft/ops/reads"
	"weft/ops/search"
	"weft/ops/tools/toolstest"
)

// TestSubstringFollowsTheThread: the searchable text kept in memory is
// built on the first search and follows what comes after it: messages
// appended, a digest that hides messages and adds its summary, the raw
// view; every answer is the items that hold the query.
func TestSubstringFollowsTheThread(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	ctx := context.Background()
	sid := f.Session("kept", 10)
	f.MustCall("append_messages", `{"messages":[{"role":"user","content":"the Kettle is on"}]}`)
	check := func(step string, wantView, wantRaw []int) {
		t.Helper()
		hits, _, total, err := search.SubstringLines(f.Svc, sid, "KETTLE", 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, h := range hits {
			got = append(got, h.Index)
		}
		if !slices.Equal(got, wantView) || total != len(wantView) {
			t.Errorf("%s: SubstringLines %v (total %d), want %v", step, got, total, wantView)
		}
		for _, raw := range []bool{false, true} {
			view, want := "", wantView
			if raw {
				view, want = "raw", wantRaw
			}
			res, err := reads.SearchSessionHistory(f.Svc, ctx, reads.SearchArgs{SessionID: sid, Query: "kettle", View: view})
			if err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for _, m := range res.Matches {
				got = append(got, m.Index)
			}
			if !slices.Equal(got, want) || res.TotalMatches != len(want) {
				t.Errorf("%s, view %q: search %v (total %d), want %v", step, view, got, res.TotalMatches, want)
			}
		}
	}
	check("first search", []int{10}, []int{10})
	f.MustCall("append_messages", `{"messages":[{"role":"assistant","content":"no"},{"role":"user","content":"a kettle again"}]}`)
	check("after an append", []int{10, 12}, []int{10, 12})
	f.MustCall("digest_messages", `{"start_idx":9,"end_idx":10,"summary":"about the KETTLE"}`)
	check("after a digest", []int{9, 11}, []int{10, 12})
	f.MustCall("digest_messages", `{"start_idx":0,"end_idx":1,"summary":"nothing"}`)
	check("after a digest before the hits", []int{8, 10}, []int{10, 12})
}

// TestFuzzyNarrowedToFew: a query narrowed to a few items by the
// previous keystrokes (only those searched, a digest's summary among
// them) finds what the same query typed at once finds.
func TestFuzzyNarrowedToFew(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("few", 200)
	f.MustCall("append_messages", `{"messages":[{"role":"user","content":"a Zebra crossing"},{"role":"assistant","content":"zebras\nand more"}]}`)
	f.MustCall("digest_messages", `{"start_idx":98,"end_idx":99,"summary":"zero zebra"}`)
	var prev *search.FuzzyState
	for _, q := range []string{"z", "ze", "zeb", "zebr"} {
		hits, next, err := search.FuzzyLines(f.Svc, sid, q, prev, 10)
		if err != nil {
			t.Fatal(err)
		}
		fresh, _, err := search.FuzzyLines(f.Svc, sid, q, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(hits, fresh, func(a, b search.LineHit) bool {
			return a.Index == b.Index && a.Line == b.Line && a.Score == b.Score && slices.Equal(a.Matched, b.Matched)
		}) {
			t.Fatalf("%q narrowed: %+v, typed at once: %+v", q, hits, fresh)
		}
		if q == "zebr" && len(hits) != 3 {
			t.Errorf("%q: %d hits, want 3: %+v", q, len(hits), hits)
		}
		prev = next
	}
	if prev.Candidates() != 3 {
		t.Errorf("%d candidates, want 3", prev.Candidates())
	}
}

// TestSearchTextIsBounded: the texts kept for searches stay within the
// service's budget across sessions, those searched longest ago let go
// first and the one searched last kept whatever its size; a session
// whose text was let go is searched as well as before, from the store.
func TestSearchTextIsBounded(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	ids := []string{f.Session("a", 40), f.Session("b", 40), f.Session("c", 40)}
	kept := func() []bool {
		var out []bool
		for _, id := range ids {
			out = append(out, search.KeptText(f.Svc, id) >= 0)
		}
		return out
	}
	find := func(id string) {
		t.Helper()
		hits, _, total, err := search.SubstringLines(f.Svc, id, "message 3", 0)
		if err != nil {
			t.Fatal(err)
		}
		// message 3, and 30 to 39.
		if total != 11 || len(hits) != 11 || hits[0].Index != 2 {
			t.Fatalf("%s: %d hits (total %d), the first at %d", id, len(hits), total, hits[0].Index)
		}
	}
	search.SetTextBudget(f.Svc, 1000) // two sessions' text (40 messages of about 10 bytes each), not three
	find(ids[0])
	find(ids[1])
	if got := kept(); !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("after a and b, kept %v", got)
	}
	find(ids[2])
	if got := kept(); !slices.Equal(got, []bool{false, true, true}) {
		t.Fatalf("after c, kept %v: a, searched longest ago, should go", got)
	}
	find(ids[0]) // read again
	if got := kept(); !slices.Equal(got, []bool{true, false, true}) {
		t.Fatalf("after a again, kept %v", got)
	}
	search.SetTextBudget(f.Svc, 1) // smaller than any: the last searched keeps its own
	find(ids[1])
	if got := kept(); !slices.Equal(got, []bool{false, true, false}) {
		t.Fatalf("with no room, kept %v", got)
	}
}

// TestPrepareSearch: preparing a search reads the session's text once,
// before any query; a session that does not exist is an error.
func TestPrepareSearch(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("ready", 30)
	if err := search.Prepare(f.Svc, sid); err != nil {
		t.Fatal(err)
	}
	if n := search.KeptText(f.Svc, sid); n != 30 {
		t.Fatalf("the text was not prepared: %d messages kept", n)
	}
	if err := search.Prepare(f.Svc, "no-such-session"); err == nil {
		t.Error("a session that does not exist was prepared")
	}
}
