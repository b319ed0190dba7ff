// Package tokens counts tokens as the o200k_base encoding does, exactly
// and fast: it splits text as the encoding's regex does and caches the
// count of every piece.
package tokens

import (
	"hash/maphash"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Count counts tokens with the o200k_base encoding (embedded, so it
// works offline). Counts are an estimate for providers with other
// tokenizers, but a consistent one across every view.
//
// The count is exactly the codec's, only faster: the codec splits text with
// a regex and byte-pair encodes each piece on its own, so Count splits
// the text itself, the same way (see split.go), and sums per-piece
// counts, which it caches. Pieces the cache does not have are counted by
// the codec or, once it is loaded, by the vocabulary index of bpe.go and
// vocab.go, several times faster and in linear time. Building the index
// takes a fifth of a second and some 20 MB, which Count spends only when a
// text needs it: for a piece too long to count well with the codec, or a
// text of a megabyte or more.
func Count(s string) int {
	if s == "" {
		return 0
	}
	c := codec()
	if c == nil {
		return approxTokens(s)
	}
	pc := &pieceCounter{c: c, v: builtVocab.Load()}
	if pc.v == nil && len(s) >= vocabText {
		pc.v = loadVocab()
	}
	// Short pieces are looked up in batches, so that the lookups, often
	// cache misses, overlap rather than wait on one another.
	var batch [shortBatch]shortKey
	k, n := 0, 0
	for p := 0; p < len(s); {
		end, kind := nextSpan(s, p)
		switch {
		case kind == spanSkip:
		case end-p == 1 && s[p] < 0x80:
			n++ // every ASCII byte is a token
		case end-p <= shortKeyMax:
			a, b := packShort(s[p:end])
			batch[k] = shortKey{a, b, p, end}
			if k++; k == len(batch) {
				m, ok := shortTokens(pc, s, batch[:])
				if !ok {
					return approxTokens(s)
				}
				n, k = n+m, 0
			}
		default:
			m, ok := longTokens(pc, s[p:end])
			if !ok {
				return approxTokens(s)
			}
			n += m
		}
		p = end
	}
	m, ok := shortTokens(pc, s, batch[:k])
	if !ok {
		return approxTokens(s)
	}
	return n + m
}

// vocabText is the length of text from which Count builds the vocabulary
// index if it has not been yet: counting a megabyte with it rather than
// with the codec saves about what building it costs.
const vocabText = 1 << 20

// pieceCounter counts the pieces that the cache does not have.
type pieceCounter struct {
	c tokenizer.Codec
	v *vocab // nil until Count needs it or it is built
}

func (pc *pieceCounter) count(piece string) (int, bool) {
	if pc.v != nil {
		return countPiece(pc.v, piece), true
	}
	n, err := pc.c.Count(piece)
	return n, err == nil
}

var codec = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil
	}
	return c
})

// approxTokens is the usual four-characters-a-token estimate, used only if
// the tokenizer cannot load or reject its input.
func approxTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// shortBatch is how many short pieces Count looks up at a time.
const shortBatch = 32

// shortKey is a piece of s[start:end], packed for the short table.
type shortKey struct {
	a, b       uint64
	start, end int
}

// shortTokens sums the token counts of short pieces of s, each as the codec
// counts it on its own (a piece splits to itself), through the short table.
func shortTokens(pc *pieceCounter, s string, keys []shortKey) (int, bool) {
	t := shortTable.Load()
	if t == nil {
		shortTable.CompareAndSwap(nil, new(shortCache))
		t = shortTable.Load()
	}
	n := 0
	for _, key := range keys {
		if m, ok := t.get(key.a, key.b); ok {
			n += m
			continue
		}
		m, ok := pc.count(s[key.start:key.end])
		if !ok {
			return 0, false
		}
		t.put(key.a, key.b, m)
		n += m
	}
	return n, true
}

// longTokens counts the tokens of a longer piece, through the long table.
// The codec's merge of a piece longer than the table's keys could take
// seconds: those are counted with the vocabulary index.
func longTokens(pc *pieceCounter, piece string) (int, bool) {
	if len(piece) > longKeyMax {
		if pc.v == nil {
			pc.v = loadVocab()
		}
		return pc.count(piece)
	}
	slot := &longSlots[maphash.String(longSeed, piece)&(1<<longBits-1)]
	if e := slot.Load(); e != nil && e.key == piece {
		return e.n, true
	}
	n, ok := pc.count(piece)
	if !ok {
		return 0, false
	}
	// Clone: the key must not pin the caller's (possibly large) string.
	slot.Store(&longEntry{key: strings.Clone(piece), n: n})
	return n, true
}

// Pieces of up to 15 bytes, nearly all of them, are cached in an
// open-addressing table that holds each key and its count inline in two
// words: a lookup reads one cache line and takes no lock. Slots are written
// once: claimed with a CAS, then filled, so readers never see half an entry.
// When the table is full it is replaced by an empty one, which bounds memory
// (shortSlots*16 bytes, 4 MiB) whatever the input.
const (
	shortKeyMax  = 15
	shortBits    = 18
	shortSlots   = 1 << shortBits
	shortMaxFill = shortSlots / 2 // entries before the table is replaced
	shortProbes  = 16             // slots a lookup or insert looks at, at most
	shortClaimed = 1              // word b of a slot being filled (no key has len 0)
)

type shortSlot struct {
	a, b atomic.Uint64 // a: key bytes 0-7; b: key bytes 8-14, len, count
}

type shortCache struct {
	slots [shortSlots]shortSlot
	fill  atomic.Int64
}

var shortTable atomic.Pointer[shortCache] // allocated on first use

// packShort packs a key of 1 to 15 bytes into a and b; b's low byte holds the
// length (high nibble) and is left zero in the low nibble for the count.
func packShort(s string) (a, b uint64) {
	n := len(s)
	switch {
	case n >= 8:
		a = le64(s)
		if n > 8 {
			b = le64(s[n-8:]) >> (8 * (16 - n)) // bytes 8 to n-1
		}
	case n >= 4:
		a = le32(s) | le32(s[n-4:])<<(8*(n-4))
	default:
		a = uint64(s[0]) | uint64(s[n/2])<<(8*(n/2)) | uint64(s[n-1])<<(8*(n-1))
	}
	return a, b<<8 | uint64(n)<<4
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

var shortSeed = maphash.String(maphash.MakeSeed(), "")

func shortHash(a, b uint64) uint64 {
	h := (a ^ shortSeed) * 0x9e3779b97f4a7c15
	h = bits.RotateLeft64(h, 31) ^ b
	return (h * 0xbf58476d1ce4e5b9) >> (64 - shortBits)
}

func (t *shortCache) get(a, b uint64) (int, bool) {
	i := shortHash(a, b)
	for range shortProbes {
		s := &t.slots[i]
		sb := s.b.Load()
		if sb == 0 {
			return 0, false
		}
		if sb&^0xf == b && s.a.Load() == a {
			return int(sb & 0xf), true
		}
		i = (i + 1) & (shortSlots - 1)
	}
	return 0, false
}

func (t *shortCache) put(a, b uint64, n int) {
	if n > 0xf {
		return // only with invalid UTF-8, which the codec reads as U+FFFD
	}
	if t.fill.Add(1) > shortMaxFill {
		if shortTable.Load() == t {
			shortTable.CompareAndSwap(t, new(shortCache))
		}
		return
	}
	i := shortHash(a, b)
	for range shortProbes {
		s := &t.slots[i]
		if s.b.Load() == 0 && s.b.CompareAndSwap(0, shortClaimed) {
			s.a.Store(a)
			s.b.Store(b | uint64(n))
			return
		}
		i = (i + 1) & (shortSlots - 1)
	}
}

// Longer pieces, up to longKeyMax bytes, go to a small direct-mapped table of
// immutable entries; longer ones still are rare and counted every time.
const (
	longKeyMax = 64
	longBits   = 14
)

type longEntry struct {
	key string
	n   int
}

var (
	longSeed  = maphash.MakeSeed()
	longSlots [1 << longBits]atomic.Pointer[longEntry]
)
