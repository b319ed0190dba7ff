package ops

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"weft/model"
	"weft/store"
)

// SearchArgs are search_session_history's arguments.
type SearchArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one open in the TUI, else the most recently updated"`
	Query     string `json:"query" jsonschema:"text to look for"`
	Mode      string `json:"mode,omitempty" jsonschema:"substring (default: case-insensitive, in thread order) or fuzzy (characters in order, best first)"`
	View      string `json:"view,omitempty" jsonschema:"effective (default) or raw (the stored messages; indices are stored positions)"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"at most this many matches (default 50, at most 1000); total_matches counts them all"`
}

// SearchMatch is one search hit.
type SearchMatch struct {
	Index   int        `json:"index"`
	Message MessageOut `json:"message"`
}

// SearchResult is search_session_history's result (seed 001).
type SearchResult struct {
	Query        string        `json:"query"`
	TotalMatches int           `json:"total_matches"`
	Matches      []SearchMatch `json:"matches"`
}

// SearchSessionHistory searches the thread's content.
func (s *Service) SearchSessionHistory(_ context.Context, a SearchArgs) (SearchResult, error) {
	if strings.TrimSpace(a.Query) == "" {
		return SearchResult{}, invalidf("query is empty: give the text to look for")
	}
	fuzzyMode := false
	switch a.Mode {
	case "", "substring":
	case "fuzzy":
		fuzzyMode = true
	default:
		return SearchResult{}, invalidf("mode %q is not substring or fuzzy", a.Mode)
	}
	raw, err := viewArg(a.View)
	if err != nil {
		return SearchResult{}, err
	}
	limit := 50
	if a.Limit != nil {
		if *a.Limit < 0 || *a.Limit > 1000 {
			return SearchResult{}, invalidf("limit %d is outside 0..1000", *a.Limit)
		}
		limit = *a.Limit
	}
	snap, err := s.snapshot(a.SessionID)
	if err != nil {
		return SearchResult{}, err
	}
	v := snap.view
	res := SearchResult{Query: a.Query, Matches: []SearchMatch{}}
	err = s.st.View(func(tx *store.Tx) error {
		var hits []int
		if raw {
			hits, res.TotalMatches, err = searchRaw(tx, v.SessionID, a.Query, fuzzyMode, limit)
		} else {
			hits, res.TotalMatches, err = searchView(tx, v, a.Query, fuzzyMode, limit)
		}
		if err != nil {
			return err
		}
		for _, i := range hits {
			var out MessageOut
			if raw {
				m, err := tx.Message(v.SessionID, uint64(i+1))
				if err != nil {
					return err
				}
				tags := []string{}
				if j := v.IndexOfSeq(m.Seq); j >= 0 && v.Tags(v.Items[j]) != nil {
					tags = v.Tags(v.Items[j])
				}
				out = storedOut(i, &m, tags)
			} else {
				outs, err := messagesOut(tx, v, []int{i})
				if err != nil {
					return err
				}
				out = outs[0]
			}
			res.Matches = append(res.Matches, SearchMatch{Index: i, Message: out})
		}
		return nil
	})
	return res, err
}

// doc is one searchable text and the index it answers to.
type doc struct {
	index int
	text  []byte
}

// searchView searches the effective thread: visible stored messages read
// in place from the store, and visible synthetic items. It returns the
// first limit hits (limit 0: all) and how many there are in all.
func searchView(tx *store.Tx, v *model.View, query string, fuzzyMode bool, limit int) ([]int, int, error) {
	docs := make([]doc, 0, len(v.Items))
	err := tx.ScanContent(v.SessionID, func(seq uint64, content []byte) bool {
		if i := v.IndexOfSeq(seq); i >= 0 {
			docs = append(docs, doc{i, content})
		}
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	for si, w := range v.SynthWhere {
		if w >= 0 {
			docs = append(docs, doc{int(w), []byte(v.Synth[si].Content)})
		}
	}
	hits, total := searchDocs(docs, query, fuzzyMode, limit)
	return hits, total, nil
}

// searchRaw searches the stored messages; indices are seq-1.
func searchRaw(tx *store.Tx, sessionID, query string, fuzzyMode bool, limit int) ([]int, int, error) {
	var docs []doc
	err := tx.ScanContent(sessionID, func(seq uint64, content []byte) bool {
		docs = append(docs, doc{int(seq - 1), content})
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	hits, total := searchDocs(docs, query, fuzzyMode, limit)
	return hits, total, nil
}

// searchDocs runs the match over all cores. Substring hits come in index
// order; fuzzy hits best first.
func searchDocs(docs []doc, query string, fuzzyMode bool, limit int) ([]int, int) {
	type hit struct{ index, score int }
	workers := min(runtime.GOMAXPROCS(0), max(len(docs)/2048, 1))
	parts := make([][]hit, workers)
	var wg sync.WaitGroup
	sub := newFoldMatcher(query)
	for w := range workers {
		wg.Go(func() {
			lo, hi := w*len(docs)/workers, (w+1)*len(docs)/workers
			sc := newLineScorer(query)
			var out []hit
			for _, d := range docs[lo:hi] {
				if fuzzyMode {
					if score, ok := fuzzyScore(sc, d.text); ok {
						out = append(out, hit{d.index, score})
					}
				} else if sub.match(d.text) {
					out = append(out, hit{d.index, 0})
				}
			}
			parts[w] = out
		})
	}
	wg.Wait()
	var all []hit
	for _, p := range parts {
		all = append(all, p...)
	}
	slices.SortFunc(all, func(a, b hit) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return a.index - b.index
	})
	total := len(all)
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out := make([]int, len(all))
	for i, h := range all {
		out[i] = h.index
	}
	return out, total
}

// foldMatcher finds a query in text, ignoring case, without lowering the
// text: it jumps between occurrences of the query's rarest byte (either
// case) with the vectorised bytes.IndexByte and checks each candidate.
// Queries with non-ASCII letters fall back to lowering the text.
type foldMatcher struct {
	q       []byte // lower-cased query
	ascii   bool
	rare    int // offset of the rarest byte in q
	lo, up  byte
	unicode []byte
}

func newFoldMatcher(query string) *foldMatcher {
	m := &foldMatcher{q: []byte(strings.ToLower(query)), ascii: true}
	for _, c := range []byte(query) {
		if c >= utf8.RuneSelf {
			m.ascii = false
		}
	}
	if !m.ascii {
		m.unicode = bytes.ToLower([]byte(query))
		return m
	}
	best := -1 << 30
	for i, c := range m.q {
		if r := rarity(c); r > best {
			best, m.rare = r, i
		}
	}
	m.lo = m.q[m.rare]
	m.up = m.lo
	if 'a' <= m.lo && m.lo <= 'z' {
		m.up = m.lo - 'a' + 'A'
	}
	return m
}

// rarity ranks bytes by how seldom they occur in prose and code: the
// rarer, the fewer candidates to check.
func rarity(c byte) int {
	const common = "etaoinshrdlcumwfgypbvkjxqz"
	switch {
	case c == ' ':
		return -100
	case 'a' <= c && c <= 'z':
		return strings.IndexByte(common, c)
	case '0' <= c && c <= '9':
		return 10
	}
	return 20
}

func (m *foldMatcher) match(text []byte) bool {
	if !m.ascii {
		return bytes.Contains(bytes.ToLower(text), m.unicode)
	}
	n := len(m.q)
	nextLo, nextUp := -2, -2 // -2: not looked for yet
	for off := m.rare; off < len(text); {
		if nextLo != -1 && nextLo < off {
			if nextLo = bytes.IndexByte(text[off:], m.lo); nextLo >= 0 {
				nextLo += off
			}
		}
		if m.up != m.lo && nextUp != -1 && nextUp < off {
			if nextUp = bytes.IndexByte(text[off:], m.up); nextUp >= 0 {
				nextUp += off
			}
		}
		c := nextLo
		if m.up != m.lo && nextUp >= 0 && (c < 0 || nextUp < c) {
			c = nextUp
		}
		if c < 0 {
			return false
		}
		start := c - m.rare
		if start >= 0 && start+n <= len(text) && equalFoldASCII(text[start:start+n], m.q) {
			return true
		}
		off = c + 1
	}
	return false
}

// equalFoldASCII compares text to an already lower-cased ASCII query.
func equalFoldASCII(text, lowerQ []byte) bool {
	for i, c := range text {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lowerQ[i] {
			return false
		}
	}
	return true
}

// fuzzyScore scores a text by its best line (lines cut to 4096 bytes),
// with the query's characters matched in order, case ignored.
func fuzzyScore(sc *lineScorer, text []byte) (int, bool) {
	if !sc.matches(text) {
		return 0, false
	}
	best, found := 0, false
	for line := range bytes.Lines(text) {
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 4096 {
			line = line[:4096] // very long lines are scored on their start
		}
		if score, ok := sc.score(line); ok && (!found || score > best) {
			best, found = score, true
		}
	}
	return best, found
}

// LineHit is a fuzzy match on one line of an item.
type LineHit struct {
	Index   int    // item index in the effective thread
	Line    string // the matching line (cut to 512 bytes)
	Matched []int  // byte offsets in Line of the matched characters
	Score   int
}

// FuzzyState is what a fuzzy search learned, for the next query that
// extends it: the items that have the query's characters in order, and
// bounds on what each can score. It belongs to one version of a session's
// view; FuzzyLines ignores a state that does not fit.
type FuzzyState struct {
	sessionID string
	version   uint64
	query     string
	cands     []int
	bounds    []fzBound // by item index
}

// Query is the query the state is for.
func (st *FuzzyState) Query() string {
	if st == nil {
		return ""
	}
	return st.query
}

// Candidates is how many items have the query's characters in order.
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
	snap, err := s.snapshot(ref)
	if err != nil {
		return nil, nil, err
	}
	v := snap.view
	steps := -1 // characters added since prev; -1: prev does not apply
	if prev != nil && prev.sessionID == snap.info.ID && prev.version == snap.info.Version && strings.HasPrefix(query, prev.query) {
		steps = utf8.RuneCountInString(query) - utf8.RuneCountInString(prev.query)
	}
	next = &FuzzyState{sessionID: snap.info.ID, version: snap.info.Version, query: query, bounds: make([]fzBound, v.Len())}
	err = s.st.View(func(tx *store.Tx) error {
		var want []bool // nil: every item
		n := v.Len()
		if steps >= 0 {
			want = make([]bool, v.Len())
			for _, i := range prev.cands {
				want[i] = true
			}
			n = len(prev.cands)
		}
		docs := make([]doc, 0, n)
		if n > 0 {
			if err := tx.ScanContent(v.SessionID, func(seq uint64, content []byte) bool {
				if i := v.IndexOfSeq(seq); i >= 0 && (want == nil || want[i]) {
					docs = append(docs, doc{i, content})
				}
				return true
			}); err != nil {
				return err
			}
		}
		for si, w := range v.SynthWhere {
			if w >= 0 && (want == nil || want[w]) {
				docs = append(docs, doc{int(w), []byte(v.Synth[si].Content)})
			}
		}
		var prevBounds []fzBound
		if steps >= 0 {
			prevBounds = prev.bounds
		}
		hits, next.cands = fuzzyDocs(docs, query, limit, prevBounds, steps, next.bounds)
		return nil
	})
	return hits, next, err
}

// fuzzyDocs finds each document's best line for query, over all cores,
// and keeps the best limit documents. Hits are copied out of the texts,
// so the texts may be the store's own memory. With prev (bounds by
// document index for a query steps characters shorter), documents that
// cannot reach the best limit are not read; bounds (when not nil)
// receives the bounds for the next query.
func fuzzyDocs(docs []doc, query string, limit int, prev []fzBound, steps int, bounds []fzBound) ([]LineHit, []int) {
	workers := min(runtime.GOMAXPROCS(0), max(len(docs)/1024, 1))
	type part struct {
		best  bestHits
		cands []int
	}
	parts := make([]part, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			lo, hi := w*len(docs)/workers, (w+1)*len(docs)/workers
			sc := newLineScorer(query)
			p := &parts[w]
			for _, d := range docs[lo:hi] {
				if !sc.matches(d.text) {
					continue
				}
				p.cands = append(p.cands, d.index)
				pb := fzUnknown
				if prev != nil {
					pb = prev[d.index].extend(steps)
				}
				floor, hasFloor := p.best.floor(limit)
				if hasFloor && pb.known() && pb.s < floor {
					if bounds != nil {
						bounds[d.index] = pb // not read: what was known still holds
					}
					continue
				}
				hit, ok, nb := sc.bestLine(d, floor, hasFloor, pb)
				if bounds != nil {
					bounds[d.index] = nb
				}
				if ok {
					p.best.offer(hit, limit)
				}
			}
		})
	}
	wg.Wait()
	var best []docHit
	var cands []int
	for _, p := range parts {
		best = append(best, p.best...)
		cands = append(cands, p.cands...)
	}
	slices.SortFunc(best, func(a, b docHit) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return a.index - b.index
	})
	if limit > 0 && len(best) > limit {
		best = best[:limit]
	}
	sc := newLineScorer(query)
	hits := make([]LineHit, len(best))
	for i, b := range best {
		line := b.text[b.start:b.end]
		sc.score(line)
		hits[i] = LineHit{Index: b.index, Line: string(line), Matched: slices.Clone(sc.idx), Score: b.score}
	}
	slices.Sort(cands)
	return hits, cands
}
