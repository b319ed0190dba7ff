package termsafe

import (
	"strings"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// Styled returns a styled text (lines with SGR colour and attribute
// sequences, as lipgloss draws them) with every other escape sequence,
// control character and character that reorders or hides text shown as
// pictures, as Line shows them; newlines
// stay. It is the last guard on a frame a screen draws: text that
// reached it unshown (a text area's contents) still cannot act on the
// terminal. A text with nothing to show is returned as it is.
func Styled(s string) string {
	if styledSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if n := sgrLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case r == '\n':
			b.WriteByte('\n')
		case shown(s, i, r, size):
			b.WriteString(Picture(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// styledSafe reports whether s has no control but newlines and SGR
// sequences, nothing that reorders or hides text, and is UTF-8.
func styledSafe(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			n := sgrLen(s[i:])
			if n == 0 {
				return false
			}
			i += n
		case c == '\n' || (c >= 0x20 && c < 0x7f):
			i++
		case c < 0x20 || c == 0x7f:
			return false
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || shown(s, i, r, size) {
				return false
			}
			i += size
		}
	}
	return true
}

// sgrLen is the length of the SGR sequence (ESC [ params m) s starts
// with, or 0 when it starts with none.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == ';', c == ':':
		case c == 'm':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}
