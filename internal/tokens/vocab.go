package tokens

import (
	"cmp"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// noRank marks a string that is not a token.
const noRank = ^uint32(0)

// An entry describes a string that is a token or begins one. Tokens are
// reachable if they are the encoding of their own bytes: the others never
// come out of a merge (o200k_base has none, but a vocabulary may).
const (
	entID        = 1<<18 - 1 // the token's id, or that of a token it begins
	entToken     = 1 << 18   // the string is a token
	entReachable = 1 << 19   // ... a reachable one
	entExtends   = 1 << 20   // the string begins a longer token
	entUsed      = 1 << 21   // the entry exists

	// noMerge is the rank, in a trace, of the merge after the last one.
	noMerge = entID
)

// vocab is o200k_base's ranks, read from the codec, and an index of the
// strings that are tokens or begin one.
//
// The tokens have ids of their own, in the order of their bytes, so that
// the tokens of one kind of text (lower-case words, say) and what is known
// of them sit together in memory: the searches of countPiece spend most of
// their time waiting for memory, and memory close to what they just read
// is likely in the cache.
//
// The index is laid out for the searches of countPiece, which look up the
// prefixes of the text at each position, most of them not tokens: strings
// of one and two bytes have tables of their own, and the longer ones are
// in a small hash table for each of their first two bytes. So the entries
// one kind of text needs (of lower-case letters, say: some 40,000) sit
// together in a few hundred kilobytes that stay in the cache, and a table
// slot holds the bytes of a string of up to six, so that the lookup of one
// reads nothing else.
type vocab struct {
	text   string   // token i is text[off[i]:off[i+1]]
	off    []uint32 // len(off) is the number of tokens + 1
	tokLen []uint8
	rankOf []uint32 // token i's rank
	maxLen int
	seed   maphash.Seed

	one [1 << 8]uint32 // entry, by the byte
	// two holds the entry of each string of two bytes, by its bytes,
	// little-endian, and above it the rank of the token (noRank if none),
	// which validPair wants of every pair of tokens it checks.
	two [1 << 16]uint64
	// Which strings of three bytes are tokens, and which have entries, by
	// their bytes, little-endian: most three-byte lookups find nothing,
	// and these bitmaps spare them a look in the tables.
	tok3, ent3 []uint64
	// sub[b] locates the table of the strings longer than two bytes that
	// begin with the two bytes b: its slots are slots[start:start+size],
	// sub[b] = start<<32 | size.
	sub   [1 << 16]uint64
	slots []uint64 // key<<32 | len<<24 | entry; 0 is an empty slot

	// nextPrefix[i] is the id of the longest reachable token that token i
	// begins with, or noRank.
	nextPrefix []uint32
	// trace[off[i]+k], for a reachable token i, describes the merge of its
	// bytes after k merges: the rank of the next merge (noMerge if none),
	// and the lengths of the first and last parts, less one.
	trace []uint32
}

func (v *vocab) token(i uint32) string { return v.text[v.off[i]:v.off[i+1]] }

// rank returns the rank of the token s, or noRank.
func (v *vocab) rank(s string) uint32 {
	if e := v.entry(s); e&entToken != 0 {
		return v.rankOf[e&entID]
	}
	return noRank
}

// entry returns the entry of s, or 0 if s is no token and begins none.
func (v *vocab) entry(s string) uint32 {
	switch len(s) {
	case 0:
		return 0
	case 1:
		return v.one[s[0]]
	case 2:
		return uint32(v.two[int(s[0])|int(s[1])<<8])
	}
	if len(s) == 3 {
		b := int(s[0]) | int(s[1])<<8 | int(s[2])<<16
		switch bit := uint64(1) << (b % 64); {
		case v.ent3[b/64]&bit == 0:
			return 0
		case v.tok3[b/64]&bit == 0:
			return entExtends | entUsed // it begins a token but is none
		}
	} else if len(s) > v.maxLen {
		return 0
	}
	if i, ok := v.find(s); ok {
		return uint32(v.slots[i]) & (entUsed<<1 - 1)
	}
	return 0
}

// find returns the slot of s, longer than two bytes, if it has one, or
// else the empty slot where it would go.
func (v *vocab) find(s string) (int, bool) {
	sub := v.sub[int(s[0])|int(s[1])<<8]
	start, size := int(sub>>32), uint32(sub)
	if size == 0 {
		return -1, false
	}
	key, h := v.key(s)
	want := key<<32 | uint64(len(s))<<24
	i := int(uint64(h) * uint64(size) >> 32)
	for {
		e := v.slots[start+i]
		if e == 0 {
			return start + i, false
		}
		if e&^(1<<24-1) == want && (len(s) <= 6 || v.is(s, uint32(e))) {
			return start + i, true
		}
		if i++; i == int(size) {
			i = 0
		}
	}
}

// key returns the key of s, longer than two bytes, in its slot, and its
// hash. The key of a string of up to six bytes is its bytes after the
// first two, which its table and its length stand for.
func (v *vocab) key(s string) (key uint64, h uint32) {
	if len(s) <= 6 {
		for i := 2; i < len(s); i++ {
			key |= uint64(s[i]) << (8 * (i - 2))
		}
		return key, uint32((key | uint64(len(s))<<32) * 0x9e3779b97f4a7c15 >> 32)
	}
	x := maphash.String(v.seed, s)
	return x >> 32, uint32(x)
}

// is reports whether entry e, of a slot whose key matches s, is that of s:
// whether its token is s, or begins with s.
func (v *vocab) is(s string, e uint32) bool {
	t := v.token(e & entID)
	if e&entToken != 0 {
		return t == s
	}
	return len(t) > len(s) && t[:len(s)] == s
}

// mark ORs flags into the entry of s, which exists.
func (v *vocab) mark(s string, flags uint32) {
	switch len(s) {
	case 1:
		v.one[s[0]] |= flags
	case 2:
		v.two[int(s[0])|int(s[1])<<8] |= uint64(flags)
	default:
		i, _ := v.find(s)
		v.slots[i] |= uint64(flags)
	}
}

// loadVocab reads the vocabulary from the codec, one token at a time
// through Decode, the codec's only way to show it, and indexes it. It
// returns nil if the codec cannot load or its vocabulary is not one this
// code can hold (some byte not a token, too many tokens or too long a
// token); Count then counts with the codec alone.
var loadVocab = sync.OnceValue(func() *vocab {
	c := codec()
	if c == nil {
		return nil
	}
	// Ranks are dense from 0; the vocabulary ends at the first that does
	// not decode (the special tokens, further on, are never merged).
	var toks []string
	ids := []uint{0}
	for r := uint(0); ; r++ {
		ids[0] = r
		s, err := c.Decode(ids)
		if err != nil || s == "" {
			break
		}
		toks = append(toks, s)
	}
	n := len(toks)
	if n == 0 || n >= entID {
		return nil
	}
	// Sorting on the first eight bytes, packed, mostly spares comparing
	// strings.
	type sortKey struct {
		head uint64
		rank uint32
	}
	keys := make([]sortKey, n)
	for r, s := range toks {
		var head uint64
		for i := range 8 {
			head <<= 8
			if i < len(s) {
				head |= uint64(s[i])
			}
		}
		keys[r] = sortKey{head, uint32(r)}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		return strings.Compare(toks[a.rank], toks[b.rank])
	})
	byBytes := make([]uint32, n)
	for i, k := range keys {
		byBytes[i] = k.rank
	}

	v := &vocab{seed: maphash.MakeSeed()}
	var text []byte
	v.off = make([]uint32, 0, n+1)
	v.tokLen = make([]uint8, 0, n)
	v.rankOf = byBytes
	for i, r := range byBytes {
		s := toks[r]
		// A trace holds the lengths of parts in seven bits.
		if len(s) > 128 || i > 0 && s == toks[byBytes[i-1]] {
			return nil
		}
		v.off = append(v.off, uint32(len(text)))
		v.tokLen = append(v.tokLen, uint8(len(s)))
		text = append(text, s...)
		v.maxLen = max(v.maxLen, len(s))
	}
	v.off = append(v.off, uint32(len(text)))
	v.text = string(text)
	if !v.index() {
		return nil
	}

	// Which tokens are reachable, with the trace of their merges; then, for
	// each token, the longest reachable one it begins with.
	m := new(merger)
	v.trace = make([]uint32, len(v.text))
	for i := range uint32(n) {
		s := v.token(i)
		m.merge(v, s, v.trace[v.off[i]:v.off[i+1]])
		if int(m.next[0]) == len(s) {
			v.mark(s, entReachable)
		}
	}
	v.nextPrefix = make([]uint32, n)
	for i := range uint32(n) {
		s := v.token(i)
		v.nextPrefix[i] = noRank
		for k := len(s) - 1; k > 0; k-- {
			if e := v.entry(s[:k]); e&entReachable != 0 {
				v.nextPrefix[i] = e & entID
				break
			}
		}
	}
	builtVocab.Store(v)
	return v
})

// builtVocab is the vocabulary once loadVocab has built it.
var builtVocab atomic.Pointer[vocab]

// index builds the index of the tokens and their prefixes, all but the
// flag that needs merges, entReachable. It reports false if some byte is
// not a token.
//
// In the order of their bytes, the strings a token begins with that no
// token before it begins with are those longer than what it shares with
// the token before: those are the strings to index, each once.
func (v *vocab) index() bool {
	n := uint32(len(v.off) - 1)
	var count [1 << 16]uint32
	each := func(f func(s string, e uint32)) {
		prev := ""
		for i := range n {
			t := v.token(i)
			k := 0
			for k < len(prev) && k < len(t) && prev[k] == t[k] {
				k++
			}
			for k++; k < len(t); k++ {
				f(t[:k], i|entExtends|entUsed)
			}
			e := i | entToken | entUsed
			if i+1 < n && strings.HasPrefix(v.token(i+1), t) {
				e |= entExtends
			}
			f(t, e)
			prev = t
		}
	}
	each(func(s string, e uint32) {
		switch len(s) {
		case 1:
			v.one[s[0]] = e
		case 2:
			v.two[int(s[0])|int(s[1])<<8] = uint64(e)
		default:
			count[int(s[0])|int(s[1])<<8]++
		}
	})
	// Tables half empty keep the lookups of absent strings short.
	total := 0
	for b, c := range count {
		if c > 0 {
			size := 2*c + 1
			v.sub[b] = uint64(total)<<32 | uint64(size)
			total += int(size)
		}
	}
	v.slots = make([]uint64, total)
	v.tok3 = make([]uint64, 1<<24/64)
	v.ent3 = make([]uint64, 1<<24/64)
	each(func(s string, e uint32) {
		if len(s) == 3 {
			b := int(s[0]) | int(s[1])<<8 | int(s[2])<<16
			v.ent3[b/64] |= 1 << (b % 64)
			if e&entToken != 0 {
				v.tok3[b/64] |= 1 << (b % 64)
			}
		}
		if len(s) > 2 {
			i, _ := v.find(s)
			key, _ := v.key(s)
			v.slots[i] = key<<32 | uint64(len(s))<<24 | uint64(e)
		}
	})
	for i, e := range v.two {
		r := uint64(noRank)
		if e&entToken != 0 {
			r = uint64(v.rankOf[e&entID])
		}
		v.two[i] = r<<32 | e
	}
	for _, e := range v.one {
		if e&entToken == 0 {
			return false
		}
	}
	return true
}
