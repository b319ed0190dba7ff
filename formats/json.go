package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"weft/model"
)

// The JSON helpers every importer and exporter uses: one string decoder,
// one way to compact, to encode, to describe a value or an error.
// Documents and records are read by a library (encoding/json, or
// github.com/segmentio/encoding/json where a reader is timed); these
// helpers are what the readers do with the values they get.

// DecodeString decodes raw, one JSON string (white space around it
// allowed), as encoding/json does: invalid UTF-8 and lone surrogates
// become U+FFFD. ok is false when raw is not a JSON string.
func DecodeString(raw []byte) (string, bool) {
	return DecodeStringAfter("", raw)
}

// DecodeStringAfter is prefix and the string DecodeString decodes of
// raw, in one string made at once: a tool's output and the content that
// says it ("[tool result] " and the output, RenderContent's), the output
// the end of the content rather than a copy of what may be megabytes.
func DecodeStringAfter(prefix string, raw []byte) (string, bool) {
	raw = trimSpace(raw)
	s, end, ok := scanString(raw, 0, prefix)
	if !ok || end != len(raw) {
		return "", false
	}
	return s, true
}

// trimSpace is b without the JSON white space around it.
func trimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// plainByte marks the bytes a JSON string holds as they are: not a
// control character, a quote or a backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// ScanString reads the JSON string that starts at b[i], in input no
// decoder has checked: it returns the string, decoded as DecodeString
// says, and the index just past its closing quote. ok is false when
// b[i:] does not start with a valid JSON string.
//
// The string is found by hand, so that a reader can pick strings out of
// a line without decoding the line (BenchmarkReadOpenAIJSONL); a string
// without escapes, in valid UTF-8, is its own bytes, and any other is
// decoded by encoding/json.
func ScanString(b []byte, i int) (string, int, bool) {
	return scanString(b, i, "")
}

// scanString is ScanString, the string read after prefix.
func scanString(b []byte, i int, prefix string) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	escaped := false
	j := i + 1
	for j < len(b) {
		if plainByte[b[j]] {
			j++
			continue
		}
		switch b[j] {
		case '"':
			body := b[i+1 : j]
			if !escaped && utf8.Valid(body) {
				if prefix == "" {
					return string(body), j + 1, true
				}
				out := make([]byte, 0, len(prefix)+len(body))
				out = append(append(out, prefix...), body...)
				return unsafe.String(unsafe.SliceData(out), len(out)), j + 1, true
			}
			s, ok := unquote(prefix, body)
			if !ok {
				return "", i, false
			}
			return s, j + 1, true
		case '\\':
			escaped = true
			j += 2 // the escaped byte cannot end the string
		default:
			return "", i, false // a control character
		}
	}
	return "", i, false
}

// unquote decodes a JSON string's body (between its quotes, its control
// characters refused already) as encoding/json does, after prefix, into
// one buffer of the size it takes: a string may be megabytes. Invalid
// UTF-8 and lone surrogates become U+FFFD; an escape JSON does not have
// refuses it.
func unquote(prefix string, body []byte) (string, bool) {
	out := make([]byte, 0, len(prefix)+len(body))
	out = append(out, prefix...)
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			if i+1 >= len(body) {
				return "", false
			}
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(body[i+2:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					lo, ok := rune(-1), false
					if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
						lo, ok = hex4(body[i+2:])
					}
					if dec := utf16.DecodeRune(r, lo); ok && dec != unicode.ReplacementChar {
						i += 6
						r = dec
					} else {
						r = unicode.ReplacementChar
					}
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			k := i + 1
			for k < len(body) && body[k] < utf8.RuneSelf && body[k] != '\\' {
				k++
			}
			out = append(out, body[i:k]...)
			i = k
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, r)
			} else {
				out = append(out, body[i:i+size]...)
			}
			i += size
		}
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), true
}

// hex4 reads the four hex digits b starts with.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
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

// IsNull reports an absent or null JSON value.
func IsNull(raw []byte) bool {
	raw = trimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// Compact is raw without insignificant white space: how a source's
// block is kept in a part's Raw. Nothing gives nil; raw that is not JSON
// is kept as it is (copied).
func Compact(raw []byte) json.RawMessage {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if json.Compact(&b, raw) != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}

// CompactOwned is Compact for raw its caller owns (it is not written to
// later): raw itself when it is compact already, as a block a client
// sent most often is, rather than a copy of what may be megabytes.
func CompactOwned(raw []byte) json.RawMessage {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return Compact(raw)
		}
	}
	return raw
}

// Encode writes v as weft sends JSON everywhere: compact, without HTML
// escaping (code and markup keep their <, > and &), without a trailing
// newline.
func Encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Marshal is Encode for a value that always encodes; nil if v cannot be
// encoded.
func Marshal(v any) json.RawMessage {
	b, _ := Encode(v)
	return b
}

// MessageParts is model.MarshalParts for a message whose content is rendered
// from parts (RenderContent): no parts for plain text, a lone text part
// with no source block of its own (a Messages API message of a string),
// which the content says whole, as a Chat Completions message of a
// string has none.
//
// Once the parts are encoded, each part's Input and Raw point into what
// it returns, which nothing writes to: an importer's parts may point
// into the buffer they were read from (a line, whose buffer serves the
// next) until then, and be kept after without a copy of their own. (A
// request's parts are not encoded: they go to the store as read,
// KeepParts.)
func MessageParts(parts []model.Part) json.RawMessage {
	if len(parts) == 0 || len(parts) == 1 && plainText(&parts[0]) {
		return nil
	}
	var spans [][2]int
	out, ok := model.AppendParts(nil, parts, &spans)
	if !ok {
		// Not JSON, which encoding/json refuses too: the parts own
		// copies of what they point at.
		for i := range parts {
			parts[i].Input = bytes.Clone(parts[i].Input)
			parts[i].Raw = bytes.Clone(parts[i].Raw)
		}
		return model.EncodeParts(parts)
	}
	next := func() json.RawMessage {
		sp := spans[0]
		spans = spans[1:]
		return json.RawMessage(out[sp[0]:sp[1]:sp[1]])
	}
	for i := range parts {
		if len(parts[i].Input) > 0 {
			parts[i].Input = next()
		}
		if len(parts[i].Raw) > 0 {
			parts[i].Raw = next()
		}
	}
	return out
}

// KeepParts is parts for model.NewMessage.ReadParts, as MessageParts is
// for Parts: none for plain text; else parts whose Input and Raw are
// copies of their own, in one buffer, so that nothing points into what
// they were read from (a request's body, whose buffer serves the next
// request). The parts are not written as JSON: the store writes them
// into its own form (model.Message.ReadParts).
//
// An Input or Raw of lend bytes or more (lend > 0) is kept where it
// lies, not copied: the caller gives what they were read from to keep
// (a body of megabytes that serves no other request), and lends a
// block only when it is a good share of it, so that a small block
// never keeps a large body alive.
func KeepParts(parts []model.Part, lend int) []model.Part {
	if len(parts) == 0 || len(parts) == 1 && plainText(&parts[0]) {
		return nil
	}
	lent := func(v json.RawMessage) bool { return lend > 0 && len(v) >= lend }
	size := 0
	for i := range parts {
		for _, v := range []json.RawMessage{parts[i].Input, parts[i].Raw} {
			if !lent(v) {
				size += len(v)
			}
		}
	}
	buf := make([]byte, 0, size)
	own := func(v json.RawMessage) json.RawMessage {
		if len(v) == 0 || lent(v) {
			return v
		}
		at := len(buf)
		buf = append(buf, v...)
		return json.RawMessage(buf[at:len(buf):len(buf)])
	}
	for i := range parts {
		parts[i].Input, parts[i].Raw = own(parts[i].Input), own(parts[i].Raw)
	}
	return parts
}

// plainText reports whether p is plain text: a text part of no source
// block, which a message's content says whole.
func plainText(p *model.Part) bool {
	return p.Type == model.PartText && len(p.Raw) == 0 && p.ToolCallID == "" && !p.IsError &&
		strings.TrimSpace(p.Text) != ""
}

// ToolInput is a tool call's arguments as the Input of a tool_call part:
// JSON that is not a string as it is (compacted), a string holding JSON
// as that JSON, any other string JSON-encoded, and nothing (absent, null,
// a blank string) as {}.
func ToolInput(args json.RawMessage) json.RawMessage {
	args = bytes.TrimSpace(args)
	if IsNull(args) {
		return json.RawMessage("{}")
	}
	if args[0] != '"' {
		return Compact(args)
	}
	s, ok := DecodeString(args)
	t := strings.TrimSpace(s)
	switch {
	case !ok || t == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(t)):
		return Compact([]byte(t))
	}
	return Marshal(s)
}

// DescribeJSON says what a JSON value is, for error messages: "an object
// with keys a, b", "a list", "a number".
func DescribeJSON(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		var keys map[string]json.RawMessage
		if json.Unmarshal(raw, &keys) != nil || len(keys) == 0 {
			return "an empty object"
		}
		names := slices.Sorted(maps.Keys(keys))
		if len(names) > 8 {
			names = append(names[:8], "…")
		}
		return "an object with keys " + strings.Join(names, ", ")
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// DescribeError says what is wrong with a JSON value read into a Go
// value, without naming Go types: `"role" is a number, not a string`,
// "it is a string, not a list".
func DescribeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil {
		want := "a " + te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Slice, reflect.Array:
			want = "a list"
		case reflect.Map, reflect.Struct, reflect.Pointer:
			want = "an object"
		case reflect.Int, reflect.Int64, reflect.Float64:
			want = "a number"
		}
		what := "it"
		if te.Field != "" {
			what = strconv.Quote(te.Field)
		}
		return fmt.Sprintf("%s is %s, not %s", what, kindName(te.Value), want)
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return "not valid JSON: " + ShortError(err)
	}
	return ShortError(err)
}

// kindName is a JSON kind as encoding/json names it, with its article.
func kindName(v string) string {
	switch v {
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	}
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}

// ShortError is an error's text, cut to about 120 bytes for a problem
// list.
func ShortError(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// MediaType guesses a media type from a data: URL or a file name or URL
// (its extension); "" when it cannot tell.
func MediaType(ref string) string {
	if rest, ok := strings.CutPrefix(ref, "data:"); ok {
		mt, _, _ := strings.Cut(rest, ";")
		mt, _, _ = strings.Cut(mt, ",")
		return mt
	}
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = ref[:i]
	}
	dot := strings.LastIndexByte(ref, '.')
	if dot < 0 || strings.ContainsAny(ref[dot:], "/\\") {
		return ""
	}
	switch strings.ToLower(ref[dot+1:]) {
	case "jpg", "jpeg":
		return "image/jpeg"
	case "png":
		return "image/png"
	case "gif":
		return "image/gif"
	case "webp":
		return "image/webp"
	case "bmp":
		return "image/bmp"
	case "mp4":
		return "video/mp4"
	case "webm":
		return "video/webm"
	case "mov":
		return "video/quicktime"
	case "wav":
		return "audio/wav"
	case "mp3":
		return "audio/mpeg"
	case "flac":
		return "audio/flac"
	case "ogg":
		return "audio/ogg"
	}
	return ""
}

// TitleLimit is how many characters a thread's title has at most.
const TitleLimit = 80

// CutTitle is a title made of s: its first non-blank line, at most
// TitleLimit characters (a longer one is cut and ends in "…"). It is a
// string of its own: a session keeps its title as long as it lives, and
// a part of s would keep all of s, a message that may be megabytes.
func CutTitle(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			s = line
			break
		}
	}
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= TitleLimit {
		return strings.Clone(s)
	}
	cut, n := 0, 0
	for i := range s {
		if n == TitleLimit-1 {
			cut = i
			break
		}
		n++
	}
	return strings.TrimRightFunc(s[:cut], unicode.IsSpace) + "…"
}
