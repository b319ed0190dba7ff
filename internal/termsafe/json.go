package termsafe

import (
	"fmt"
	"unicode/utf8"
)

// JSON returns a JSON text with DEL, the C1 controls and the characters
// that reorder or hide text (see hides) inside its strings written as \u
// escapes: the same JSON to any reader, and safe on a terminal
// (encoding/json escapes the C0 controls itself, but passes the others
// through; some terminals act on C1 controls, and a bidi override turns
// the rest of its line around). These characters can only occur inside
// strings of valid JSON, so no parsing is needed; b is returned as it is
// when it has none.
func JSON(b []byte) []byte {
	first := jsonEscapeAt(b)
	if first < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:first]...)
	for i := first; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if jsonEscaped(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// jsonEscaped reports whether JSON writes r as a \u escape.
func jsonEscaped(r rune) bool { return r == 0x7f || (r >= 0x80 && r < 0xa0) || hides(r) }

// jsonEscapeAt is the offset of the first character of b JSON escapes,
// or -1.
func jsonEscapeAt(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if jsonEscaped(r) {
			return i
		}
		i += size
	}
	return -1
}
