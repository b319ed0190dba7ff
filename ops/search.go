package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"weft/internal/fuzzy"
	"weft/model"
	"weft/ops/assemble"
	"weft/store"
)

// SearchArgs are search_session_history's arguments.
type SearchArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Query     string `json:"query" jsonschema:"text to look for"`
	Mode      string `json:"mode,omitempty" jsonschema:"substring (default: case-insensitive, in thread order) or fuzzy (characters in order, best first)"`
	View      string `json:"view,omitempty" jsonschema:"effective (default) or raw (the stored messages; indices are stored positions)"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"at most this many matches (default 50, at most 1000); total_matches counts them all"`
	Whole     bool   `json:"whole,omitempty" jsonschema:"give each matching message whole (long bodies still cut to fit max_tokens) instead of a snippet around the hit"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default 16000; at least 500, or 0 for no limit); matches that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the matches it left out"`
}

// SearchMatch is one search hit: where it is and a few lines around it,
// or with whole the message.
type SearchMatch struct {
	Index     int          `json:"index"`
	ID        model.ItemID `json:"id"`
	Role      model.Role   `json:"role"`
	CreatedAt string       `json:"created_at"`
	// Line is the line of the content the hit is on, from 1.
	Line int `json:"line"`
	// Snippet is the hit's line and the lines around it, long lines cut
	// around the hit (…), with the hit between ** and **.
	Snippet string `json:"snippet,omitempty"`
	// Message is the matching message, with whole.
	Message *MessageOut `json:"message,omitempty"`
}

// SearchResult is search_session_history's result (seed 001).
type SearchResult struct {
	Query        string        `json:"query"`
	TotalMatches int           `json:"total_matches"`
	Matches      []SearchMatch `json:"matches"`
	Fit
}

// searchSessionHistory searches the thread's content: snippets around
// the hits (whole messages with whole), within a budget.
func (s *Service) searchSessionHistory(_ context.Context, a SearchArgs) (SearchResult, error) {
	const tool = "search_session_history"
	if strings.TrimSpace(a.Query) == "" {
		return SearchResult{}, Invalidf("query is empty: give the text to look for")
	}
	mode, err := choiceArg("mode", a.Mode, searchModes)
	if err != nil {
		return SearchResult{}, err
	}
	fuzzyMode := mode == SearchFuzzy
	raw, err := viewArg(a.View)
	if err != nil {
		return SearchResult{}, err
	}
	limit := 50
	if a.Limit != nil {
		if *a.Limit < 0 || *a.Limit > 1000 {
			return SearchResult{}, Invalidf("limit %d is outside 0..1000", *a.Limit)
		}
		limit = *a.Limit
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return SearchResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return SearchResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return SearchResult{}, err
	}
	v := snap.View
	res := SearchResult{Query: a.Query, Matches: []SearchMatch{}}
	// An ASCII substring is looked for in the session's text kept in
	// memory, lower-cased once; other searches read the store.
	var found []int
	inMemory := !fuzzyMode && fuzzy.CanSubstring(a.Query)
	if inMemory {
		if found, err = s.substring(v, len(snap.Heads), a.Query, raw); err != nil {
			return SearchResult{}, err
		}
	}
	err = s.st.View(func(tx *store.Tx) error {
		var hits []int
		if inMemory {
			hits, res.TotalMatches = firstHits(found, limit)
		} else if raw {
			hits, res.TotalMatches, err = searchRaw(tx, v.SessionID, a.Query, fuzzyMode, limit)
		} else {
			hits, res.TotalMatches, err = searchView(tx, v, a.Query, fuzzyMode, limit)
		}
		if err != nil {
			return err
		}
		all := hits
		id := func(k int) string {
			if raw {
				return string(model.MessageID(uint64(all[k] + 1)))
			}
			return string(v.ID(v.Items[all[k]]))
		}
		// Fuzzy hits come best first, and an appended message can rank
		// anywhere: any write makes a fuzzy search's cursor stale.
		place := snap.place(tool, a, fuzzyMode)
		start, err := cur.resume(place, len(all), id)
		if err != nil {
			return err
		}
		hits = all[start:]
		var bodies, metas []int
		if a.Whole {
			bodies, metas = make([]int, len(hits)), make([]int, len(hits))
			for k, i := range hits {
				n := 0
				if raw {
					if i < len(snap.Heads) {
						n = int(snap.Heads[i].Tokens)
					}
				} else {
					n = assemble.Tokens(v, snap.Heads, i)
				}
				bodies[k], metas[k] = n+n/6, planMeta+20
			}
		}
		pk := newPacker(budget, countJSON(res), bodies, metas)
		find := newHitFinder(a.Query, fuzzyMode)
		for k, i := range hits {
			if pk.full {
				pk.skip(len(hits) - k)
				break
			}
			o, err := rangeItem(tx, v, i, raw)
			if err != nil {
				return err
			}
			at, size := find.in(o.Content)
			m := SearchMatch{Index: i, ID: o.ID, Role: o.Role, CreatedAt: o.CreatedAt, Line: 1 + strings.Count(o.Content[:at], "\n")}
			if !a.Whole {
				m.Snippet = snippet(o.Content, at, size)
				if pk.take(countJSON(m)) {
					res.Matches = append(res.Matches, m)
				}
				continue
			}
			n := 0
			if raw {
				n = o.Tokens
			} else {
				n = assemble.Tokens(v, snap.Heads, i)
			}
			// The match's own fields go beside the message's.
			meta := countJSON(m) + 4
			pk.room -= meta
			if !packOne(pk, &o, n, bodyAt{index: i, raw: raw}, 0) {
				pk.room += meta
				continue
			}
			m.Message = &o
			res.Matches = append(res.Matches, m)
		}
		var next *readCursor
		if given := start + pk.taken; pk.omitted > 0 && given > 0 {
			next = place.cursor(id(given - 1))
		}
		res.Fit = pk.fit(next, fmt.Sprintf("%d matches did not fit: call %s again with the same arguments and cursor=next_cursor", pk.omitted, tool))
		return nil
	})
	return res, err
}

// searchView searches the effective thread: visible stored messages read
// in place from the store, and visible synthetic items. It returns the
// first limit hits (limit 0: all) and how many there are in all.
func searchView(tx *store.Tx, v *model.View, query string, fuzzyMode bool, limit int) ([]int, int, error) {
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
func viewDocs(tx *store.Tx, v *model.View) ([]fuzzy.Doc, error) {
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

// searchRaw searches the stored messages; indices are seq-1.
func searchRaw(tx *store.Tx, sessionID, query string, fuzzyMode bool, limit int) ([]int, int, error) {
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
func (s *Service) FuzzyLines(ref, query string, prev *FuzzyState, limit int) (hits []LineHit, next *FuzzyState, err error) {
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
	c, err := s.corpus(v.SessionID, len(snap.Heads))
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
