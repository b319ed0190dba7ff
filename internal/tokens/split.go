package tokens

import (
	"math/bits"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// A hand-written equivalent of the split regex that the o200k_base codec
// (github.com/tiktoken-go/tokenizer v0.10.0) runs before byte-pair encoding:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n/]*
//	|\s*[\r\n]+
//	|\s+(?!\S)
//	|\s+
//
// BPE runs on each match on its own, so the token count of a text is the sum
// of the counts of its matches. The codec does not interpret that pattern:
// it runs code that regexp2cg generated from it (codec/regexp.gen.go), and we
// must agree with that code, quirks included. Two of them:
//
//   - DEL (0x7f) is left out of the ASCII bitmaps of [^\r\n\p{L}\p{N}] and
//     [^\s\p{L}\p{N}], so no alternative matches at a DEL. The scanner skips
//     it: a DEL costs no tokens and ends whatever match came before.
//   - `\s*[\r\n]+` gives back the greedy \s* by jumping to the FIRST \r or \n
//     of the whitespace run rather than the last, so it matches the run up to
//     the end of its first line-break cluster, not up to its last one.
//
// asciiPiece is the fast path, for matches that only involve ASCII, where
// \p{L} = [A-Za-z], \p{Lu} = [A-Z], \p{Ll} = [a-z], \p{N} = [0-9],
// \s = [\t\n\v\f\r ] (unicode.IsSpace), and Lt, Lm, Lo and M are empty.
// Whenever a match depends on a byte >= 0x80, runePiece redoes it on runes,
// following the generated code step by step, backtracking included.

// Byte classes.
const (
	clsPunct = iota // anything not below: [^\s\p{L}\p{N}], DEL excepted
	clsUpper        // A-Z
	clsLower        // a-z
	clsDigit        // 0-9
	clsSpace        // \t \v \f and space: \s but not \r \n
	clsCRLF         // \r \n
	clsDel          // 0x7f: matched by no alternative
	clsHigh         // >= 0x80: not ASCII
)

var byteClass = func() (t [256]uint8) {
	for i := range t {
		c := byte(i)
		switch {
		case c >= 0x80:
			t[i] = clsHigh
		case c == 0x7f:
			t[i] = clsDel
		case 'A' <= c && c <= 'Z':
			t[i] = clsUpper
		case 'a' <= c && c <= 'z':
			t[i] = clsLower
		case '0' <= c && c <= '9':
			t[i] = clsDigit
		case c == '\r' || c == '\n':
			t[i] = clsCRLF
		case c == '\t' || c == '\v' || c == '\f' || c == ' ':
			t[i] = clsSpace
		default:
			t[i] = clsPunct
		}
	}
	return t
}()

// Kinds of span nextSpan returns.
const (
	spanPiece = iota // one match of the split regex
	spanSkip         // a rune no alternative matches (DEL): no tokens
)

// nextSpan returns the end and kind of the span of s starting at p, which
// must be where the codec's scanner looks for a match (0, or the end of the
// span before). The spans tile s, and are exactly the codec's matches and
// the runes its scanner steps over.
func nextSpan(s string, p int) (end int, kind int) {
	if end = asciiPiece(s, p); end > 0 {
		if s[p] == 0x7f {
			return end, spanSkip
		}
		return end, spanPiece
	}
	if end, ok := runePiece(s, p); ok {
		return end, spanPiece
	}
	return end, spanSkip
}

// asciiPiece returns the end of the regex match at s[p], p < len(s), or 0
// if that match depends on a non-ASCII byte. For a DEL it returns p+1.
func asciiPiece(s string, p int) int {
	switch byteClass[s[p]] {
	case clsUpper, clsLower:
		return letters(s, p)
	case clsDigit:
		// \p{N}{1,3}: a fourth byte is not looked at, a shorter run ends
		// at a byte that might be a non-ASCII \p{N}.
		i := p + 1
		for i < len(s) && i < p+3 && byteClass[s[i]] == clsDigit {
			i++
		}
		if i < len(s) && i < p+3 && s[i] >= 0x80 {
			return 0
		}
		return i
	case clsCRLF:
		// Only \s*[\r\n]+ can match here, and with the generated code's
		// first-line-break backtracking it takes exactly the run of \r\n.
		i := p + 1
		for i < len(s) && byteClass[s[i]] == clsCRLF {
			i++
		}
		return i
	case clsSpace:
		if p+1 < len(s) {
			switch byteClass[s[p+1]] {
			case clsHigh:
				return 0
			case clsUpper, clsLower:
				return letters(s, p+1) // leading [^\r\n\p{L}\p{N}]
			case clsPunct:
				if s[p] == ' ' {
					return punct(s, p+1) // " ?[^\s\p{L}\p{N}]+[\r\n/]*"
				}
			}
		}
		return spaces(s, p)
	case clsPunct:
		if p+1 < len(s) {
			switch byteClass[s[p+1]] {
			case clsHigh:
				return 0
			case clsUpper, clsLower:
				return letters(s, p+1) // leading [^\r\n\p{L}\p{N}]
			}
		}
		return punct(s, p)
	case clsDel:
		return p + 1
	}
	return 0 // clsHigh
}

// letters matches, from a letter at s[a], the letter part of the first two
// alternatives: upper case then lower case letters, then a contraction. On
// ASCII the two alternatives end at the same place: alternative one needs a
// lower-case letter after the capitals, alternative two takes the capitals.
func letters(s string, a int) int {
	i := a
	for i < len(s) && s[i]-'A' < 26 {
		i++
	}
	i = lowerRun(s, i)
	if i == len(s) {
		return i
	}
	if s[i] != '\'' {
		if s[i] >= 0x80 {
			return 0 // a non-ASCII letter or mark may go on the run
		}
		return i
	}
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if i+1 == len(s) {
		return i
	}
	c := s[i+1]
	if c >= 0x80 {
		return 0 // (?i)s also matches U+017F
	}
	switch c | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return i
}

// lowerRun returns the end of the run of [a-z] at s[i:], eight bytes at a
// time while it can.
func lowerRun(s string, i int) int {
	for i+8 <= len(s) {
		x := le64(s[i:])
		y := x & 0x7f7f7f7f7f7f7f7f
		ge := y + 0x1f1f1f1f1f1f1f1f // high bit set where y >= 'a'
		gt := y + 0x0505050505050505 // high bit set where y > 'z'
		if m := (^(ge &^ gt) | x) & 0x8080808080808080; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(s) && s[i]-'a' < 26 {
		i++
	}
	return i
}

// punct matches [^\s\p{L}\p{N}]+[\r\n/]* from s[p], which is in the set.
func punct(s string, p int) int {
	i := p + 1
	for i < len(s) && byteClass[s[i]] == clsPunct {
		i++
	}
	if i < len(s) && s[i] >= 0x80 {
		return 0 // may be non-ASCII punctuation
	}
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || s[i] == '/') {
		i++
	}
	return i
}

// spaces matches the whitespace alternatives from s[p], a \s other than
// \r\n, once the letter and punctuation alternatives failed.
func spaces(s string, p int) int {
	i := p + 1
	for i < len(s) {
		switch byteClass[s[i]] {
		case clsSpace:
			i++
			continue
		case clsCRLF:
			// \s*[\r\n]+, backtracking to the first line break: the rest
			// of the run does not matter (and scanning it each time would
			// make long runs of blank lines quadratic, as in the codec).
			for i++; i < len(s) && byteClass[s[i]] == clsCRLF; i++ {
			}
			return i
		case clsHigh:
			return 0 // may be non-ASCII whitespace
		}
		break
	}
	switch {
	case i == len(s):
		return i // \s+(?!\S) at the end of the text
	case i-p >= 2:
		return i - 1 // \s+(?!\S), leaving one \s before the \S
	default:
		return i // \s+
	}
}

// runePiece returns the end of the regex match at s[p], p < len(s), on
// runes, as the generated code finds it; or, with ok false, the end of the
// rune at p if no alternative matches there. Like regexp2, it decodes s as
// []rune(s) does: an invalid byte is a U+FFFD of its own.
func runePiece(s string, p int) (end int, ok bool) {
	r0, n0 := decodeAt(s, p)
	c0 := runeClass(r0)
	lead := c0&rcLead != 0
	// [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]*[Ll Lm Lo M]+('s|...)?, the
	// optional leading rune taken first, then not.
	if lead {
		if e := upperLower(s, p+n0); e > 0 {
			return e, true
		}
	}
	if e := upperLower(s, p); e > 0 {
		return e, true
	}
	// [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]+[Ll Lm Lo M]*('s|...)?
	if lead {
		if e := upperThenLower(s, p+n0); e > 0 {
			return e, true
		}
	}
	if e := upperThenLower(s, p); e > 0 {
		return e, true
	}
	// \p{N}{1,3}
	if c0&rcNumber != 0 {
		i := p + n0
		for k := 1; k < 3 && i < len(s); k++ {
			r, n := decodeAt(s, i)
			if runeClass(r)&rcNumber == 0 {
				break
			}
			i += n
		}
		return i, true
	}
	// " ?[^\s\p{L}\p{N}]+[\r\n/]*", every loop atomic.
	i := p
	if s[i] == ' ' {
		i++
	}
	j := i
	for j < len(s) {
		r, n := decodeAt(s, j)
		if runeClass(r)&rcPunct == 0 {
			break
		}
		j += n
	}
	if j > i {
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j, true
	}
	// The whitespace alternatives.
	if c0&rcSpace == 0 {
		return p + n0, false
	}
	i = p
	last := -1 // start of the run's last rune
	for i < len(s) {
		r, n := decodeAt(s, i)
		if r == '\r' || r == '\n' {
			// \s*[\r\n]+, backtracking to the first line break.
			for i++; i < len(s) && (s[i] == '\r' || s[i] == '\n'); i++ {
			}
			return i, true
		}
		if runeClass(r)&rcSpace == 0 {
			break
		}
		last = i
		i += n
	}
	switch {
	case i == len(s):
		return i, true // \s+(?!\S) at the end of the text
	case last > p:
		return last, true // \s+(?!\S), leaving one \s before the \S
	default:
		return i, true // \s+
	}
}

// upperLower matches [Lu Lt Lm Lo M]*[Ll Lm Lo M]+ and the optional
// contraction from a, or returns -1. The first loop is greedy and gives back
// a rune at a time until the second can take one: so the match ends after
// the second loop's run at the first loop's end if there is one, else after
// the last rune of the first loop's run that also is in the second's set.
func upperLower(s string, a int) int {
	i, lastBoth := a, -1
	for i < len(s) {
		r, n := decodeAt(s, i)
		c := runeClass(r)
		if c&rcUpperish == 0 {
			break
		}
		i += n
		if c&rcLowerish != 0 {
			lastBoth = i
		}
	}
	j := i
	for j < len(s) {
		r, n := decodeAt(s, j)
		if runeClass(r)&rcLowerish == 0 {
			break
		}
		j += n
	}
	switch {
	case j > i:
		return contraction(s, j)
	case lastBoth >= 0:
		return contraction(s, lastBoth)
	}
	return -1
}

// upperThenLower matches [Lu Lt Lm Lo M]+[Ll Lm Lo M]* and the optional
// contraction from a, or returns -1. Nothing after the first loop can fail,
// so both loops keep all they take.
func upperThenLower(s string, a int) int {
	i := a
	for i < len(s) {
		r, n := decodeAt(s, i)
		if runeClass(r)&rcUpperish == 0 {
			break
		}
		i += n
	}
	if i == a {
		return -1
	}
	for i < len(s) {
		r, n := decodeAt(s, i)
		if runeClass(r)&rcLowerish == 0 {
			break
		}
		i += n
	}
	return contraction(s, i)
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d)? at e as the generated
// code does: on runes, with (?i)s also matching U+017F.
func contraction(s string, e int) int {
	if e+1 >= len(s) || s[e] != '\'' {
		return e
	}
	r1, n1 := decodeAt(s, e+1)
	i := e + 1 + n1
	switch r1 {
	case 'S', 'T', 's', 't', 'ſ', 'M', 'm', 'D', 'd':
		return i
	case 'R', 'r', 'V', 'v', 'L', 'l':
		if i >= len(s) {
			return e
		}
		r2, n2 := decodeAt(s, i)
		want := rune('e')
		if r1|0x20 == 'l' {
			want = 'l'
		}
		if r2|0x20 == want {
			return i + n2
		}
	}
	return e
}

func decodeAt(s string, i int) (rune, int) {
	if c := s[i]; c < 0x80 {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// Rune classes, as the generated code tests them (so, on ASCII, with DEL in
// none of them: the ASCII bitmaps of the negated sets leave it out).
const (
	rcUpperish = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	rcLowerish             // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	rcLead                 // [^\r\n\p{L}\p{N}]
	rcNumber               // \p{N}
	rcPunct                // [^\s\p{L}\p{N}]
	rcSpace                // \s
)

var asciiRuneClass = func() (t [0x80]uint8) {
	for i := range t {
		t[i] = [...]uint8{
			clsPunct: rcLead | rcPunct,
			clsUpper: rcUpperish,
			clsLower: rcLowerish,
			clsDigit: rcNumber,
			clsSpace: rcLead | rcSpace,
			clsCRLF:  rcSpace,
			clsDel:   0,
		}[byteClass[i]]
	}
	return t
}()

// runeClass returns the classes r is in. Those of non-ASCII runes, costly
// to look up in the Unicode tables, are cached: each slot holds a rune and
// its classes in one word.
func runeClass(r rune) uint8 {
	if r < 0x80 {
		return asciiRuneClass[r]
	}
	slot := &runeClassCache[uint32(r)%uint32(len(runeClassCache))]
	if v := slot.Load(); v>>8 == uint64(r) { // never true of an empty slot
		return uint8(v)
	}
	c := unicodeClass(r)
	slot.Store(uint64(r)<<8 | uint64(c))
	return c
}

var runeClassCache [4096]atomic.Uint64

func unicodeClass(r rune) uint8 {
	var c uint8
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= rcUpperish
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= rcLowerish
	}
	letter, number, space := unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsSpace(r)
	if !letter && !number && r != '\r' && r != '\n' {
		c |= rcLead
	}
	if number {
		c |= rcNumber
	}
	if !space && !letter && !number {
		c |= rcPunct
	}
	if space {
		c |= rcSpace
	}
	return c
}
