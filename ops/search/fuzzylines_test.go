package search_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"weft/internal/fuzzy"
	"weft/ops/search"
	"weft/ops/tools/toolstest"
	"weft/store"
)

// TestFuzzyLinesFollowsTheView: with snips, a digest, an insert, a
// revision and a move, FuzzyLines (stored messages searched in the
// session's text in memory, synthetic items as they are) finds, typed a
// key at a time, exactly what ranking the view's items read from the
// store finds.
func TestFuzzyLinesFollowsTheView(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("view", 12)
	var msgs []map[string]string
	contents := []string{
		"Database migration plan:\nfirst the schema, then the data",
		"the dataBase is up; migrate it\r\nplan B: roll back",
		"pgsql retry with backoff\n\n- retry 3 times\n- then give up",
		"café au lait, données, PLAN",
		"d_a-t/a base migration",
		"nothing to see",
		"Retry the DB migration plan after the deploy",
	}
	for i := range 24 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": fmt.Sprintf("%s (%d)", contents[i%len(contents)], i)})
	}
	args, _ := json.Marshal(map[string]any{"messages": msgs})
	f.MustCall("append_messages", string(args))
	f.MustCall("snip_messages", `{"start_idx":3,"end_idx":4}`)
	f.MustCall("digest_messages", `{"start_idx":10,"end_idx":12,"summary":"the migration plan, digested: retry later"}`)
	f.MustCall("insert_messages", `{"after_idx":5,"messages":[{"role":"user","content":"inserted: database plan\nwith a retry"}]}`)
	f.MustCall("revise_messages", `{"start_idx":14,"end_idx":14,"replacements":[{"role":"assistant","content":"revised Migration PLAN"}]}`)
	f.MustCall("resequence_messages", `{"new_order":[20,19]}`)

	for _, q := range []string{"database migration plan", "retry", "pgsql", "DBplan", "café"} {
		for _, limit := range []int{3, 200} {
			var prev *search.FuzzyState
			for typed := range len(q) + 1 {
				if typed == 0 || (typed < len(q) && q[typed]&0xC0 == 0x80) {
					continue // whole characters only
				}
				hits, next, err := search.FuzzyLines(f.Svc, sid, q[:typed], prev, limit)
				if err != nil {
					t.Fatal(err)
				}
				want := storedRanking(t, f, sid, q[:typed], limit)
				if !slices.EqualFunc(hits, want, func(a, b search.LineHit) bool {
					return a.Index == b.Index && a.Line == b.Line && a.Score == b.Score && slices.Equal(a.Matched, b.Matched)
				}) {
					t.Fatalf("%q limit %d: %+v, ranking the store's bodies: %+v", q[:typed], limit, hits, want)
				}
				prev = next
			}
		}
	}
}

// storedRanking is the ranking FuzzyLines gave before the session's text
// was kept in memory: every item of the view read from the store.
func storedRanking(t *testing.T, f *toolstest.Fixture, sid, query string, limit int) []search.LineHit {
	t.Helper()
	snap, err := f.Svc.Snapshot(sid)
	if err != nil {
		t.Fatal(err)
	}
	var hits []search.LineHit
	err = f.Svc.Store().View(func(tx store.Tx) error {
		docs, err := search.ViewDocs(tx, snap.View)
		if err != nil {
			return err
		}
		hits, _ = fuzzy.Lines(docs, query, limit, nil, -1, nil)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}
