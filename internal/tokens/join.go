package tokens

import (
	"math/bits"
	"sync"
)

// A piece of megabytes is counted in segments, one per processor, which
// are then joined. The tokens of each segment are valid on their own; where
// two meet, if the last token of one and the first of the next are a valid
// pair, the sequences join. If not, a window of tokens around the junction
// is encoded again, and replaces them if its own ends pair validly with the
// tokens outside it; if they do not, the window doubles on both sides and
// is tried again, up to the whole text from the start to the end of the
// segment. (See bpe.go for why valid pairs are enough.)

// segmentMin is the least length of a segment.
const segmentMin = 1 << 19

// countSegments counts the tokens of s in k segments, in parallel. The
// segments start on whole words of the bitmap, 64 bytes apart at least.
func (v *vocab) countSegments(s string, k int) int {
	n := len(s)
	k = max(1, min(k, n/128))
	// starts marks the start of each token; segments are whole words of it,
	// so that each writes only its own.
	starts := make([]uint64, n/64+1)
	bounds := make([]int, k+1)
	for i := range bounds {
		bounds[i] = i * n / k &^ 63
	}
	bounds[k] = n
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			a, b := bounds[i], bounds[i+1]
			open := make([]uint64, (b-a)/64+1)
			v.count(s[a:b], starts[a/64:], open)
		})
	}
	wg.Wait()
	j := joiner{v: v, s: s, starts: starts}
	for i := 1; i < k; i++ {
		j.join(bounds[i], bounds[i+1])
	}
	count := 0
	for _, w := range starts {
		count += bits.OnesCount64(w)
	}
	return count
}

// joiner joins the tokens of s[:e], valid, and those of s[e:f], valid on
// their own, into tokens of s[:f] that are valid.
type joiner struct {
	v      *vocab
	s      string
	starts []uint64
}

func (j *joiner) join(e, f int) {
	if j.valid(j.prevStart(e), e, j.nextStart(e, f)) {
		return
	}
	lo, hi := e, e
	for k := 1; ; k *= 2 {
		for i := 0; i < k && lo > 0; i++ {
			lo = j.prevStart(lo)
		}
		for i := 0; i < k && hi < f; i++ {
			hi = j.nextStart(hi, f)
		}
		j.encode(lo, hi)
		if (lo == 0 || j.valid(j.prevStart(lo), lo, j.nextStart(lo, hi))) &&
			(hi == f || j.valid(j.prevStart(hi), hi, j.nextStart(hi, f))) {
			return
		}
	}
}

// valid reports whether the tokens s[a:b] and s[b:c] are a valid pair.
func (j *joiner) valid(a, b, c int) bool {
	v := j.v
	return v.validPair(j.s, b, v.entry(j.s[a:b])&entID, v.entry(j.s[b:c])&entID)
}

// encode encodes s[a:b] on its own and marks its tokens' starts, in place
// of those marked there.
func (j *joiner) encode(a, b int) {
	words := (b-a)/64 + 1
	bitmaps := make([]uint64, 2*words)
	window := bitmaps[:words]
	j.v.count(j.s[a:b], window, bitmaps[words:])
	for i := a; i < b; i++ {
		bit := uint64(1) << (i % 64)
		j.starts[i/64] &^= bit
		if window[(i-a)/64]&(1<<((i-a)%64)) != 0 {
			j.starts[i/64] |= bit
		}
	}
}

// prevStart returns the start of the token that ends at i > 0.
func (j *joiner) prevStart(i int) int { return prevBit(j.starts, i-1) }

// nextStart returns the end of the token that starts at i < f, within
// tokens that end at f.
func (j *joiner) nextStart(i, f int) int {
	for i++; i < f; i++ {
		if j.starts[i/64]&(1<<(i%64)) != 0 {
			return i
		}
	}
	return f
}
