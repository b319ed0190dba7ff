package jsonpack

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"

	"weft/model"
)

// Builder packs a document over a text as the document is written, in
// pieces (the methods of model.PartsWriter), so that it is never made
// whole: a string that is a stretch of the text becomes a hole without
// being written out, and a JSON value is planned as Make plans a
// document. A message's parts read from a request are stored this way:
// a megabyte tool result is its content again, in the part and in its
// block, and neither is written out for the store to find it there.
//
// The packed form is the one Make's plan writes, and Unpack gives the
// document back as the pieces wrote it: encoding/json's strings without
// HTML escaping, values compacted.
type Builder struct {
	text string
	// body is the packed form after its size: the stretches and holes
	// so far; lit is the document's bytes since the last hole.
	body, lit []byte
	size      int
	holes     int
	// last is the text's stretch of the last text hole: the next text
	// is looked for after it, a block's where it is.
	last   [2]int
	budget int
	bad    bool
}

// NewBuilder is a Builder of a document over text.
func NewBuilder(text string) *Builder {
	return &Builder{text: text, budget: 4*len(text) + 1024}
}

// JSON writes s as it is.
func (b *Builder) JSON(s string) {
	b.lit = append(b.lit, s...)
	b.size += len(s)
}

// String writes s as a JSON string (encoding/json's, without HTML
// escaping): a hole when s is a stretch of the text.
func (b *Builder) String(s string) {
	if len(s) >= minHole {
		if off, ok := b.find(s); ok {
			b.hole(0, off, len(s), model.QuotedLen(s))
			b.last = [2]int{off, off + len(s)}
			return
		}
	}
	n := len(b.lit)
	b.lit = model.AppendQuoted(b.lit, s)
	b.size += len(b.lit) - n
}

// Value writes the JSON value v compacted, its stretches of the text
// (and its strings said before in it) as holes; false when v is not
// JSON.
func (b *Builder) Value(v []byte) bool {
	if !compact(v) {
		var c bytes.Buffer
		if json.Compact(&c, v) != nil {
			b.bad = true
			return false
		}
		v = c.Bytes()
	} else if !json.Valid(v) {
		b.bad = true
		return false
	}
	base := b.size
	pl := &planner{text: b.text, doc: v, budget: 4*len(b.text) + 2*len(v) + 1024, last: b.last}
	if len(v) < minHole {
		pl.holes = nil
	} else if _, ok := pl.value(0, 0); !ok {
		pl.holes = nil
	}
	at := 0
	for _, h := range pl.holes {
		b.lit = append(b.lit, v[at:h.start]...)
		b.size += h.start - at
		off := h.off
		if h.kind == kindBefore {
			off += base
		}
		b.hole(h.kind, off, h.n, h.end-h.start)
		at = h.end
	}
	b.lit = append(b.lit, v[at:]...)
	b.size += len(v) - at
	b.last = pl.last
	return true
}

// hole ends the stretch written as it is and writes a hole of kind,
// which writes n bytes of the document.
func (b *Builder) hole(kind byte, off, n, written int) {
	b.body = binary.AppendUvarint(b.body, uint64(len(b.lit)))
	b.body = append(b.body, b.lit...)
	b.lit = b.lit[:0]
	b.body = append(b.body, kind)
	b.body = binary.AppendUvarint(b.body, uint64(off))
	b.body = binary.AppendUvarint(b.body, uint64(n))
	if kind < kindAsIs {
		b.body = binary.AppendUvarint(b.body, uint64(written))
	}
	b.size += written
	b.holes++
}

// find is where s is in the text: right after the last text hole's
// stretch (the next part's text), at it, or anywhere, while the budget
// lasts.
func (b *Builder) find(s string) (int, bool) {
	text := b.text
	for _, off := range b.last {
		if strings.HasPrefix(text[off:], s) {
			return off, true
		}
	}
	for _, from := range []int{b.last[1], 0} {
		if b.budget <= 0 || from > len(text) {
			break
		}
		k := strings.Index(text[from:], s)
		if k >= 0 {
			b.budget -= k + len(s)
			return from + k, true
		}
		b.budget -= len(text) - from
		if from == 0 {
			break
		}
	}
	return 0, false
}

// Finish is what was written: false when a value was not JSON. Packed,
// its plan (whose Append writes the packed form, whatever document it is
// given); else the document itself.
func (b *Builder) Finish() (Plan, []byte, bool) {
	if b.bad {
		return Plan{}, nil, false
	}
	if b.holes == 0 {
		return Plan{}, b.lit, true
	}
	form := binary.AppendUvarint(make([]byte, 0, len(b.body)+len(b.lit)+2*binary.MaxVarintLen64), uint64(b.size))
	form = append(form, b.body...)
	form = binary.AppendUvarint(form, uint64(len(b.lit)))
	form = append(form, b.lit...)
	return Plan{form: form, size: len(form)}, nil, true
}

// compact reports whether the JSON v has no space outside its strings.
func compact(v []byte) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			end, ok := skipString(v, i)
			if !ok {
				return false
			}
			i = end - 1
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}
