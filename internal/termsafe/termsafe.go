// Package termsafe makes text from threads safe to show on a terminal.
//
// A title or message may carry control characters: an escape sequence
// that sets the window title (ESC ] 0 ; … BEL), writes the clipboard
// (ESC ] 52 ; …), clears the screen (ESC [ 2 J), or a carriage return
// that moves back over what was printed. Printed raw, they act on the
// terminal instead of being read. Text and Line show each such character
// as a visible picture instead (ESC as ␛, BEL as ␇, CR as ␍), so what was
// there stays readable and nothing reaches the terminal's control
// channel. Characters that reorder the text around them (the bidi
// overrides, embeddings, isolates and marks) or take no cell (the
// zero-width spaces, joiners and the byte order mark) are shown too, as
// \u202e and the like: printed raw, "invoice \u202efdp.exe" reads
// "invoice exe.pdf". Data (JSON, exports to a file or a pipe) is left as
// it is.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
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
		if shown(s, i, r, size) || (r == utf8.RuneError && size == 1) {
			return false
		}
		i += size
	}
	return true
}

// isControl reports whether r is a C0 control, DEL or a C1 control.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }

// hides reports whether r reorders the text around it or takes no cell:
// the bidi embeddings and overrides (U+202A…U+202E), isolates
// (U+2066…U+2069) and marks (U+200E, U+200F, U+061C), the zero-width
// space, non-joiner and joiner (U+200B…U+200D), the word joiner
// (U+2060) and the byte order mark (U+FEFF).
func hides(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e,
		r >= 0x2066 && r <= 0x2069, r == 0x061c, r == 0x2060, r == 0xfeff:
		return true
	}
	return false
}

// shown reports whether the character r, at s[i:i+size], is shown as a
// picture rather than printed: a control character, or one that hides
// (see hides), but for a joiner that makes one emoji of two pictographs.
func shown(s string, i int, r rune, size int) bool {
	if isControl(r) {
		return true
	}
	return hides(r) && (r != 0x200d || !joinsEmoji(s, i, size))
}

// joinsEmoji reports whether the zero-width joiner at s[i:i+size] stands
// between two pictographs (👨‍👩, 👩🏽‍💻, 🏳️‍🌈): there it draws one emoji,
// and hides nothing that a reader would miss.
func joinsEmoji(s string, i, size int) bool {
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	next, _ := utf8.DecodeRuneInString(s[i+size:])
	// Not U+FFFD: a byte that is not UTF-8 decodes as it, and is shown.
	pictograph := func(r rune) bool { return r >= 0x2000 && r != utf8.RuneError && unicode.Is(unicode.So, r) }
	skinOrPresentation := prev == 0xfe0f || (prev >= 0x1f3fb && prev <= 0x1f3ff)
	return (pictograph(prev) || skinOrPresentation) && pictograph(next)
}

// Picture is how a control character is shown: C0 controls and DEL as
// the Unicode control pictures (␛ for ESC, ␇ BEL, ␍ CR, ␊ LF, ␉ TAB, ␡
// DEL), one cell wide like the character they stand for; C1 controls
// and the characters that reorder or hide text as \u0080…\u009f,
// \u202e and the like.
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
		case shown(s, i, r, size):
			b.WriteString(Picture(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
