package fuzzy

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Ref is a Corpus text searched as a document: Text is its number in
// the corpus, Index the index it answers to (as Doc.Index).
type Ref struct{ Index, Text int }

// notPlain is the byte classes a text must hold to have bytes outside
// ASCII or a NUL (and the ESC that shares the NUL's class): a text whose
// mask has none of them is plain ASCII without reading it.
var notPlain = uint64(1)<<classOf[0x80] | uint64(1)<<classOf[0]

// Lines is the package's Lines over refs, texts of c, and docs, whose
// indices must differ; but the candidates it returns, every text that
// has the query's characters in order, may also hold texts of c not yet
// checked for that, whose bounds kept them from being read (see take).
// A ref is matched and scored on the corpus's
// lower-cased text and its case bits, so the search reads nothing but
// memory, and a text without one of an ASCII query's byte classes is
// passed over on its mask alone. Texts beyond plain ASCII, and every
// text for a query beyond it, are scored in their own case, restored.
// The order of refs does not change the result, but the sooner the best
// come (the last query's best, say), the fewer texts are scored: the
// workers share the score a text must reach.
func (c Corpus) Lines(refs []Ref, docs []Doc, query string, limit int, prev []Bound, steps int, bounds []Bound) ([]LineHit, []int) {
	n := len(refs) + len(docs)
	workers := min(runtime.GOMAXPROCS(0), max(n/1024, 1))
	qm, masked := QueryMask(query)
	parts := make([]linesPart, workers)
	var shared sharedFloor
	shared.v.Store(math.MinInt64)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			p := &parts[w]
			p.sc, p.limit, p.prev, p.steps, p.bounds = newLineScorer(query), limit, prev, steps, bounds
			p.shared = &shared
			lo, hi := w*n/workers, (w+1)*n/workers
			p.cands = make([]int, 0, hi-lo)
			for i := lo; i < min(hi, len(refs)); i++ {
				r := refs[i]
				if m := c.masks[r.Text]; !masked || m&qm == qm {
					p.corpusText(c, r, m)
				}
			}
			p.sc.caps = nil
			for i := max(lo, len(refs)); i < hi; i++ {
				d := docs[i-len(refs)]
				if hit, ok := p.take(d, p.sc.ascii && plainASCII(d.Text), -1); ok {
					p.offer(hit)
				}
			}
		})
	}
	wg.Wait()
	var best []docHit
	var cands []int
	for _, p := range parts {
		best = append(best, p.best...)
		cands = mergeSorted(cands, sortRuns(p.cands))
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
		if b.caps != nil {
			line = restoreCase(nil, line, b.caps, b.capBase+b.start)
		}
		sc.score(line)
		hits[i] = LineHit{Index: b.index, Line: string(line), Matched: slices.Clone(sc.idx), Score: b.score}
	}
	return hits, cands
}

// sortRuns sorts a, which is mostly in order (refs put the last query's
// best first, and docs come after them): its long runs in order are
// merged rather than sorted again, the rest sorted.
func sortRuns(a []int) []int {
	var short []int
	var runs [][]int
	for i := 0; i < len(a); {
		j := i + 1
		for j < len(a) && a[j-1] <= a[j] {
			j++
		}
		if j-i < 64 {
			short = append(short, a[i:j]...)
		} else {
			runs = append(runs, a[i:j])
		}
		i = j
	}
	slices.Sort(short)
	out := short
	for _, r := range runs {
		out = mergeSorted(out, r)
	}
	return out
}

// mergeSorted merges two sorted lists.
func mergeSorted(a, b []int) []int {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]int, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// sharedFloor is the highest of the workers' floors: with limit texts
// kept that score at least this, a text that scores less is not among
// the best limit of all.
type sharedFloor struct{ v atomic.Int64 }

func (f *sharedFloor) raise(to int) {
	for {
		old := f.v.Load()
		if int64(to) <= old || f.v.CompareAndSwap(old, int64(to)) {
			return
		}
	}
}

// linesPart is one worker's share of a Lines search.
type linesPart struct {
	shared  *sharedFloor
	sc      *lineScorer
	limit   int
	prev    []Bound
	steps   int
	bounds  []Bound
	best    bestHits
	cands   []int
	scratch []byte // a text's own case, restored
}

// corpusText searches text r.Text of c, whose mask is m.
func (p *linesPart) corpusText(c Corpus, r Ref, m uint64) {
	text := c.Text(r.Text)
	base := c.capAt[r.Text] * 64
	var hit docHit
	var ok bool
	if p.sc.ascii && (m&notPlain == 0 || plainASCII(text)) {
		p.sc.caps, p.sc.capBase = c.caps, base
		hit, ok = p.take(Doc{Index: r.Index, Text: text}, true, int(c.shortest[r.Text]))
	} else {
		// sahilm/fuzzy reads these in their own case.
		p.sc.caps = nil
		p.scratch = restoreCase(p.scratch[:0], text, c.caps, base)
		hit, ok = p.take(Doc{Index: r.Index, Text: p.scratch}, false, -1)
	}
	if ok {
		// The hit keeps the corpus's text (the scratch is reused), the
		// same bytes at the same offsets but for case.
		hit.text, hit.caps, hit.capBase = text, c.caps, base
		p.offer(hit)
	}
}

// offer keeps hit if it is among the worker's best, and shares the
// worker's floor.
func (p *linesPart) offer(hit docHit) {
	p.best.offer(hit, p.limit)
	if f, ok := p.best.floor(p.limit); ok {
		p.shared.raise(f)
	}
}

// take matches d (lower-cased when p.sc.caps is set; plain as bestLine
// has it), keeps it as a candidate and its bound, and returns its best
// line unless it has none or cannot be among the best. Shortest, when
// not -1, is the length of its shortest line that is not empty (plain
// texts only): what it allows bounds every line before any is read.
// A lower-cased text that cannot be among the best is kept as a
// candidate without its in-order check, which waits, kept in its Bound,
// until a longer query may find it among the best.
func (p *linesPart) take(d Doc, plain bool, shortest int) (docHit, bool) {
	sc := p.sc
	lowered := sc.caps != nil
	var was Bound // what the last query learned of d
	pb := unknown
	if p.prev != nil {
		was = p.prev[d.Index]
		pb = was.extend(p.steps)
	}
	if !lowered && !sc.matches(d.Text) {
		return docHit{}, false
	}
	floor, hasFloor := p.best.floor(p.limit)
	if f := p.shared.v.Load(); f != math.MinInt64 && (!hasFloor || int(f) > floor) {
		floor, hasFloor = int(f), true
	}
	if nb, out := sc.outOfReach(pb, floor, hasFloor, shortest); out {
		p.cands = append(p.cands, d.Index)
		if p.bounds != nil {
			if lowered && was.at > 0 {
				nb.at, nb.n = was.at, was.n // what was matched still holds
			}
			p.bounds[d.Index] = nb
		}
		return docHit{}, false
	}
	last := -1
	if lowered {
		// The match of the query this one extends goes on where it ended.
		from, rest := 0, sc.lower
		if was.at > 0 && int(was.n) <= len(rest) {
			from, rest = int(was.at), rest[was.n:]
		}
		if last = matchEnd(d.Text, from, rest); last < 0 {
			return docHit{}, false
		}
	}
	p.cands = append(p.cands, d.Index)
	hit, ok, nb := sc.bestLine(d, plain, last, floor, hasFloor, pb)
	if p.bounds != nil {
		if lowered {
			nb.at, nb.n = int32(last+1), int32(len(sc.lower))
		}
		p.bounds[d.Index] = nb
	}
	return hit, ok
}

// outOfReach reports whether a text whose bound is pb (from the last
// query) and whose shortest line that is not empty is shortest bytes long
// (-1: not known) cannot reach floor, and if so its bound for the next
// query, as bestLine would give it with every line passed over.
func (s *lineScorer) outOfReach(pb Bound, floor int, hasFloor bool, shortest int) (Bound, bool) {
	if !hasFloor {
		return unknown, false
	}
	if pb.known() && int(pb.s) < floor {
		return pb, true // what was known still holds
	}
	if shortest < 0 {
		return unknown, false
	}
	b := s.bound(shortest)
	if pb.known() {
		b = min(b, int(pb.s))
	}
	switch {
	case b >= floor:
		return unknown, false
	case pb.known():
		return makeBound(b, int(pb.c)), true
	case b < fzNoBound && s.maxCur < fzNoBound:
		return makeBound(b, s.maxCur), true
	}
	return unknown, true
}

// restoreCase appends low, lower-cased, to dst with the bytes that caps
// marks (from bit at) upper-cased again.
func restoreCase(dst, low []byte, caps []uint64, at int) []byte {
	n := len(dst)
	dst = append(dst, low...)
	out := dst[n:]
	for i := range out {
		if p := at + i; caps[p>>6]>>(p&63)&1 != 0 {
			out[i] -= 'a' - 'A'
		}
	}
	return dst
}
