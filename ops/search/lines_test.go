package search_test

import (
	"slices"
	"strings"
	"testing"

	"weft/ops/search"
	"weft/ops/tools/toolstest"
)

func TestSubstringLines(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Session("exact", 10)
	long := strings.Repeat("x", 900) + " the Needle here"
	f.MustCall("append_messages", `{"messages":[
		{"role":"user","content":"first line\nwe keep a NEEDLE in the hay\nlast needle"},
		{"role":"assistant","content":"no match: n e e d l e"},
		{"role":"assistant","content":"`+long+`"},
		{"role":"user","content":"Straße and STRASSE"}]}`)
	hits, ids, total, err := search.SubstringLines(f.Svc, sid, "needle", 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || len(hits) != 2 {
		t.Fatalf("total %d, hits %+v", total, hits)
	}
	// In thread order, the first line holding it, the matched characters
	// marked.
	if h := hits[0]; h.Index != 10 || h.Line != "we keep a NEEDLE in the hay" || !slices.Equal(h.Matched, []int{10, 11, 12, 13, 14, 15}) {
		t.Errorf("first hit %+v", h)
	}
	if ids[0] != "m11" || ids[1] != "m13" {
		t.Errorf("ids %v", ids)
	}
	// A long line is cut to a window around the match, the offsets with it.
	h := hits[1]
	if len(h.Line) > search.MaxHitLine || len(h.Matched) != 6 || h.Line[h.Matched[0]:h.Matched[5]+1] != "Needle" {
		t.Errorf("long line hit: %d bytes, matched %v", len(h.Line), h.Matched)
	}
	// A limit keeps the first hits in thread order and still counts all.
	hits, _, total, _ = search.SubstringLines(f.Svc, sid, "needle", 1)
	if len(hits) != 1 || total != 2 || hits[0].Index != 10 {
		t.Errorf("limit 1: %d hits, total %d", len(hits), total)
	}
	// Case is ignored beyond ASCII too, and offsets are bytes.
	hits, _, _, _ = search.SubstringLines(f.Svc, sid, "straße", 0)
	if len(hits) != 1 || len(hits[0].Matched) != 6 || hits[0].Matched[5] != 6 {
		t.Errorf("straße: %+v", hits)
	}
	if _, _, _, err := search.SubstringLines(f.Svc, sid, "  ", 0); err == nil {
		t.Error("an empty query was searched")
	}
}
