package fuzzy

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
)

// Corpus keeps many texts for repeated searches: lower-cased once (ASCII
// letters only, so every offset in a text is the text's own) in one
// buffer that a search scans with the vectorised bytes.Index, and beside
// each text a mask of the byte classes it holds, so a fuzzy query can
// skip the texts that lack one of its characters without reading them.
//
// A Corpus value is a snapshot: Append returns a longer one sharing the
// same memory, and values taken before stay valid and unchanged. Appends
// must be made one at a time, each to the latest value.
type Corpus struct {
	buf   []byte
	ends  []int // ends[k] is where text k ends in buf; it starts at ends[k-1]
	masks []uint64
	// caps has a bit set for each byte that was an upper-case ASCII
	// letter, so a text's own case (which fuzzy scoring reads) can be
	// told without the original; text k's bits start at word capAt[k],
	// each text on whole words so an Append never writes a word an
	// older snapshot reads.
	caps  []uint64
	capAt []int
	// shortest is the length of each text's shortest line that is not
	// empty, as fuzzy scoring cuts lines (fzLineCut+1: none), which bounds
	// what its lines can score before any is read.
	shortest []uint16
}

// Grow returns the corpus with room for texts more texts of bytes bytes
// in all, so that reading a session's messages in does not copy what it
// read as it grows (an estimate is fine: Append makes more room when
// it is short).
func (c Corpus) Grow(texts, bytes int) Corpus {
	c.buf = slices.Grow(c.buf, bytes)
	c.ends = slices.Grow(c.ends, texts)
	c.masks = slices.Grow(c.masks, texts)
	c.caps = slices.Grow(c.caps, bytes/64+texts)
	c.capAt = slices.Grow(c.capAt, texts)
	c.shortest = slices.Grow(c.shortest, texts)
	return c
}

// Append adds a text (copied, lower-cased) and returns the longer corpus.
func (c Corpus) Append(text []byte) Corpus {
	at := len(c.buf)
	if at+len(text) > cap(c.buf) {
		// Twice the room, not append's quarter more for big slices: a
		// session's text of hundreds of megabytes would be copied
		// about four times over as it is read, not once.
		c.buf = slices.Grow(c.buf, max(len(text), cap(c.buf)))
	}
	c.buf = append(c.buf, text...)
	w, words := len(c.caps), (len(text)+63)/64
	c.caps = slices.Grow(c.caps, words)[:w+words]
	clear(c.caps[w:])
	caps := c.caps[w:]
	var mask uint64
	low := c.buf[at:]
	for i, b := range low {
		if 'A' <= b && b <= 'Z' {
			caps[i>>6] |= 1 << (i & 63)
		}
		low[i] = foldTable[b]
		mask |= 1 << classOf[b]
	}
	c.capAt = append(c.capAt, w)
	c.shortest = append(c.shortest, uint16(shortestLine(low)))
	c.ends = append(c.ends, len(c.buf))
	c.masks = append(c.masks, mask)
	return c
}

// Len is how many texts the corpus holds.
func (c Corpus) Len() int { return len(c.ends) }

// Bytes is the size of the texts held.
func (c Corpus) Bytes() int { return len(c.buf) }

// Text is text k, lower-cased; it must not be changed.
func (c Corpus) Text(k int) []byte { return c.buf[c.start(k):c.ends[k]] }

func (c Corpus) start(k int) int {
	if k == 0 {
		return 0
	}
	return c.ends[k-1]
}

// classOf maps a byte to one of 64 classes: a letter (either case), a
// digit, any byte outside ASCII, or one of 27 groups of the other ASCII
// bytes.
var classOf = func() (t [256]uint8) {
	for i := range t {
		c := byte(i)
		switch {
		case 'a' <= c && c <= 'z':
			t[i] = c - 'a'
		case 'A' <= c && c <= 'Z':
			t[i] = c - 'A'
		case '0' <= c && c <= '9':
			t[i] = 26 + c - '0'
		case c >= 0x80:
			t[i] = 63
		default:
			t[i] = 36 + c%27
		}
	}
	return t
}()

// QueryMask is the byte classes a text must hold to have query's bytes
// in order, case ignored as ASCII letters are; ok is false when query
// has bytes outside ASCII, whose Unicode folding the mask cannot
// follow (every text may match).
func QueryMask(query string) (mask uint64, ok bool) {
	for i := 0; i < len(query); i++ {
		if query[i] >= 0x80 {
			return 0, false
		}
		mask |= 1 << classOf[query[i]]
	}
	return mask, true
}

// CanSubstring reports whether Substring can look for query: a query
// with bytes outside ASCII needs Unicode case folding, which the texts
// were not lowered for.
func CanSubstring(query string) bool {
	_, ok := QueryMask(query)
	return ok
}

// Substring returns, in order, the numbers of the texts that contain
// query, case ignored (query must be ASCII: CanSubstring). The corpus is
// split across every core, each part scanned with bytes.Index as one
// run of memory; a hit that straddles two texts is not one.
func (c Corpus) Substring(query string) []int {
	q := []byte(query)
	for i, b := range q {
		q[i] = foldTable[b]
	}
	n := c.Len()
	if n == 0 {
		return nil
	}
	if len(q) == 0 {
		out := make([]int, n)
		for k := range out {
			out[k] = k
		}
		return out
	}
	workers := min(runtime.GOMAXPROCS(0), max(len(c.buf)>>20, 1))
	// Parts of about equal size in bytes, at texts' edges.
	cuts := make([]int, workers+1)
	cuts[workers] = n
	for w := 1; w < workers; w++ {
		cuts[w], _ = slices.BinarySearch(c.ends, len(c.buf)*w/workers)
		cuts[w] = max(cuts[w], cuts[w-1])
	}
	parts := make([][]int, workers)
	var wg sync.WaitGroup
	if pairSIMD && len(q) >= 2 {
		r1, r2 := c.rarestPair(q)
		for w := range workers {
			wg.Go(func() { parts[w] = c.scanPair(q, r1, r2, cuts[w], cuts[w+1]) })
		}
	} else {
		r := c.rarest(q)
		for w := range workers {
			wg.Go(func() { parts[w] = c.scan(q, r, cuts[w], cuts[w+1]) })
		}
	}
	wg.Wait()
	if workers == 1 {
		return parts[0]
	}
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// rarest is the offset in q of the byte that occurs least in a sample
// of the texts, the last such on a tie: bytes.Index jumps from one
// occurrence of its query's first byte to the next, so a search starts
// its scan there (a byte every few bytes would make it crawl).
func (c Corpus) rarest(q []byte) int {
	sample := c.buf[:min(len(c.buf), 256<<10)]
	best, at := -1, 0
	var seen [256]int
	for i, b := range q {
		if seen[b] == 0 {
			seen[b] = 1 + bytes.Count(sample, q[i:i+1])
		}
		// A suffix of one byte loses bytes.Index's check of a second.
		if n := seen[b]; best < 0 || n < best || (n == best && i < len(q)-1) {
			best, at = n, i
		}
	}
	return at
}

// textAt is the text that holds byte off, looked for among texts
// k..hi-1 (off is in one of them): forward from k a step at a time,
// then halving, since a scan's hits are mostly a few texts apart.
func (c Corpus) textAt(off, k, hi int) int {
	for range 4 {
		if c.ends[k] > off {
			return k
		}
		k++
	}
	j, _ := slices.BinarySearch(c.ends[k:hi], off+1) // the first text ending past off
	return k + j
}

// scan finds q in texts lo..hi-1, looking for q[r:] and checking the
// r bytes before.
func (c Corpus) scan(q []byte, r, lo, hi int) []int {
	if lo >= hi {
		return nil
	}
	var out []int
	first, end := c.start(lo), c.ends[hi-1]
	key := q[r:]
	k := lo
	for pos := first + r; pos < end; {
		i := bytes.Index(c.buf[pos:end], key)
		if i < 0 {
			break
		}
		p := pos + i
		s0 := p - r
		if !bytes.Equal(c.buf[s0:p], q[:r]) {
			pos = p + 1 // the rarest byte's suffix, but not the query
			continue
		}
		k = c.textAt(s0, k, hi)
		if s0+len(q) <= c.ends[k] {
			out = append(out, k)
			pos = c.ends[k] + r
			k++
			continue
		}
		pos = p + 1 // a hit that runs into the next text is not one
	}
	return out
}

// shortestLine is the length of text's shortest line that is not empty,
// with its line ending (and any '\r' before it) left out and cut to
// fzLineCut bytes, or fzLineCut+1 when every line is empty.
func shortestLine(text []byte) int {
	short := fzLineCut + 1
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		for len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if n := min(len(line), fzLineCut); n > 0 && n < short {
			short = n
		}
	}
	return short
}
