package fuzzy

import (
	"bytes"
	"math/bits"
)

// A scan for a query of two bytes or more can look for two of its bytes
// at once, a fixed distance apart, 32 places at a time with AVX2 (see
// pair_amd64.s): with the two rarest bytes, few places in prose have
// both, so the scan runs at close to memory speed whatever the query.
// bytes.Index, the portable way, stops at every occurrence of one byte
// (every few dozen bytes for a common letter) and is several times
// slower; BenchmarkCorpusSubstring measures both.

// rarestPair is the offsets in q (len(q) >= 2) of its two bytes that
// occur least in a sample of the texts, in order.
func (c Corpus) rarestPair(q []byte) (int, int) {
	sample := c.buf[:min(len(c.buf), 256<<10)]
	var seen [256]int
	count := func(i int) int {
		b := q[i]
		if seen[b] == 0 {
			seen[b] = 1 + bytes.Count(sample, q[i:i+1])
		}
		return seen[b]
	}
	first, second := -1, -1
	for i := range q {
		switch n := count(i); {
		case first < 0 || n < count(first):
			first, second = i, first
		case second < 0 || n < count(second):
			second = i
		}
	}
	return min(first, second), max(first, second)
}

// scanPair is scan with pairMask: q (two bytes or more) in texts
// lo..hi-1, found where its bytes r1 < r2 both are.
func (c Corpus) scanPair(q []byte, r1, r2, lo, hi int) []int {
	if lo >= hi {
		return nil
	}
	first, end := c.start(lo), c.ends[hi-1]
	d := r2 - r1
	a, b := q[r1], q[r2]
	var out []int
	k := lo
	// p is where q[r1] would be: a match starts at p-r1, and the last
	// one can start at end-len(q).
	last := end - len(q) + r1
	hit := func(p int) bool {
		s0 := p - r1
		if !bytes.Equal(c.buf[s0:s0+len(q)], q) {
			return false
		}
		k = c.textAt(s0, k, hi)
		return s0+len(q) <= c.ends[k] // not one that runs into the next text
	}
	for p := first + r1; p <= last; {
		off, mask := pairMask(c.buf[p:last+1+d], d, a, b)
		if mask == 0 {
			// The last places, fewer than a block, one at a time.
			for p += off; p <= last; p++ {
				if c.buf[p] == a && c.buf[p+d] == b && hit(p) {
					out = append(out, k)
					p = c.ends[k] + r1 - 1
					k++
				}
			}
			break
		}
		p += off
		next := p + 32
		for mask != 0 {
			at := p + bits.TrailingZeros32(mask)
			mask &= mask - 1
			if hit(at) {
				out = append(out, k)
				next = c.ends[k] + r1
				k++
				break
			}
		}
		p = next
	}
	return out
}
