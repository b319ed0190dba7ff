package tokens

import (
	"math/bits"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Pieces are byte-pair encoded here rather than by the codec, whose merge
// takes some 300 ns and 40 bytes of heap a byte: a megabyte-long piece
// would take seconds and hundreds of megabytes.
//
// The encoding is the codec's (tiktoken's): the parts start as single
// bytes, and the adjacent pair whose concatenation is the token of lowest
// rank merges, the leftmost of equal ranks, until no pair makes a token.
// merger does exactly that, with a heap, and serves to build the index and
// as the tests' reference. countPiece gets the same tokens in one pass,
// with the backtracking search of the bpe crate of
// github.com/github/rust-gems (its README sets out the reasoning, which
// holds for this rule of merging too):
//
// Call a sequence of tokens valid if it is the encoding of its own text.
// The encoding of a text is unique. A run of tokens within a valid
// sequence is valid, since the merges that made them never looked across
// their ends. Two valid sequences that share a token, one ending with it
// and the other starting with it, join into a valid sequence: a merge
// across one of their boundaries would have happened in one of the two.
// So tokens t1..tn are the encoding of their text if and only if each
// adjacent pair is valid (and each token alone: the search only takes
// reachable tokens, see vocab).
//
// The search takes, at each position, the longest token whose pair with
// the token before is valid; when none is, it backs up a token and tries
// a shorter one there. A bitmap of the positions it has given up on keeps
// it from exploring any twice, so it is linear. Whether a pair is valid,
// validPair decides from the traces of the two tokens' own merges.

// merger holds the scratch of one byte-pair merge, reused: part i of the
// text being merged starts at byte i and ends at next[i]; rank[i] is the
// rank of its pair with the next part (noRank for a part merged away).
type merger struct {
	next, prev []int32
	rank       []uint32
	heap       []uint64 // rank<<32 | start of the pair's left part
}

// merge byte-pair encodes s, at most 1<<31 - 1 bytes, leaving its tokens
// in the next chain from 0, which ends at len(s). If trace is not nil, it
// has room for a trace (see vocab.trace) of len(s) states and gets it.
func (m *merger) merge(v *vocab, s string, trace []uint32) {
	n := len(s)
	if n == 0 {
		return
	}
	if cap(m.next) < n {
		m.next = make([]int32, n)
		m.prev = make([]int32, n)
		m.rank = make([]uint32, n)
	}
	next, prev, rank := m.next[:n], m.prev[:n], m.rank[:n]
	h := m.heap[:0]
	for i := range n - 1 {
		next[i], prev[i] = int32(i+1), int32(i-1)
		r := v.rank(s[i : i+2])
		rank[i] = r
		if r != noRank {
			h = append(h, uint64(r)<<32|uint64(i))
		}
	}
	next[n-1], prev[n-1], rank[n-1] = int32(n), int32(n-2), noRank
	// The pairs were appended in order of position; heapify them.
	for i := len(h)/2 - 1; i >= 0; i-- {
		heapDown(h, i)
	}
	// pairRank is the rank of the pair that starts at part i.
	pairRank := func(i int32) uint32 {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		return v.rank(s[i:next[j]])
	}
	lastStart, merges := int32(n-1), 0
	if trace != nil {
		trace[0] = 0 // parts of one byte
	}
	for len(h) > 0 {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		if last > 0 {
			heapDown(h, 0)
		}
		i, r := int32(uint32(top)), uint32(top>>32)
		// A pair whose rank changed since it was pushed is stale: a pair
		// only grows, and a longer string is another token.
		if rank[i] != r {
			continue
		}
		j := next[i]
		k := next[j]
		rank[j] = noRank
		next[i] = k
		if int(k) < n {
			prev[k] = i
		} else {
			lastStart = i
		}
		if trace != nil {
			trace[merges] |= r
			merges++
			trace[merges] = uint32(next[0]-1)<<18 | uint32(int32(n)-lastStart-1)<<25
		}
		r = pairRank(i)
		rank[i] = r
		if r != noRank {
			h = heapPush(h, uint64(r)<<32|uint64(i))
		}
		if p := prev[i]; p >= 0 {
			r := pairRank(p)
			rank[p] = r
			if r != noRank {
				h = heapPush(h, uint64(r)<<32|uint64(p))
			}
		}
	}
	m.heap = h
	if trace != nil {
		trace[merges] |= noMerge
	}
}

func heapPush(h []uint64, x uint64) []uint64 {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= x {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	return h
}

func heapDown(h []uint64, i int) {
	x := h[i]
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if x <= h[c] {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
}

// countPiece counts the tokens of one piece as the codec does: one if the
// piece is a token, else the number of tokens its merge leaves.
func countPiece(v *vocab, piece string) int {
	piece = asRunes(piece)
	if v.entry(piece)&entToken != 0 {
		return 1
	}
	words := len(piece)/64 + 1
	if words <= 8 {
		var starts, open [8]uint64
		n, _ := v.count(piece, starts[:words], open[:words])
		return n
	}
	if procs := runtime.GOMAXPROCS(0); procs > 1 && len(piece) >= 2*segmentMin {
		return v.countSegments(piece, min(procs, len(piece)/segmentMin))
	}
	bitmaps := make([]uint64, 2*words)
	n, _ := v.count(piece, bitmaps[:words], bitmaps[words:])
	return n
}

// asRunes returns s as the codec's regex engine passes it on, read as
// []rune(s) reads it: each byte of invalid UTF-8 becomes a U+FFFD.
func asRunes(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// count counts the tokens of s with the backtracking search, and the
// steps the search took (each costs at most a pair's validation, so the
// steps measure its work). starts and open are bitmaps of len(s)+1 bits,
// starts zero: starts marks where the tokens found so far start, open the
// ends of tokens that the search has not given up on.
func (v *vocab) count(s string, starts, open []uint64) (count, steps int) {
	if s == "" {
		return 0, 0
	}
	for i := range open {
		open[i] = ^uint64(0)
	}
	n := len(s)
	pos, last := 0, noRank
	tok := v.longest(s, 0)
	for ; pos < n; steps++ {
		end := pos + int(v.tokLen[tok])
		switch {
		case open[end/64]&(1<<(end%64)) != 0 && (last == noRank || v.validPair(s, pos, last, tok)):
			starts[pos/64] |= 1 << (pos % 64)
			count++
			pos, last = end, tok
			if pos < n {
				tok = v.longest(s, pos)
			}
		case v.nextPrefix[tok] != noRank:
			tok = v.nextPrefix[tok]
		default:
			// No token starting here can follow the tokens before it: back
			// up one token and try the ones shorter than it.
			open[pos/64] &^= 1 << (pos % 64)
			pos = prevBit(starts, pos-1)
			starts[pos/64] &^= 1 << (pos % 64)
			count--
			tok, last = last, noRank
			if pos > 0 {
				last = v.entry(s[prevBit(starts, pos-1):pos]) & entID
			}
		}
	}
	return count, steps
}

// prevBit returns the highest set bit of bitmap b at or below i.
func prevBit(b []uint64, i int) int {
	w := i / 64
	x := b[w] & (^uint64(0) >> (63 - i%64))
	for x == 0 {
		w--
		x = b[w]
	}
	return w*64 + 63 - bits.LeadingZeros64(x)
}

// longest returns the longest reachable token s[pos:] begins with.
func (v *vocab) longest(s string, pos int) uint32 {
	best := v.one[s[pos]]
	if best&entExtends == 0 || pos+1 == len(s) {
		return best & entID
	}
	for end := pos + 2; end <= len(s); end++ {
		e := v.entry(s[pos:end])
		if e&entReachable != 0 {
			best = e
		}
		if e&entExtends == 0 {
			break
		}
	}
	return best & entID
}

// validPair reports whether tokens a = s[?:pos] and b = s[pos:?], both
// reachable, are a valid pair: whether merging their bytes leaves the two
// of them. It replays the merges of a's bytes and of b's as they interleave
// when merged together, by rank, the left one first of equal ranks, and
// tells whether the pair across pos, of a's last part and b's first, ever
// comes first: a's merges are to the left of it, b's to the right.
func (v *vocab) validPair(s string, pos int, a, b uint32) bool {
	ta, tb := v.trace[v.off[a]:v.off[a+1]], v.trace[v.off[b]:v.off[b+1]]
	i, j := 0, 0
	cross, lastA, firstB := noRank, 0, 0
	dead := false // no token begins with a's last part and b's first
	for {
		ea, eb := ta[i], tb[j]
		la, lb := int(ea>>25)+1, int(eb>>18&127)+1
		if la != lastA || lb != firstB && !dead {
			lastA, firstB = la, lb
			if la+lb == 2 {
				e := v.two[int(s[pos-1])|int(s[pos])<<8]
				cross, dead = uint32(e>>32), e&entExtends == 0
			} else {
				e := v.entry(s[pos-la : pos+lb])
				cross, dead = noRank, e&entExtends == 0
				if e&entToken != 0 {
					cross = v.rankOf[e&entID]
				}
			}
		} else if lb != firstB {
			firstB, cross = lb, noRank
		}
		ra, rb := ea&noMerge, eb&noMerge
		if cross < ra && cross <= rb {
			return false
		}
		switch {
		case ra == noMerge && rb == noMerge:
			return true
		case ra <= rb:
			i++
		default:
			j++
		}
	}
}
