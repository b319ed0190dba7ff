package search

import (
	"testing"

	"weft/model"
	"weft/ops/search"
	"weft/themes"
)

func TestStaleResultsAreDropped(t *testing.T) {
	var p Panel
	p.Open(themes.New(themes.Default(true), true))
	for _, q := range []string{"o", "ol", "old", "olde", "older"} {
		p.SetValue(q)
		if _, ok := p.Next(); !ok {
			t.Fatalf("%q asked for no search", q)
		}
	}
	if jump := p.Take(Result{Seq: 4, Query: "olde", Hits: []search.LineHit{{Index: 1, Line: "olde"}}, IDs: []model.ItemID{"m2"}}, nil); jump || len(p.Hits()) != 0 {
		t.Fatal("a stale result was shown")
	}
	p.Take(Result{Seq: 5, Query: "older", Hits: []search.LineHit{{Index: 1, Line: "older"}}, IDs: []model.ItemID{"m2"}}, nil)
	if len(p.Hits()) != 1 {
		t.Fatal("the latest result was not shown")
	}
	// A query typed again as it was sent asks for nothing new.
	if _, ok := p.Next(); ok {
		t.Fatal("the same query was asked for twice")
	}
}

func TestExactHitsAreMarkedWhereverTheyShow(t *testing.T) {
	spans := foldSpans("Retry, then RETRY again: retry.", "retry")
	if len(spans) != 3 || spans[1] != [2]int{12, 17} {
		t.Fatalf("spans %v", spans)
	}
}
