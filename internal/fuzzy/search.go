package fuzzy

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Doc is one searchable text and the index it answers to (an item's
// place in a thread). Text may be the store's own memory: nothing is
// kept of it past a search.
type Doc struct {
	Index int
	Text  []byte
}

// Substring finds the docs that contain query, case ignored, on every
// core. It returns the first limit indices in index order (limit 0: all)
// and how many docs matched in all.
func Substring(docs []Doc, query string, limit int) ([]int, int) {
	return search(docs, query, false, limit)
}

// Rank finds the docs whose best line has query's characters in order,
// case ignored, on every core, scored as sahilm/fuzzy scores a line. It
// returns the best limit indices, best first (ties in index order; limit
// 0: all), and how many docs matched in all.
func Rank(docs []Doc, query string, limit int) ([]int, int) {
	return search(docs, query, true, limit)
}

func search(docs []Doc, query string, fuzzyMode bool, limit int) ([]int, int) {
	type hit struct{ index, score int }
	workers := min(runtime.GOMAXPROCS(0), max(len(docs)/2048, 1))
	parts := make([][]hit, workers)
	var wg sync.WaitGroup
	sub := NewMatcher(query)
	for w := range workers {
		wg.Go(func() {
			lo, hi := w*len(docs)/workers, (w+1)*len(docs)/workers
			sc := newLineScorer(query)
			var out []hit
			for _, d := range docs[lo:hi] {
				if fuzzyMode {
					if score, ok := bestScore(sc, d.Text); ok {
						out = append(out, hit{d.Index, score})
					}
				} else if sub.Match(d.Text) {
					out = append(out, hit{d.Index, 0})
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

// Matcher finds a query in texts, ignoring case, without lowering a
// text: it jumps between occurrences of the query's rarest byte (either
// case) with the vectorised bytes.IndexByte and checks each candidate.
// Queries with non-ASCII letters fall back to lowering the text.
type Matcher struct {
	q       []byte // lower-cased query
	ascii   bool
	rare    int // offset of the rarest byte in q
	lo, up  byte
	unicode []byte
}

// NewMatcher returns a matcher for query.
func NewMatcher(query string) *Matcher {
	m := &Matcher{q: []byte(strings.ToLower(query)), ascii: true}
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

// Match reports whether text contains the query, case ignored.
func (m *Matcher) Match(text []byte) bool { return m.Index(text) >= 0 }

// Index returns the byte offset in text of the first occurrence of the
// query, case ignored, or -1; the occurrence is Len bytes long when the
// query is ASCII (and about that otherwise).
func (m *Matcher) Index(text []byte) int {
	if !m.ascii {
		return unicodeIndex(text, m.unicode)
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
			return -1
		}
		start := c - m.rare
		if start >= 0 && start+n <= len(text) && equalFoldASCII(text[start:start+n], m.q) {
			return start
		}
		off = c + 1
	}
	return -1
}

// Len is the query's length in bytes.
func (m *Matcher) Len() int { return len(m.q) }

// unicodeIndex finds a lowered query in text, lowering it, and maps the
// offset back to text's own bytes (lowering can change a letter's
// length).
func unicodeIndex(text, lowerQ []byte) int {
	lower := bytes.ToLower(text)
	i := bytes.Index(lower, lowerQ)
	if i < 0 || len(lower) == len(text) {
		return i
	}
	at, low := 0, 0
	for at < len(text) && low < i {
		r, size := utf8.DecodeRune(text[at:])
		at += size
		low += utf8.RuneLen(unicode.ToLower(r))
	}
	return at
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

// bestScore scores a text by its best line (lines cut to 4096 bytes),
// with the query's characters matched in order, case ignored.
func bestScore(sc *lineScorer, text []byte) (int, bool) {
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

// Lines finds each doc's best line for query, over all cores, and keeps
// the best limit docs, best first; it also returns every doc that has
// the query's characters in order (the candidates for a longer query),
// by index. Hits are copied out of the texts. With prev (bounds by doc
// index for a query steps characters shorter, from an earlier call),
// docs that cannot reach the best limit are not read; bounds (when not
// nil, as long as the largest index) receives the bounds for the next
// query.
func Lines(docs []Doc, query string, limit int, prev []Bound, steps int, bounds []Bound) ([]LineHit, []int) {
	return Corpus{}.Lines(nil, docs, query, limit, prev, steps, bounds)
}
