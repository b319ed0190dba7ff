// Package jsonpack stores a JSON document that repeats a text, or
// repeats itself, once: as a template of the document's bytes whose
// holes refer to the text, or to what came before them.
//
// A message weft stores holds its text (its content) and its parts, a
// JSON document in which that text is written again, often twice: as
// each part's text, and inside each part's source block as the client
// wrote it. A tool call's input is written in the content, in the part
// and in its source block; a model's thinking in the part and in its
// block. Pack finds those stretches: a JSON string that is a stretch of
// the text written as an encoder writes one (the escaping style is read
// off the string, so the text written in that style gives the string back
// byte for byte), an object or list that is a stretch of the text as it
// is, a string that repeats one before it. The packed form keeps the
// rest as it is, and Unpack gives back the document byte for byte.
//
// Packing looks at each stretch only as far as it must, and gives up
// looking once it has read the text and the document a few times over:
// it costs time in proportion to their length, whatever they hold.
package jsonpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
)

// The packed form:
//
//	uvarint size      the document's length
//	then, until the end:
//	  uvarint n, n bytes   the document as it is, up to the next hole
//	  a hole (none after the last stretch):
//	    byte kind
//	    kind 0..31 (a style):  uvarint off, uvarint n, uvarint len: text[off:off+n]
//	                           written as a JSON string in that style, len bytes
//	    kind kindAsIs:         uvarint off, uvarint n: text[off:off+n] as it is
//	    kind kindBefore:       uvarint from, uvarint n: the n bytes of the
//	                           document at from, before the hole
const (
	kindAsIs   = 0x40
	kindBefore = 0x41
)

const (
	// minHole is the shortest stretch worth a hole (a hole takes a few
	// bytes).
	minHole = 32
	// minDoc is the shortest document worth looking into.
	minDoc = 2 * minHole
	// prefixLen is how much of a stretch is looked for in the text.
	prefixLen = 24
	// tries bounds the places in the text a stretch is matched at.
	tries = 4
)

// hole is a stretch of the document, doc[start:end], written from a
// hole.
type hole struct {
	start, end int
	kind       byte
	off, n     int // the text's stretch; for kindBefore, the document's
}

// Plan is how a document is packed over a text: its holes, in order. The
// zero Plan has none: the document is not worth packing.
type Plan struct {
	holes []hole
	size  int // the packed form's length
	// form is the packed form itself, when a Builder made it as the
	// document was written.
	form []byte
}

// Packs reports whether the plan has holes: whether packing the
// document saves anything.
func (p Plan) Packs() bool { return len(p.holes) > 0 || p.form != nil }

// Len is the length of the packed form.
func (p Plan) Len() int { return p.size }

// Make plans how doc is packed over text.
func Make(text string, doc []byte) Plan {
	if len(doc) < minDoc {
		return Plan{}
	}
	pl := &planner{text: text, doc: doc, budget: 4*len(text) + 2*len(doc) + 1024}
	if _, ok := pl.value(skipSpace(doc, 0), 0); !ok || len(pl.holes) == 0 {
		return Plan{}
	}
	p := Plan{holes: pl.holes}
	p.size = p.measure(len(doc))
	if p.size >= len(doc) {
		return Plan{}
	}
	return p
}

// measure is the packed form's length for a document of n bytes.
func (p Plan) measure(n int) int {
	size := uvarintLen(n)
	at := 0
	for _, h := range p.holes {
		size += uvarintLen(h.start-at) + h.start - at + 1
		size += uvarintLen(h.off) + uvarintLen(h.n)
		if h.kind < kindAsIs {
			size += uvarintLen(h.end - h.start)
		}
		at = h.end
	}
	return size + uvarintLen(n-at) + n - at
}

// Append appends doc's packed form (p being Make's plan of it) to dst;
// a Builder's plan appends the form it made (doc is not read).
func (p Plan) Append(dst []byte, doc []byte) []byte {
	if p.form != nil {
		return append(dst, p.form...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(doc)))
	at := 0
	for _, h := range p.holes {
		dst = binary.AppendUvarint(dst, uint64(h.start-at))
		dst = append(dst, doc[at:h.start]...)
		dst = append(dst, h.kind)
		dst = binary.AppendUvarint(dst, uint64(h.off))
		dst = binary.AppendUvarint(dst, uint64(h.n))
		if h.kind < kindAsIs {
			dst = binary.AppendUvarint(dst, uint64(h.end-h.start))
		}
		at = h.end
	}
	dst = binary.AppendUvarint(dst, uint64(len(doc)-at))
	return append(dst, doc[at:]...)
}

var errShort = errors.New("packed JSON cut short")

// maxSize bounds the document a packed form may say it holds.
const maxSize = 1 << 30

// Unpack gives back the document packed over text.
func Unpack(packed []byte, text string) ([]byte, error) {
	r := reader{b: packed}
	size := r.uvarint()
	// The holes say how long each is: the document's length is checked
	// against them before it is made.
	total := uint64(0)
	for r.err == nil {
		n := r.uvarint()
		r.skip(n)
		total += n
		if r.err != nil || len(r.b) == 0 {
			break
		}
		kind := r.byte()
		off, n := r.uvarint(), r.uvarint()
		switch {
		case kind < kindAsIs && kind&^byte(styleBits) == 0:
			// A byte of text is at most six written (\u0001), and
			// the quotes.
			out := r.uvarint()
			if off > uint64(len(text)) || n > uint64(len(text))-off {
				r.fail(fmt.Errorf("a hole at %d+%d is past the text's %d bytes", off, n, len(text)))
			} else if out > 6*n+2 {
				r.fail(fmt.Errorf("a hole of %d bytes of text says it writes %d", n, out))
			}
			total += out
		case kind == kindAsIs:
			total += n
			if off > uint64(len(text)) || n > uint64(len(text))-off {
				r.fail(fmt.Errorf("a hole at %d+%d is past the text's %d bytes", off, n, len(text)))
			}
		case kind == kindBefore:
			if off > total || n > total-off {
				r.fail(fmt.Errorf("a hole repeats %d+%d, past the %d bytes before it", off, n, total))
			}
			total += n
		default:
			r.fail(fmt.Errorf("a hole of unknown kind %#x", kind))
		}
		if total > size || size > maxSize {
			r.fail(fmt.Errorf("the holes hold more than the document's %d bytes", size))
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if total != size || size > maxSize {
		return nil, fmt.Errorf("the stretches hold %d bytes, not the document's %d", total, size)
	}
	doc := make([]byte, 0, size)
	r = reader{b: packed}
	r.uvarint()
	for {
		lit := r.uvarint()
		doc = append(doc, r.b[:lit]...)
		r.b = r.b[lit:]
		if len(r.b) == 0 {
			return doc, nil
		}
		kind := r.byte()
		off, n := int(r.uvarint()), int(r.uvarint())
		switch kind {
		case kindAsIs:
			doc = append(doc, text[off:off+n]...)
		case kindBefore:
			doc = append(doc, doc[off:off+n]...)
		default:
			want := int(r.uvarint())
			at := len(doc)
			if doc = appendQuoted(doc, text[off:off+n], style(kind)); len(doc)-at != want {
				return nil, fmt.Errorf("a hole writes %d bytes, not %d", len(doc)-at, want)
			}
		}
	}
}

// reader walks a packed form; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errShort)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail(errShort)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) skip(n uint64) {
	if r.err != nil {
		return
	}
	if n > uint64(len(r.b)) {
		r.fail(errShort)
		return
	}
	r.b = r.b[n:]
}

func uvarintLen(n int) int {
	l := 1
	for x := uint64(n); x >= 0x80; x >>= 7 {
		l++
	}
	return l
}

// planner finds a document's holes.
type planner struct {
	text string
	doc  []byte
	// holes found, in order; last is the text's stretch the last text
	// hole took (a part's text and its source block say the same).
	holes []hole
	last  [2]int
	// seen are the long strings met, by their bytes' hash: where the
	// first of each is.
	seed maphash.Seed
	seen map[uint64]int
	// budget is how many bytes of text and document may still be read
	// looking for holes.
	budget int
	prefix []byte
}

// maxDepth bounds the nesting looked into.
const maxDepth = 64

// value plans the JSON value at doc[i], and returns the index past it;
// false when the document is not JSON there.
func (pl *planner) value(i, depth int) (int, bool) {
	doc := pl.doc
	if i >= len(doc) || depth > maxDepth {
		return 0, false
	}
	switch doc[i] {
	case '"':
		end, ok := skipString(doc, i)
		if ok && end-i >= minHole {
			pl.str(i, end)
		}
		return end, ok
	case '{', '[':
		end, ok := skipValue(doc, i, depth)
		if !ok {
			return 0, false
		}
		if end-i >= minHole && pl.asIs(i, end) {
			return end, true
		}
		close := byte('}')
		if doc[i] == '[' {
			close = ']'
		}
		j := skipSpace(doc, i+1)
		if j < len(doc) && doc[j] == close {
			return end, true
		}
		for {
			if doc[i] == '{' {
				// A key: looked at no further.
				k, ok := skipString(doc, j)
				if !ok {
					return 0, false
				}
				j = skipSpace(doc, k)
				if j >= len(doc) || doc[j] != ':' {
					return 0, false
				}
				j = skipSpace(doc, j+1)
			}
			k, ok := pl.value(j, depth+1)
			if !ok {
				return 0, false
			}
			j = skipSpace(doc, k)
			if j >= len(doc) {
				return 0, false
			}
			if doc[j] == close {
				return end, true
			}
			if doc[j] != ',' {
				return 0, false
			}
			j = skipSpace(doc, j+1)
		}
	}
	end := i
	for end < len(doc) && !isDelim(doc[end]) {
		end++
	}
	return end, end > i
}

// str plans the string doc[i:end]: a hole that repeats a string before
// it, or one of the text written in a style.
func (pl *planner) str(i, end int) {
	lit := pl.doc[i:end]
	if pl.seen == nil {
		pl.seed, pl.seen = maphash.MakeSeed(), map[uint64]int{}
	}
	h := maphash.Bytes(pl.seed, lit)
	if at, ok := pl.seen[h]; ok && bytes.Equal(pl.doc[at:at+len(lit)], lit) {
		pl.holes = append(pl.holes, hole{start: i, end: end, kind: kindBefore, off: at, n: len(lit)})
		return
	}
	pl.seen[h] = i
	var ok bool
	if pl.prefix, ok = unquotePrefix(pl.prefix[:0], lit, prefixLen); !ok || len(pl.prefix) == 0 {
		return
	}
	pl.find(func(off int) bool {
		n, st, ok := match(lit, pl.text[off:])
		pl.budget -= min(len(lit), len(pl.text)-off)
		if ok {
			pl.holes = append(pl.holes, hole{start: i, end: end, kind: byte(st), off: off, n: n})
			pl.last = [2]int{off, off + n}
		}
		return ok
	})
}

// asIs plans the object or list doc[i:end] as a hole of the text as it
// is, and reports whether it did.
func (pl *planner) asIs(i, end int) bool {
	v := pl.doc[i:end]
	pl.prefix = append(pl.prefix[:0], v[:min(len(v), prefixLen)]...)
	return pl.find(func(off int) bool {
		ok := len(pl.text)-off >= len(v) && pl.text[off:off+len(v)] == string(v)
		pl.budget -= min(len(v), len(pl.text)-off)
		if ok {
			pl.holes = append(pl.holes, hole{start: i, end: end, kind: kindAsIs, off: off, n: len(v)})
			pl.last = [2]int{off, off + len(v)}
		}
		return ok
	})
}

// find tries try at the places in the text where pl.prefix is, the
// likeliest first: where the last hole's stretch was (a part's text and
// its block say the same), after it (the next part's), then from the
// start; at most tries of them, while the budget lasts.
func (pl *planner) find(try func(off int) bool) bool {
	text, prefix := pl.text, string(pl.prefix)
	n := 0
	if off := pl.last[0]; strings.HasPrefix(text[off:], prefix) {
		n++
		if try(off) {
			return true
		}
	}
	starts := []int{pl.last[1], 0}
	if pl.last[1] == 0 {
		starts = starts[:1]
	}
	for _, from := range starts {
		for n < tries && pl.budget > 0 && from < len(text) {
			k := strings.Index(text[from:], prefix)
			if k < 0 {
				pl.budget -= len(text) - from
				break
			}
			pl.budget -= k + len(prefix)
			off := from + k
			if off != pl.last[0] {
				n++
				if try(off) {
					return true
				}
			}
			from = off + 1
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ':' || isSpace(c)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString is the index past the string at b[i] (a quote).
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// skipValue is the index past the object or list at b[i], its strings
// jumped through, its nesting bounded.
func skipValue(b []byte, i, depth int) (int, bool) {
	open := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			k, ok := skipString(b, j)
			if !ok {
				return 0, false
			}
			j = k - 1
		case '{', '[':
			if open++; depth+open > maxDepth {
				return 0, false
			}
		case '}', ']':
			if open--; open == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}
