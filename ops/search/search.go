package search

import (
	"slices"
	"strings"
	"unicode/utf8"

	"weft/ops"

	"weft/internal/fuzzy"
	"weft/model"
	"weft/store"
)

// View searches the effective thread: visible stored messages read
// in place from the store, and visible synthetic items. It returns the
// first limit hits (limit 0: all) and how many there are in all.
func View(tx store.Tx, v *model.View, query string, fuzzyMode bool, limit int) ([]int, int, error) {
	docs, err := viewDocs(tx, v)
	if err != nil {
		return nil, 0, err
	}
	hits, total := searchDocs(docs, query, fuzzyMode, limit)
	return hits, total, nil
}

// viewDocs are the texts of the effective thread's items, by index:
// stored bodies in place in the store (valid while tx is), then the
// synthetic items.
func viewDocs(tx store.Tx, v *model.View) ([]fuzzy.Doc, error) {
	docs := make([]fuzzy.Doc, 0, v.Len())
	err := tx.ScanContent(v.SessionID, func(seq uint64, content []byte) bool {
		if i := v.IndexOfSeq(seq); i >= 0 {
			docs = append(docs, fuzzy.Doc{Index: i, Text: content})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	for si, w := range v.SynthWhere {
		if w >= 0 {
			docs = append(docs, fuzzy.Doc{Index: int(w), Text: []byte(v.Synth[si].Content)})
		}
	}
	return docs, nil
}

// Raw searches the stored messages; indices are seq-1.
func Raw(tx store.Tx, sessionID, query string, fuzzyMode bool, limit int) ([]int, int, error) {
	var docs []fuzzy.Doc
	err := tx.ScanContent(sessionID, func(seq uint64, content []byte) bool {
		docs = append(docs, fuzzy.Doc{Index: int(seq - 1), Text: content})
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	hits, total := searchDocs(docs, query, fuzzyMode, limit)
	return hits, total, nil
}

// LineHit is a fuzzy match on one line of an item.
type LineHit = fuzzy.LineHit

// FuzzyState is what a fuzzy search learned, for the next query that
// extends it: the items that may have the query's characters in order
// (every one that has them; some not checked, being out of reach), and
// bounds on what each can score. It belongs to one version of a session's
// view; FuzzyLines ignores a state that does not fit.
type FuzzyState struct {
	sessionID string
	version   uint64
	view      *model.View // the view searched: hits' indices are in it
	query     string
	cands     []int
	top       []int         // the hits' items, best first
	bounds    []fuzzy.Bound // by item index
}

// Query is the query the state is for.
func (st *FuzzyState) Query() string {
	if st == nil {
		return ""
	}
	return st.query
}

// Candidates is how many items may have the query's characters in order
// (a longer query looks only among them).
func (st *FuzzyState) Candidates() int {
	if st == nil {
		return 0
	}
	return len(st.cands)
}

// FuzzyLines matches query against every line of the effective thread
// (best line per item), best first, returning at most limit hits and a
// state. Passing that state back when the next query extends this one
// narrows the search to the items that can still match, and skips those
// that cannot reach the best limit, instead of starting over.
func FuzzyLines(s *ops.Service, ref, query string, prev *FuzzyState, limit int) (hits []LineHit, next *FuzzyState, err error) {
	snap, err := s.Snapshot(ref)
	if err != nil {
		return nil, nil, err
	}
	v := snap.View
	steps := -1 // characters added since prev; -1: prev does not apply
	if prev != nil && prev.sessionID == snap.Info.ID && prev.version == snap.Info.Version && strings.HasPrefix(query, prev.query) {
		steps = utf8.RuneCountInString(query) - utf8.RuneCountInString(prev.query)
	}
	next = &FuzzyState{sessionID: snap.Info.ID, version: snap.Info.Version, view: v, query: query, bounds: make([]fuzzy.Bound, v.Len())}
	// The stored messages are searched in the session's text kept in
	// memory, lower-cased with their case in bits: no store read.
	c, err := corpus(s, snap)
	if err != nil {
		return nil, nil, err
	}
	var refs []fuzzy.Ref
	var docs []fuzzy.Doc
	add := func(i int) {
		if it := v.Items[i]; it.Synth < 0 {
			refs = append(refs, fuzzy.Ref{Index: i, Text: int(it.Seq - 1)})
		} else {
			docs = append(docs, fuzzy.Doc{Index: i, Text: []byte(v.Synth[it.Synth].Content)})
		}
	}
	var prevBounds []fuzzy.Bound
	if steps >= 0 {
		prevBounds = prev.bounds
		refs = make([]fuzzy.Ref, 0, len(prev.cands))
		// The last query's best go first: they likely score well again,
		// and the sooner good scores are known, the fewer texts are read.
		top := slices.Sorted(slices.Values(prev.top))
		for _, i := range prev.top {
			add(i)
		}
		for _, i := range prev.cands { // in order, as top is
			for len(top) > 0 && top[0] < i {
				top = top[1:]
			}
			if len(top) > 0 && top[0] == i {
				top = top[1:]
				continue
			}
			add(i)
		}
	} else {
		refs = make([]fuzzy.Ref, 0, v.Len())
		for i := range v.Items {
			add(i)
		}
	}
	hits, next.cands = c.Lines(refs, docs, query, limit, prevBounds, steps, next.bounds)
	next.top = make([]int, len(hits))
	for k, h := range hits {
		next.top[k] = h.Index
	}
	return hits, next, nil
}

// searchDocs runs a substring or fuzzy search: substring hits in index
// order, fuzzy hits best first.
func searchDocs(docs []fuzzy.Doc, query string, fuzzyMode bool, limit int) ([]int, int) {
	if fuzzyMode {
		return fuzzy.Rank(docs, query, limit)
	}
	return fuzzy.Substring(docs, query, limit)
}
