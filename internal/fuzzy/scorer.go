// Package fuzzy searches texts for a query: a case-blind substring scan,
// and fuzzy matching that scores lines exactly as sahilm/fuzzy does but on
// bytes, without allocating, over every core, and narrowing incrementally
// as the query grows.
package fuzzy

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"math"
	"unicode"
	"unicode/utf8"

	sahilm "github.com/sahilm/fuzzy"
)

// Scores of sahilm/fuzzy, which lineScorer reproduces.
const (
	fzFirstChar  = 10
	fzAfterSep   = 20
	fzCamel      = 20
	fzAdjacent   = 5
	fzLeading    = -5
	fzLeadingMax = -15
	fzLineCut    = 512 // lines are matched and shown up to this many bytes
	// fzNoBound stands for a bound too large to keep: past it nothing is
	// pruned (sahilm/fuzzy's scores of very long queries grow past any).
	// It is 2^50 where int has 64 bits, 2^30 where it has 32.
	fzNoBound = 1 << (30 + 20*(^uint(0)>>63))
)

// lineScorer scores lines against a query exactly as sahilm/fuzzy does,
// but on bytes and without allocating, jumping from one place that
// matters to the next with bytes.IndexByte, so a search can score every
// line of a long thread per keystroke. Lines with bytes outside ASCII (or
// a NUL), and queries with any, go to sahilm/fuzzy itself; the tests hold
// the two equal. After score, idx holds the matched byte offsets.
type lineScorer struct {
	query        string
	ascii        bool   // the query is ASCII without NUL
	lower, upper []byte // the query's bytes in each case (ASCII letters)
	// upperBound is the most the matched characters can add up to; a
	// line of n bytes scores at most upperBound + len(query) - n.
	upperBound int
	k          int // the query's length in characters
	// maxCur is the most adjacency bonus k characters gather (at most
	// fzNoBound).
	maxCur int
	idx    []int
	cur    int // the adjacency bonus the last fast scoring ended with
	nx     nexter
	// caps, when set, says the text scoreLowered reads is lower-cased (a
	// Corpus text) and holds its case: bit capBase+j for byte j.
	caps    []uint64
	capBase int
}

// upperAt reports whether byte j of a lower-cased text was upper-case.
func (s *lineScorer) upperAt(j int) bool {
	p := s.capBase + j
	return s.caps[p>>6]>>(p&63)&1 != 0
}

func newLineScorer(query string) *lineScorer {
	s := &lineScorer{query: query, idx: make([]int, 0, len(query)), ascii: true}
	for i := 0; i < len(query); i++ {
		if query[i] >= utf8.RuneSelf || query[i] == 0 {
			s.ascii = false
		}
	}
	s.lower, s.upper = caseForms(query)
	// Each character earns at most 20 (a first-character bonus of 10
	// excludes the others), and the k-th of a run of adjacent ones
	// 5·3^(k-1); but the first earns at most 15: 10 at the line's start,
	// else 20 less a leading penalty of at least 5.
	s.k = utf8.RuneCountInString(query)
	s.upperBound = fzCamel*s.k - fzFirstLoss
	adj := fzAdjacent
	for i := 1; i < s.k; i++ {
		s.maxCur = min(s.maxCur+adj, fzNoBound)
		s.upperBound += adj
		if s.upperBound >= fzNoBound {
			s.upperBound, s.maxCur = fzNoBound, fzNoBound
			break
		}
		adj *= 3
	}
	return s
}

// bound is the most a line of n bytes (after the cut) can score, or
// fzNoBound.
func (s *lineScorer) bound(n int) int {
	if s.upperBound >= fzNoBound {
		return fzNoBound
	}
	return s.upperBound + s.k - n
}

// Bound is what a document's lines can score at most for a query, and
// the most adjacency bonus they can have gathered (sahilm/fuzzy's
// currAdjacentMatchBonus); c < 0: unknown. From these, the bounds for a
// query one character longer follow without reading the document: the
// characters before the last match where they did, the last can only
// do worse on fewer candidates (or escape a leading penalty of at most
// 15), and the new one earns at most 20 plus an adjacency bonus of
// 2c+5, and a point back from the length penalty. So s grows by at most
// 41 + 2c and c to at most 3c + 5. At is kept beside: one past where
// the query's first in-order match ends in a lower-cased text, so the
// longer query's match goes on from there (0: not known), and n, how
// many of the query's bytes that match holds.
type Bound struct{ s, c, at, n int32 }

// boundMax is past any bound kept: what does not fit is not known.
const boundMax = math.MaxInt32

// unknown is a bound not known.
var unknown = Bound{c: -1}

// makeBound is the bound s, c, or unknown when they do not fit.
func makeBound(s, c int) Bound {
	if c < 0 || c >= boundMax || s >= boundMax {
		return unknown
	}
	return Bound{s: int32(max(s, -boundMax)), c: int32(c)} // a bound raised is still one
}

func (b Bound) known() bool { return b.c >= 0 }

// extend is the bound after n more query characters (at not kept).
func (b Bound) extend(n int) Bound {
	if !b.known() {
		return unknown
	}
	s, c := int(b.s), int(b.c)
	for range n {
		s += 41 + 2*c
		c = 3*c + 5
		if s >= boundMax || c >= boundMax {
			return unknown
		}
	}
	return makeBound(s, c)
}

var foldTable = func() (t [256]byte) {
	for i := range t {
		t[i] = foldASCII(byte(i))
	}
	return t
}()

func foldASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isSepASCII(c byte) bool {
	return c == '/' || c == '-' || c == '_' || c == ' ' || c == '.' || c == '\\'
}

// plainASCII reports whether b holds only ASCII and no NUL: the bytes the
// fast scorer reads as sahilm/fuzzy reads them.
func plainASCII(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		// A byte with its high bit set, or a zero byte (the classic test).
		if w&highs != 0 || (w-ones)&^w&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf || c == 0 {
			return false
		}
	}
	return true
}

// score scores line (already cut and without its line ending).
func (s *lineScorer) score(line []byte) (int, bool) {
	if !s.ascii || !plainASCII(line) {
		return s.reference(line)
	}
	s.nx.reset(line)
	return s.scoreAt(line, 0, len(line))
}

// scoreLowered is scoreAt for a lower-cased text (s.caps set): with one
// byte to look for per query byte, it jumps with bytes.IndexByte from a
// candidate to the next and to where it is committed (the byte before
// the next query byte), rather than stepping a byte at a time.
func (s *lineScorer) scoreLowered(text []byte, start, stop int) (int, bool) {
	lo := s.lower
	k := len(lo)
	idx := s.idx[:0]
	total, cur := 0, 0
	for pi, j := 0, start; j < stop; {
		pc := lo[pi]
		n := bytes.IndexByte(text[j:stop], pc)
		if n < 0 {
			break
		}
		j += n
		// The candidates for pc are its bytes up to the one before the
		// next query byte (or the line's end): the best of them is kept.
		commit := stop - 1
		if pi+1 < k {
			if p := bytes.IndexByte(text[j+1:stop], lo[pi+1]); p >= 0 {
				commit = j + p
			}
		}
		best, bestAt := -1, -1
		for q := j; ; {
			score := 0
			if q == start {
				score += fzFirstChar
			} else {
				last := text[q-1]
				if 'a' <= last && last <= 'z' && s.upperAt(q) && !s.upperAt(q-1) {
					score += fzCamel
				}
				if isSepASCII(last) {
					score += fzAfterSep
				}
			}
			if len(idx) > 0 && q-1 == start+idx[len(idx)-1] {
				b := cur*2 + fzAdjacent
				score += b
				cur += b
			}
			if score > best {
				best, bestAt = score, q
			}
			n := bytes.IndexByte(text[q+1:commit+1], pc)
			if n < 0 {
				break
			}
			q += 1 + n
		}
		if len(idx) == 0 {
			best += max((bestAt-start)*fzLeading, fzLeadingMax)
		}
		total += best
		idx = append(idx, bestAt-start)
		if pi++; pi == k {
			break
		}
		j = commit + 1
	}
	s.idx, s.cur = idx, cur
	return total + len(idx) - (stop - start), len(idx) == k
}

// scoreAt scores text[start:stop], plain ASCII. It is sahilm/fuzzy's
// loop over bytes, with folding by table, that jumps with bytes.IndexByte
// to the next candidate while no candidate waits to be committed. It
// reads text in its own case: a lower-cased one goes to scoreLowered.
func (s *lineScorer) scoreAt(text []byte, start, stop int) (int, bool) {
	lo, up := s.lower, s.upper
	k := len(lo)
	idx := s.idx[:0]
	total, pi := 0, 0
	best, bestAt := -1, -1
	cur := 0
	pc, pn := lo[0], byte(0) // the current query byte, and the next (0: none; plain text has no NUL)
	if k > 1 {
		pn = lo[1]
	}
	for j := start; j < stop; j++ {
		if bestAt < 0 {
			// Nothing to commit: only the next candidate matters.
			next := bytes.IndexByte(text[j:stop], pc)
			if up[pi] != pc {
				end := stop
				if next >= 0 {
					end = j + next
				}
				if u := bytes.IndexByte(text[j:end], up[pi]); u >= 0 {
					next = u
				}
			}
			if next < 0 {
				break
			}
			j += next
		}
		c := text[j]
		if foldTable[c] == pc {
			score := 0
			if j == start {
				score += fzFirstChar
			} else {
				last := text[j-1]
				if 'a' <= last && last <= 'z' && 'A' <= c && c <= 'Z' {
					score += fzCamel
				}
				if isSepASCII(last) {
					score += fzAfterSep
				}
			}
			if len(idx) > 0 && j-1 == start+idx[len(idx)-1] {
				b := cur*2 + fzAdjacent
				score += b
				cur += b
			}
			if score > best {
				best, bestAt = score, j
			}
		}
		if bestAt >= 0 && (j == stop-1 || foldTable[text[j+1]] == pn) {
			if len(idx) == 0 {
				best += max((bestAt-start)*fzLeading, fzLeadingMax)
			}
			total += best
			idx = append(idx, bestAt-start)
			best, bestAt = -1, -1
			pi++
			if pi == k {
				break
			}
			pc, pn = lo[pi], 0
			if pi+1 < k {
				pn = lo[pi+1]
			}
		}
	}
	s.idx, s.cur = idx, cur
	return total + len(idx) - (stop - start), len(idx) == k
}

// reference scores a line with sahilm/fuzzy itself.
func (s *lineScorer) reference(line []byte) (int, bool) {
	s.idx, s.cur = s.idx[:0], -1
	ms := sahilm.Find(s.query, []string{string(line)})
	if len(ms) == 0 {
		return 0, false
	}
	s.idx = append(s.idx, ms[0].MatchedIndexes...)
	return ms[0].Score, true
}

// nexter finds the next occurrence of a byte in a text, remembering each
// answer: asked with positions that never go back, it reads each byte of
// the text at most once per byte value looked for.
type nexter struct {
	text []byte
	pos  [256]int
	gen  [256]uint32
	g    uint32
}

func (n *nexter) reset(text []byte) {
	n.text = text
	n.g++
	if n.g == 0 { // wrapped: forget every answer
		n.gen = [256]uint32{}
		n.g = 1
	}
}

// next is the first index at or after at holding b, or -1.
func (n *nexter) next(b byte, at int) int {
	if n.gen[b] == n.g {
		if p := n.pos[b]; p < 0 || p >= at {
			return p
		}
	}
	i := -1
	if at < len(n.text) {
		if i = bytes.IndexByte(n.text[at:], b); i >= 0 {
			i += at
		}
	}
	n.gen[b], n.pos[b] = n.g, i
	return i
}

// foldNext is the first index in [at, stop) holding lo or up, or -1.
func (n *nexter) foldNext(lo, up byte, at, stop int) int {
	i := n.next(lo, at)
	if up != lo {
		if j := n.next(up, at); j >= 0 && (i < 0 || j < i) {
			i = j
		}
	}
	if i >= stop {
		return -1
	}
	return i
}

// matches reports whether the query's characters occur in text in order,
// case ignored. For an ASCII query, ASCII letters fold: the Kelvin sign
// and the long s, which Unicode folds to k and s, are not looked for.
func (s *lineScorer) matches(text []byte) bool {
	if !asciiOnly(s.lower) {
		return subsequenceFold(s.query, text)
	}
	s.nx.reset(text)
	at := 0
	for i := range s.lower {
		j := s.nx.foldNext(s.lower[i], s.upper[i], at, len(text))
		if j < 0 {
			return false
		}
		at = j + 1
	}
	return true
}

// matchEnd is matches for an ASCII query in a lower-cased text, one byte
// to look for per query byte, from byte from: where the first in-order
// match ends (its last byte), or -1.
func (s *lineScorer) matchEnd(text []byte, from int) int {
	return matchEnd(text, from, s.lower)
}

// matchEnd is where the first in-order match of lower's bytes in text
// from byte from ends (its last byte; from-1 for none), or -1.
func matchEnd(text []byte, from int, lower []byte) int {
	at := from
	for _, b := range lower {
		i := bytes.IndexByte(text[at:], b)
		if i < 0 {
			return -1
		}
		at += i + 1
	}
	return at - 1
}

func asciiOnly(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// subsequenceFold is matches for queries beyond ASCII: runes compared by
// Unicode simple folding, as sahilm/fuzzy compares them.
func subsequenceFold(query string, text []byte) bool {
	q := []rune(query)
	i := 0
	for _, r := range string(text) {
		if i == len(q) {
			break
		}
		if r == q[i] || foldsTo(r, q[i]) {
			i++
		}
	}
	return i == len(q)
}

func foldsTo(a, b rune) bool {
	for r := unicode.SimpleFold(b); r != b; r = unicode.SimpleFold(r) {
		if r == a {
			return true
		}
	}
	return false
}

// caseForms are a query's bytes lower-cased and upper-cased (ASCII).
func caseForms(query string) (lower, upper []byte) {
	lower, upper = []byte(query), []byte(query)
	for i, c := range lower {
		lower[i] = foldASCII(c)
		if 'a' <= lower[i] && lower[i] <= 'z' {
			upper[i] = lower[i] - 'a' + 'A'
		}
	}
	return lower, upper
}

// docHit is a document's best line while a search runs: offsets into its
// text, so nothing is copied until the hit is among the best.
type docHit struct {
	index      int
	score      int
	text       []byte
	start, end int
	// caps, when set, holds the case of text, a lower-cased Corpus
	// text, from bit capBase (see lineScorer.caps).
	caps    []uint64
	capBase int
}

// worse orders hits from the worst kept: lower score, then later index.
func worse(a, b docHit) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.index > b.index
}

// bestHits keeps the best limit hits, the worst on top.
type bestHits []docHit

func (h bestHits) Len() int           { return len(h) }
func (h bestHits) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h bestHits) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *bestHits) Push(x any)        { *h = append(*h, x.(docHit)) }
func (h *bestHits) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer keeps hit if it is among the best limit (limit 0: all).
func (h *bestHits) offer(hit docHit, limit int) {
	switch {
	case limit <= 0 || len(*h) < limit:
		heap.Push(h, hit)
	case worse((*h)[0], hit):
		(*h)[0] = hit
		heap.Fix(h, 0)
	}
}

// floor is the score a line must reach to matter, and whether there is one.
func (h bestHits) floor(limit int) (int, bool) {
	if limit <= 0 || len(h) < limit {
		return 0, false
	}
	return h[0].score, true
}

// fzFirstLoss is how much less than 20 a query's first character earns
// at best, and firstLoss how much less than that, by where in its line
// it first comes (3: 3 or later).
const fzFirstLoss = 5

var firstLoss = [4]int{0, 0, 5, 10}

// bestLine finds a document's best-scoring line, and the bound its lines
// give for a longer query. Lines that cannot beat floor (when set) or the
// best line so far are skipped unread: their length alone rules them out,
// since sahilm/fuzzy takes a point off for every unmatched byte, or prev
// (the document's bound for the query this one extends) does. Plain says
// the query and the text are plain ASCII (s.ascii, plainASCII); only
// then may the text be a lower-cased one with s.caps, and then the lines
// without the query in order are passed over together: last is where
// the query's in-order match from the text's start ends (matchEnd).
func (s *lineScorer) bestLine(d Doc, plain bool, last int, floor int, hasFloor bool, prev Bound) (docHit, bool, Bound) {
	hit := docHit{index: d.Index, text: d.Text}
	found := false
	text := d.Text
	// The next query's bound: ns, nc while known.
	ns, nc, known := -fzNoBound, 0, true
	ps, pc := int(prev.s), int(prev.c)
	skip := plain && s.caps != nil
	for at := 0; at <= len(text); {
		if skip && last >= 0 {
			if last < at {
				last = -1
			} else {
				// No line ending before the match from at ends holds
				// the query: go on from the line holding its last byte
				// (a line break in the query ends its line), where the
				// match must be looked for again.
				was := at
				if text[last] == '\n' {
					at = last + 1
				} else {
					at += bytes.LastIndexByte(text[at:last], '\n') + 1
				}
				if at != was {
					last = -1
				}
			}
		}
		end := bytes.IndexByte(text[at:], '\n')
		after := 0
		if end < 0 {
			end, after = len(text), len(text)+1
		} else {
			end += at
			after = end + 1
		}
		start, stop := at, end
		at = after
		for stop > start && text[stop-1] == '\r' {
			stop--
		}
		if stop-start > fzLineCut {
			stop = start + fzLineCut
		}
		line := text[start:stop]
		if skip && len(line) < len(s.lower) {
			continue // too short to hold the query
		}
		// A NUL ends a line for sahilm/fuzzy: such lines are not cut
		// short by their length.
		b := fzNoBound
		if plain || bytes.IndexByte(line, 0) < 0 {
			b = s.bound(len(line))
		}
		if prev.known() {
			b = min(b, ps)
		}
		if skip && ((hasFloor && b >= floor) || (found && b > hit.score)) {
			// Where the query's first byte first comes bounds what it
			// earns: 10 at the line's start, else at most 20 less a
			// leading penalty of 5 a byte (at most 15).
			i0 := bytes.IndexByte(line, s.lower[0])
			if i0 < 0 {
				continue // the line lacks the query
			}
			b = min(b, s.bound(len(line))-firstLoss[min(i0, 3)])
		}
		if (hasFloor && b < floor) || (found && b <= hit.score) {
			switch {
			case prev.known():
				ns, nc = max(ns, b), max(nc, pc)
			case b < fzNoBound && s.maxCur < fzNoBound:
				// No adjacency bonus exceeds the most k characters make.
				ns, nc = max(ns, b), max(nc, s.maxCur)
			default:
				known = false
			}
			last = -1 // the match from the next line is not known
			continue
		}
		if skip {
			if last < 0 {
				if last = s.matchEnd(text, start); last < 0 {
					break // no later line holds the query
				}
			}
			if last >= stop {
				continue // the match runs past this line: at moves on
			}
			last = -1
		}
		var score int
		var ok bool
		if skip {
			score, ok = s.scoreLowered(text, start, stop)
		} else if plain {
			score, ok = s.scoreAt(text, start, stop)
		} else {
			score, ok = s.score(line)
		}
		if !ok {
			continue // a line without the query cannot have a longer one
		}
		if known {
			c := s.cur
			if c < 0 {
				// Each adjacency bonus is at most its character's score,
				// and those add up to the score less the length penalty
				// and a leading penalty of at most 15.
				c = score - s.k + len(line) - fzLeadingMax
			}
			ns, nc = max(ns, score), max(nc, c)
		}
		if !found || score > hit.score {
			hit.score, hit.start, hit.end, found = score, start, stop, true
		}
	}
	if !known {
		return hit, found, unknown
	}
	return hit, found, makeBound(ns, nc)
}
