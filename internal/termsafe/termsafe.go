// Package termsafe makes text from threads safe to show on a terminal.
//
// A title or message may carry control characters: an escape sequence
// that sets the window title (ESC ] 0 ; … BEL), writes the clipboard
// (ESC ] 52 ; …), clears the screen (ESC [ 2 J), or a carriage return
// that moves back over what was printed. Printed raw, they act on the
// terminal instead of being read. Text and Line show each such character
// as a visible picture instead (ESC as ␛, BEL as ␇, CR as ␍), so what was
// there stays readable and nothing reaches the terminal's control
// channel. Data (JSON, exports to a file or a pipe) is left as it is.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text returns s safe to print as lines of text: newlines and tabs stay
// (a CR before a newline is part of the line end and goes), every other
// control character is shown as a picture (see Picture), and bytes that
// are not UTF-8 as \xNN.
func Text(s string) string { return clean(s, true) }

// Line returns s safe to print within one line (a title, a name, a
// cell of a table): newlines and tabs are shown as pictures too.
func Line(s string) string { return clean(s, false) }

// Safe reports whether s has nothing Line would change.
func Safe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			return safeFrom(s, i)
		}
	}
	return true
}

// safeFrom checks the rest of s from its first byte that is not
// printable ASCII.
func safeFrom(s string, i int) bool {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isControl(r) || (r == utf8.RuneError && size == 1) {
			return false
		}
		i += size
	}
	return true
}

// isControl reports whether r is a C0 control, DEL or a C1 control.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }

// Picture is how a control character is shown: C0 controls and DEL as
// the Unicode control pictures (␛ for ESC, ␇ BEL, ␍ CR, ␊ LF, ␉ TAB, ␡
// DEL), one cell wide like the character they stand for; C1 controls as
// \u0080…\u009f.
func Picture(r rune) string {
	switch {
	case r < 0x20:
		return string(rune(0x2400 + r))
	case r == 0x7f:
		return "\u2421"
	}
	return fmt.Sprintf(`\u%04x`, r)
}

func clean(s string, lines bool) string {
	if Safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case lines && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF: the line end of a file written on Windows.
		case isControl(r):
			b.WriteString(Picture(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
