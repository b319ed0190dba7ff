package formats

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"weft/model"
)

// Parts are encoded once for every message an importer or the context
// proxy reads, and a part may hold megabytes (a file a tool read, pasted
// text): they are written straight into one buffer of the size they
// take, byte for byte what encoding/json writes for them without HTML
// escaping, rather than through an encoder's growing buffers and the
// copy out of them.

// appendParts appends parts as a JSON list, as encoding/json (without
// HTML escaping) writes []model.Part; false when a raw value in them is
// not JSON (which encoding/json refuses). With at (of len(parts)), it
// says where in the result each part's Input and Raw were written.
func appendParts(dst []byte, parts []model.Part, at []partSpans) ([]byte, bool) {
	size := 2
	for i := range parts {
		p := &parts[i]
		size += 16 + quotedLen(string(p.Type)) + len(p.Input) + len(p.Raw)
		for _, s := range []string{p.Text, p.ToolCallID, p.ToolName, p.MediaType} {
			if s != "" {
				size += 16 + quotedLen(s)
			}
		}
	}
	b := bytes.NewBuffer(dst)
	b.Grow(size)
	b.WriteByte('[')
	for i := range parts {
		p := &parts[i]
		if i > 0 {
			b.WriteByte(',')
		}
		str := func(key, s string) {
			b.WriteString(key)
			b.Write(appendString(b.AvailableBuffer(), s))
		}
		str(`{"type":`, string(p.Type))
		if p.Text != "" {
			str(`,"text":`, p.Text)
		}
		if p.ToolCallID != "" {
			str(`,"tool_call_id":`, p.ToolCallID)
		}
		if p.ToolName != "" {
			str(`,"tool_name":`, p.ToolName)
		}
		if len(p.Input) > 0 {
			b.WriteString(`,"input":`)
			start := b.Len()
			if json.Compact(b, p.Input) != nil {
				return nil, false
			}
			if at != nil {
				at[i].input = [2]int{start, b.Len()}
			}
		}
		if p.IsError {
			b.WriteString(`,"is_error":true`)
		}
		if p.MediaType != "" {
			str(`,"media_type":`, p.MediaType)
		}
		if len(p.Raw) > 0 {
			b.WriteString(`,"raw":`)
			start := b.Len()
			if json.Compact(b, p.Raw) != nil {
				return nil, false
			}
			if at != nil {
				at[i].raw = [2]int{start, b.Len()}
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes(), true
}

// partSpans are where a part's Input and Raw were written, [start, end)
// (zero when they were not).
type partSpans struct{ input, raw [2]int }

const hexDigits = "0123456789abcdef"

// quotedLen is the length appendString writes for s.
func quotedLen(s string) int {
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

// appendString appends s as a JSON string, as encoding/json writes one
// without HTML escaping.
func appendString(dst []byte, s string) []byte {
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
