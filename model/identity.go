package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"unicode"
	"unicode/utf8"
)

// Ident is a message's identity (see Identity).
type Ident [sha256.Size]byte

// String is the identity in hex.
func (id Ident) String() string { return hex.EncodeToString(id[:]) }

// Identity recognises a message again whatever shape it travelled in: a
// provider's chat-completions or Messages body written by any exporter
// and read back, a re-import from another format. It is the SHA-256 of a
// canonical form of the role and what the message says:
//
//   - its text: the content, or with parts the text of its text and
//     tool-result parts, with white space folded (exporters join and
//     split text blocks differently);
//   - its tool calls: each call's tool name and its input as canonical
//     JSON (keys sorted, no spaces), in order. Call IDs are left out:
//     exporters rename them to fit providers' rules;
//   - the number of images.
//
// Thinking blocks are left out: most providers' bodies drop them. With
// parts, the content is not read: importers render it from the parts in
// their own ways.
func Identity(role Role, content string, parts []Part) Ident {
	w := identityWriter{h: sha256.New()}
	w.h.Write([]byte(role))
	if len(parts) == 0 {
		w.text(content)
	}
	images := 0
	for _, p := range parts {
		switch p.Type {
		case PartText, PartToolResult:
			w.text(p.Text)
		case PartToolCall:
			w.flush()
			w.inText = false
			w.h.Write(tagCall)
			w.h.Write([]byte(p.ToolName))
			w.h.Write([]byte{':'})
			w.h.Write(canonicalJSON(p.Input))
		case PartImage:
			images++
		}
	}
	w.flush()
	for range images {
		w.h.Write(tagImage)
	}
	var id Ident
	w.h.Sum(id[:0])
	return id
}

// identityWriter hashes text with its white space folded: words joined
// by one space, across the text blocks of a run. Words are copied whole
// into a buffer that the hash takes in large writes.
type identityWriter struct {
	h      hash.Hash
	inText bool // a text run is open
	words  bool // the open run has a word
	space  bool // white space seen since the last word
	buf    [1024]byte
	n      int
}

// asciiSpace marks the ASCII bytes unicode.IsSpace takes for space.
var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// spaceAt reports whether s has white space at i, and its length.
func spaceAt(s string, i int) (bool, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiSpace[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r), size
}

func (w *identityWriter) text(s string) {
	if !w.inText {
		w.flush()
		w.h.Write(tagText)
		w.inText, w.words, w.space = true, false, false
	}
	w.space = true // blocks are apart
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf && asciiSpace[c] {
			w.space = true
			i++
			continue
		}
		if sp, size := spaceAt(s, i); sp {
			w.space = true
			i += size
			continue
		}
		// A run of words: printable ASCII with single spaces between
		// (already folded, so copied as it is), and other runes and
		// control characters that are not space; it ends at any other
		// white space.
		j := i
	run:
		for j < len(s) {
			c := s[j]
			switch {
			case c > ' ' && c < utf8.RuneSelf:
				j++
			case c == ' ' && j+1 < len(s) && s[j+1] > ' ' && s[j+1] < utf8.RuneSelf:
				j += 2
			case c >= utf8.RuneSelf:
				sp, size := spaceAt(s, j)
				if sp {
					break run
				}
				j += size
			case !asciiSpace[c]:
				j++ // a control character (a colour code's ESC) is part of its word
			default:
				break run
			}
		}
		if w.space && w.words {
			w.put(" ")
		}
		w.space, w.words = false, true
		w.put(s[i:j])
		i = j
	}
}

// Tags that separate the parts of a canonical form.
var (
	tagText  = []byte("\x00t:")
	tagCall  = []byte("\x00c:")
	tagImage = []byte("\x00i")
)

func (w *identityWriter) put(b string) {
	if w.n+len(b) > len(w.buf) {
		w.flush()
		if len(b) > len(w.buf) {
			w.h.Write([]byte(b))
			return
		}
	}
	w.n += copy(w.buf[w.n:], b)
}

func (w *identityWriter) flush() {
	if w.n > 0 {
		w.h.Write(w.buf[:w.n])
		w.n = 0
	}
}

// canonicalJSON is raw with object keys sorted and no insignificant
// space; no input is {} (what exporters send for it), and JSON that does
// not parse is kept as it is, compacted if it can be.
func canonicalJSON(raw json.RawMessage) []byte {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return []byte("{}")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil {
		if out, err := json.Marshal(v); err == nil {
			return out
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.Bytes()
	}
	return raw
}
