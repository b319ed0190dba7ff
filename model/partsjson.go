package model

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A list of parts is written as JSON for every message an importer or
// the context proxy reads, and a part may hold megabytes (a file a tool
// read, pasted text): it is written in pieces (WriteParts), byte for byte
// what encoding/json writes for []Part without HTML escaping, to a
// buffer of the size it takes (AppendParts), or by a store straight into
// its own form, which need not write a megabyte text out again.

// PartsWriter takes a list of parts as JSON, in pieces (WriteParts).
type PartsWriter interface {
	// JSON is JSON as it is: the punctuation and the keys.
	JSON(s string)
	// String is a string value: s, written as a JSON string.
	String(s string)
	// Value is a JSON value (a part's Input or Raw), written compact;
	// false when it is not JSON (which encoding/json refuses).
	Value(v []byte) bool
}

// WriteParts writes parts to w as a JSON list, as encoding/json (without
// HTML escaping) writes []Part; false when an Input or Raw in them is not
// JSON.
func WriteParts(w PartsWriter, parts []Part) bool {
	w.JSON("[")
	for i := range parts {
		p := &parts[i]
		if i > 0 {
			w.JSON(",")
		}
		w.JSON(`{"type":`)
		w.String(string(p.Type))
		str := func(key, s string) {
			if s != "" {
				w.JSON(key)
				w.String(s)
			}
		}
		str(`,"text":`, p.Text)
		str(`,"tool_call_id":`, p.ToolCallID)
		str(`,"tool_name":`, p.ToolName)
		if len(p.Input) > 0 {
			w.JSON(`,"input":`)
			if !w.Value(p.Input) {
				return false
			}
		}
		if p.IsError {
			w.JSON(`,"is_error":true`)
		}
		str(`,"media_type":`, p.MediaType)
		if len(p.Raw) > 0 {
			w.JSON(`,"raw":`)
			if !w.Value(p.Raw) {
				return false
			}
		}
		w.JSON("}")
	}
	w.JSON("]")
	return true
}

// AppendParts appends parts as a JSON list (WriteParts) to dst, grown
// once to the size they take; false when an Input or Raw in them is not
// JSON. With spans, it appends where each Input and Raw was written
// ([start, end) in the result), part by part, Input first.
func AppendParts(dst []byte, parts []Part, spans *[][2]int) ([]byte, bool) {
	size := 2
	for i := range parts {
		p := &parts[i]
		size += 16 + QuotedLen(string(p.Type)) + len(p.Input) + len(p.Raw)
		for _, s := range []string{p.Text, p.ToolCallID, p.ToolName, p.MediaType} {
			if s != "" {
				size += 16 + QuotedLen(s)
			}
		}
	}
	w := &bufWriter{b: bytes.NewBuffer(dst), spans: spans}
	w.b.Grow(size)
	if !WriteParts(w, parts) {
		return nil, false
	}
	return w.b.Bytes(), true
}

// MarshalParts is parts as Message.Parts holds them: AppendParts' JSON,
// or what EncodeParts makes of parts AppendParts refuses (an Input or
// Raw that is not JSON). No parts give nil.
func MarshalParts(parts []Part) json.RawMessage {
	if len(parts) == 0 {
		return nil
	}
	if raw, ok := AppendParts(nil, parts, nil); ok {
		return raw
	}
	return EncodeParts(parts)
}

// bufWriter is a PartsWriter into a buffer.
type bufWriter struct {
	b     *bytes.Buffer
	spans *[][2]int
}

func (w *bufWriter) JSON(s string) { w.b.WriteString(s) }

func (w *bufWriter) String(s string) { w.b.Write(AppendQuoted(w.b.AvailableBuffer(), s)) }

func (w *bufWriter) Value(v []byte) bool {
	start := w.b.Len()
	if json.Compact(w.b, v) != nil {
		return false
	}
	if w.spans != nil {
		*w.spans = append(*w.spans, [2]int{start, w.b.Len()})
	}
	return true
}

const hexDigits = "0123456789abcdef"

// QuotedLen is the length AppendQuoted writes for s.
func QuotedLen(s string) int {
	n := 2 + len(s)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n++
			case c < 0x20:
				n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5 // \ufffd for one byte
		case r == '\u2028' || r == '\u2029':
			n += 3 // \u202X for three
		}
		i += size
	}
	return n
}

// AppendQuoted appends s as a JSON string, as encoding/json writes one
// without HTML escaping.
func AppendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}
