package ops

import (
	"context"
	"slices"
	"testing"
)

// TestSubstringFollowsTheThread: the searchable text kept in memory is
// built on the first search and follows what comes after it: messages
// appended, a digest that hides messages and adds its summary, the raw
// view; every answer is the items that hold the query.
func TestSubstringFollowsTheThread(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	sid := f.session("kept", 10)
	f.mustCall("append_messages", `{"messages":[{"role":"user","content":"the Kettle is on"}]}`)
	check := func(step string, wantView, wantRaw []int) {
		t.Helper()
		hits, _, total, err := f.svc.SubstringLines(sid, "KETTLE", 0)
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
			res, err := f.svc.SearchSessionHistory(ctx, SearchArgs{SessionID: sid, Query: "kettle", View: view})
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
	f.mustCall("append_messages", `{"messages":[{"role":"assistant","content":"no"},{"role":"user","content":"a kettle again"}]}`)
	check("after an append", []int{10, 12}, []int{10, 12})
	f.mustCall("digest_messages", `{"start_idx":9,"end_idx":10,"summary":"about the KETTLE"}`)
	check("after a digest", []int{9, 11}, []int{10, 12})
	f.mustCall("digest_messages", `{"start_idx":0,"end_idx":1,"summary":"nothing"}`)
	check("after a digest before the hits", []int{8, 10}, []int{10, 12})
}

// TestFuzzyNarrowedToFew: a query narrowed to a few items by the
// previous keystrokes (only those searched, a digest's summary among
// them) finds what the same query typed at once finds.
func TestFuzzyNarrowedToFew(t *testing.T) {
	f := newFixture(t)
	sid := f.session("few", 200)
	f.mustCall("append_messages", `{"messages":[{"role":"user","content":"a Zebra crossing"},{"role":"assistant","content":"zebras\nand more"}]}`)
	f.mustCall("digest_messages", `{"start_idx":98,"end_idx":99,"summary":"zero zebra"}`)
	var prev *FuzzyState
	for _, q := range []string{"z", "ze", "zeb", "zebr"} {
		hits, next, err := f.svc.FuzzyLines(sid, q, prev, 10)
		if err != nil {
			t.Fatal(err)
		}
		fresh, _, err := f.svc.FuzzyLines(sid, q, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(hits, fresh, func(a, b LineHit) bool {
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
	f := newFixture(t)
	ids := []string{f.session("a", 40), f.session("b", 40), f.session("c", 40)}
	kept := func() []bool {
		f.svc.mu.Lock()
		defer f.svc.mu.Unlock()
		var out []bool
		for _, id := range ids {
			th := f.svc.threads[id]
			out = append(out, th != nil && th.text != nil)
		}
		return out
	}
	search := func(id string) {
		t.Helper()
		hits, _, total, err := f.svc.SubstringLines(id, "message 3", 0)
		if err != nil {
			t.Fatal(err)
		}
		// message 3, and 30 to 39.
		if total != 11 || len(hits) != 11 || hits[0].Index != 2 {
			t.Fatalf("%s: %d hits (total %d), the first at %d", id, len(hits), total, hits[0].Index)
		}
	}
	f.svc.textBudget = 1000 // two sessions' text (40 messages of about 10 bytes each), not three
	search(ids[0])
	search(ids[1])
	if got := kept(); !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("after a and b, kept %v", got)
	}
	search(ids[2])
	if got := kept(); !slices.Equal(got, []bool{false, true, true}) {
		t.Fatalf("after c, kept %v: a, searched longest ago, should go", got)
	}
	search(ids[0]) // read again
	if got := kept(); !slices.Equal(got, []bool{true, false, true}) {
		t.Fatalf("after a again, kept %v", got)
	}
	f.svc.textBudget = 1 // smaller than any: the last searched keeps its own
	search(ids[1])
	if got := kept(); !slices.Equal(got, []bool{false, true, false}) {
		t.Fatalf("with no room, kept %v", got)
	}
}

// TestPrepareSearch: preparing a search reads the session's text once,
// before any query; a session that does not exist is an error.
func TestPrepareSearch(t *testing.T) {
	f := newFixture(t)
	sid := f.session("ready", 30)
	if err := f.svc.PrepareSearch(sid); err != nil {
		t.Fatal(err)
	}
	f.svc.mu.Lock()
	th := f.svc.threads[sid]
	f.svc.mu.Unlock()
	if th == nil || th.text == nil || th.text.c.Len() != 30 {
		t.Fatalf("the text was not prepared: %+v", th)
	}
	if err := f.svc.PrepareSearch("no-such-session"); err == nil {
		t.Error("a session that does not exist was prepared")
	}
}
