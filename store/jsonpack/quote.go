package jsonpack

import (
	"unicode/utf8"
)

// A text's stretch is found in a document written as a JSON string the
// way the encoder that wrote the document writes one. Encoders agree on
// what JSON requires (a quote, a backslash and the control characters
// escaped, \b \f \n \r \t in short) and differ in what else they escape:
// a style says which, and is read off the string itself as it is matched
// against the text, so that the text quoted in that style gives the
// string back byte for byte.

// style is how an encoder writes a JSON string; the zero style is
// encoding/json's without HTML escaping (what weft writes).
type style uint8

const (
	// styleHTML: <, > and & as \u003c, \u003e, \u0026 (encoding/json's
	// default).
	styleHTML style = 1 << iota
	// styleASCII: every character past ASCII as \uXXXX, a surrogate
	// pair past U+FFFF (Python's default).
	styleASCII
	// styleUpper: the hex digits of \u escapes in upper case.
	styleUpper
	// styleLineSep: U+2028 and U+2029 as they are (JavaScript's,
	// serde_json's), where encoding/json escapes them.
	styleLineSep
	// styleSlash: / as \/.
	styleSlash

	styleBits = styleHTML | styleASCII | styleUpper | styleLineSep | styleSlash
)

const (
	lowerHex = "0123456789abcdef"
	upperHex = "0123456789ABCDEF"
)

// appendQuoted appends s as a JSON string written in style st.
func appendQuoted(dst []byte, s string, st style) []byte {
	hex := lowerHex
	if st&styleUpper != 0 {
		hex = upperHex
	}
	u4 := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			var esc string
			switch {
			case c == '"':
				esc = `\"`
			case c == '\\':
				esc = `\\`
			case c == '\b':
				esc = `\b`
			case c == '\f':
				esc = `\f`
			case c == '\n':
				esc = `\n`
			case c == '\r':
				esc = `\r`
			case c == '\t':
				esc = `\t`
			case c < 0x20 || st&styleHTML != 0 && (c == '<' || c == '>' || c == '&'):
			case c == '/' && st&styleSlash != 0:
				esc = `\/`
			default:
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if esc != "" {
				dst = append(dst, esc...)
			} else {
				dst = u4(dst, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = u4(append(dst, s[start:i]...), utf8.RuneError)
		case st&styleASCII != 0 && r > 0xFFFF:
			r -= 0x10000
			dst = u4(u4(append(dst, s[start:i]...), 0xD800+r>>10), 0xDC00+r&0x3FF)
		case st&styleASCII != 0 || (r == '\u2028' || r == '\u2029') && st&styleLineSep == 0:
			dst = u4(append(dst, s[start:i]...), r)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}

// styleOf reads a style off a string as it is matched: the bits it has
// shown, and their values.
type styleOf struct {
	known, val style
}

// set says the string shows bit b as on (or off); false when it showed
// it otherwise before.
func (s *styleOf) set(b style, on bool) bool {
	var v style
	if on {
		v = b
	}
	if s.known&b != 0 {
		return s.val&b == v
	}
	s.known |= b
	s.val |= v
	return true
}

// hexCase matches the hex digits got against want's (lower case),
// reading the case of their letters.
func (s *styleOf) hexCase(got []byte, want [4]byte) bool {
	for k := range len(want) {
		g, w := got[k], want[k]
		switch {
		case g == w && w <= '9':
		case g == w:
			if !s.set(styleUpper, false) {
				return false
			}
		case w >= 'a' && g == w-'a'+'A':
			if !s.set(styleUpper, true) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// u4 matches lit at i against the \u escape of r (a UTF-16 unit).
func (s *styleOf) u4(lit []byte, i int, r rune) bool {
	if i+6 > len(lit) || lit[i] != '\\' || lit[i+1] != 'u' {
		return false
	}
	want := [4]byte{lowerHex[r>>12&0xF], lowerHex[r>>8&0xF], lowerHex[r>>4&0xF], lowerHex[r&0xF]}
	return s.hexCase(lit[i+2:i+6], want)
}

// match reports whether lit, a JSON string (quotes included), is the
// start of text written in one style: how many bytes of text it holds,
// and that style (appendQuoted(nil, text[:n], st) is lit).
func match(lit []byte, text string) (n int, st style, ok bool) {
	if len(lit) < 2 || lit[0] != '"' {
		return 0, 0, false
	}
	var s styleOf
	i, j := 1, 0
	for i < len(lit) {
		c := lit[i]
		if c == '"' {
			return j, s.val, i == len(lit)-1
		}
		if j >= len(text) {
			return 0, 0, false
		}
		t := text[j]
		if t < utf8.RuneSelf {
			var esc string
			var bit style
			switch {
			case t == '"':
				esc = `\"`
			case t == '\\':
				esc = `\\`
			case t == '\b':
				esc = `\b`
			case t == '\f':
				esc = `\f`
			case t == '\n':
				esc = `\n`
			case t == '\r':
				esc = `\r`
			case t == '\t':
				esc = `\t`
			case t < 0x20:
			case t == '<' || t == '>' || t == '&':
				bit = styleHTML
			case t == '/':
				bit = styleSlash
			default:
				if c != t {
					return 0, 0, false
				}
				i, j = i+1, j+1
				continue
			}
			switch {
			case esc != "":
				if i+2 > len(lit) || string(lit[i:i+2]) != esc {
					return 0, 0, false
				}
				i += 2
			case c == t && bit != 0: // a character a style may escape, as it is
				if !s.set(bit, false) {
					return 0, 0, false
				}
				i++
			case bit == styleSlash:
				if i+2 > len(lit) || lit[i+1] != '/' || c != '\\' || !s.set(bit, true) {
					return 0, 0, false
				}
				i += 2
			default: // a control character, or one HTML escapes
				if !s.u4(lit, i, rune(t)) || bit != 0 && !s.set(bit, true) {
					return 0, 0, false
				}
				i += 6
			}
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[j:])
		if r == utf8.RuneError && size == 1 {
			return 0, 0, false // not text an encoder is given
		}
		sep := r == '\u2028' || r == '\u2029'
		if c != '\\' {
			if i+size > len(lit) || string(lit[i:i+size]) != text[j:j+size] || !s.set(styleASCII, false) || sep && !s.set(styleLineSep, true) {
				return 0, 0, false
			}
			i, j = i+size, j+size
			continue
		}
		switch {
		case sep:
			// Escaped by both styles that escape it: the line
			// separators' own bit says it, whatever ASCII's.
			if !s.u4(lit, i, r) || !s.set(styleLineSep, false) {
				return 0, 0, false
			}
			i += 6
		case r > 0xFFFF:
			q := r - 0x10000
			if !s.set(styleASCII, true) || !s.u4(lit, i, 0xD800+q>>10) || !s.u4(lit, i+6, 0xDC00+q&0x3FF) {
				return 0, 0, false
			}
			i += 12
		default:
			if !s.set(styleASCII, true) || !s.u4(lit, i, r) {
				return 0, 0, false
			}
			i += 6
		}
		j += size
	}
	return 0, 0, false
}

// unquotePrefix appends to dst up to max bytes of what the JSON string
// lit (quotes included) says, as far as it reads it: its first bytes,
// to look for in a text. False when it meets an escape no style writes.
func unquotePrefix(dst []byte, lit []byte, max int) ([]byte, bool) {
	for i := 1; i < len(lit) && len(dst) < max; {
		c := lit[i]
		switch {
		case c == '"':
			return dst, true
		case c != '\\':
			dst = append(dst, c)
			i++
			continue
		case i+1 >= len(lit):
			return dst, false
		}
		switch e := lit[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(lit, i+2)
			if !ok {
				return dst, false
			}
			i += 6
			if 0xD800 <= r && r < 0xDC00 {
				lo, ok := hex4(lit, i+2)
				if !ok || i+1 >= len(lit) || lit[i] != '\\' || lit[i+1] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
					return dst, false
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, false
		}
		i += 2
	}
	return dst, true
}

// hex4 reads the four hex digits at lit[i:].
func hex4(lit []byte, i int) (rune, bool) {
	if i+4 > len(lit) {
		return 0, false
	}
	var r rune
	for _, c := range lit[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
