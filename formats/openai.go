package formats

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"weft/model"
)

// OpenAI-style messages ({role, content}, as the Chat Completions API
// takes them, and as fine-tuning sets such as LLaMA-Factory's store
// them). ReadOpenAI accepts five shapes, told apart by the first
// non-space byte and the keys of the first record that can be read:
//
//	(a) [{role, content}, ...]                    one thread
//	(b) {"messages": [...], ...}                  one thread
//	(c) [{"messages": [...]}, ...]                one thread per record
//	(d) JSON lines of {"messages": [...]}         one thread per line
//	(e) JSON lines of {role, content}             one thread for the file
//
// A file starting with '{' is JSON lines when its first line is a whole
// JSON value (or, when it is not, when the next line starts a JSON value
// of its own: a first line that is broken), else one JSON document (a
// pretty-printed (b)). Shapes (a) and (e) stream: each message is emitted
// as it is read (after at most oiLookahead messages, which wait for the
// thread's title), so a file of millions of messages is never in memory.
// A record of (b), (c), (d) is read whole, one at a time.
//
// Messages: role system, user, assistant, tool; developer is system
// (meta source_role), function is tool. content is a string, null, or a
// list of parts: text (and input_text, output_text, refusal) is text,
// image_url / input_image / image an image part (media type from a data:
// URL or the file extension), anything else an "other" part. A message
// whose content is a plain string and that has nothing else (no tool
// calls, reasoning, refusal, media) has no parts: its content is the
// string as it is. reasoning_content is a thinking part; refusal a text
// part.
//
// Tool calls: each of an assistant's tool_calls is a tool_call part, its
// input the arguments when they are JSON, else the arguments string
// JSON-encoded ({} when empty). A call without an id gets "call_<k>" (k
// counting the calls of the thread). A tool message is a tool_result part
// whose ToolCallID is its tool_call_id, or, without one, the oldest call
// of the thread still waiting for its result; its Name is its own name or
// the called tool's; its Raw is the whole tool message, and images in its
// content follow it as parts of their own. Legacy function_call and role
// function become a call and a result with no ToolCallID (Name = the
// function's name). A message with nothing to show (no text, no parts)
// is a Problem, as is an unknown role.
//
// A thread's title is the first line of its first user message (lines
// that are only an image skipped, at most 80 characters), else of its
// first message.
//
// LLaMA-Factory records list media beside the messages ("images",
// "videos", "audios"); each <image> (<video>, <audio>) in a message's text
// takes the next one, in order, and becomes an image (other) part there.
// A record's other keys ("tools", "model", ...) are kept in the meta of
// its first message, strings as they are, other values as compact JSON.
//
// Keys: these formats have no ids. A message's key is
// "<ordinal>:<first 12 hex of its digest>", its ordinal (zero-padded to
// ten digits) its 1-based
// place among its thread's messages in the file (counting messages that
// could not be read, so that mending one does not move the others); a
// thread's key is the first 16 hex of the SHA-256 of "<digest>:<place>",
// digest its first imported message's and place the record's 1-based
// place in the file (1 for a file that is one thread). Re-reading a file,
// or a longer version of it, gives the same keys to the same messages.
// At most maxProblems problems are listed; the rest are counted.

// oiLookahead is how many messages of a thread wait, at most, for its
// first user message (the title) before the thread begins.
const oiLookahead = 16

// oiMaxPendingCalls bounds the calls a thread remembers while they wait
// for their results.
const oiMaxPendingCalls = 1024

// ---- reading top-level values ----

type oiShape uint8

const (
	oiArray    oiShape = iota + 1 // elements of a JSON array
	oiLines                       // JSON lines
	oiDocument                    // JSON values one after another, not by line
)

// oiValue is one top-level value of a file: an element of the array, a
// line, or a document.
type oiValue struct {
	raw   []byte // valid during the callback only
	line  int    // the JSONL line, 0 for other shapes
	index int    // 1-based place among the file's values
	shape oiShape
}

// where says where a problem is, for a Problem's Err (the line of a
// JSONL value is its Line instead).
func (v *oiValue) where() string {
	if v.line > 0 {
		return ""
	}
	return "record " + strconv.Itoa(v.index) + ": "
}

func (v *oiValue) problem(p *problemList, msg string) {
	p.add(v.line, v.where()+msg)
}

// oiEmpty says a message is skipped for having nothing in it: a note,
// not a problem.
const oiEmpty = "it is empty"

// note is a remark on the value where nothing was lost.
func (v *oiValue) note(p *problemList, msg string) {
	p.note(v.line, v.where()+msg)
}

var errOIEmpty = errors.New("empty file")

// oiNotJSON is the error of a file that does not start like JSON.
type oiNotJSON struct{ head string }

func (e *oiNotJSON) Error() string {
	return fmt.Sprintf("it is not JSON (it starts with %q)", e.head)
}

// oiEachValue calls fn with each top-level value of r. Bad JSON in an
// array or document ends the reading there (a Problem); a bad line of
// JSON lines is given to fn like any other (its JSON is checked there).
// An error from fn stops the reading and is returned.
func oiEachValue(r io.Reader, probs *problemList, fn func(v *oiValue) error) (oiShape, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := oiFirstByte(br)
	if err == io.EOF {
		return 0, errOIEmpty
	}
	if err != nil {
		return 0, err
	}
	switch first {
	case '[':
		return oiArray, oiReadArray(json.NewDecoder(br), probs, fn)
	case '{':
	default:
		head, _ := br.Peek(24)
		return 0, &oiNotJSON{oiPreview(head)}
	}
	// JSON lines, or one document spread over lines?
	prefix, lines, err := oiPeekLines(br)
	if err != nil {
		return 0, err
	}
	rest := io.MultiReader(bytes.NewReader(prefix), br)
	if !lines {
		return oiDocument, oiReadDocument(json.NewDecoder(rest), probs, fn)
	}
	v := oiValue{shape: oiLines}
	err = eachLine(rest, func(n int, line []byte) error {
		v.index++
		v.line, v.raw = n, line
		return fn(&v)
	}, func(n int) {
		v.index++
		probs.add(n, "line longer than 64 MB; skipped")
	})
	return oiLines, err
}

// oiFirstByte skips a byte order mark and white space, and returns the
// first byte after them without consuming it.
func oiFirstByte(br *bufio.Reader) (byte, error) {
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		br.UnreadByte()
		return c, nil
	}
}

func oiPreview(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 16 {
		b = b[:16]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	return string(b)
}

// oiReadLine reads one line (with its '\n'), keeping at most maxLine
// bytes of it; long reports a longer one (the rest stays in br).
func oiReadLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > maxLine {
				return line, true, nil
			}
			continue
		}
		return line, false, err
	}
}

// oiPeekLines reads the first line of a file starting with '{' (and,
// when that line is not JSON by itself, the next non-blank one) to tell
// JSON lines from a document spread over lines. It returns what it read,
// to be read again.
func oiPeekLines(br *bufio.Reader) (prefix []byte, lines bool, err error) {
	line, long, err := oiReadLine(br)
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	prefix = line
	if long || json.Valid(bytes.TrimSpace(line)) {
		return prefix, true, nil
	}
	if err == io.EOF {
		return prefix, false, nil
	}
	for {
		line, long, err := oiReadLine(br)
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		prefix = append(prefix, line...)
		t := bytes.TrimSpace(line)
		if len(t) > 0 {
			// A first line that is broken, then a record of its own.
			return prefix, !long && (t[0] == '{' || t[0] == '[') && json.Valid(t), nil
		}
		if err == io.EOF {
			return prefix, false, nil
		}
	}
}

// oiDecodeErr tells broken JSON (a Problem: the rest is not read) from a
// failing reader (an error).
func oiDecodeErr(err error) (string, error) {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the file ends inside it (is it cut off?)", nil
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (byte %d of the file): %s", syn.Offset, oiShortErr(err)), nil
	}
	return "", err
}

func oiReadArray(dec *json.Decoder, probs *problemList, fn func(v *oiValue) error) error {
	if _, err := dec.Token(); err != nil { // '['
		return err
	}
	v := oiValue{shape: oiArray}
	var raw json.RawMessage
	for dec.More() {
		v.index++
		raw = raw[:0]
		if err := dec.Decode(&raw); err != nil {
			msg, err := oiDecodeErr(err)
			if err != nil {
				return err
			}
			probs.add(0, fmt.Sprintf("record %d: %s; the rest of the file is not read", v.index, msg))
			return nil
		}
		v.raw = raw
		if err := fn(&v); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		msg, err := oiDecodeErr(err)
		if err != nil {
			return err
		}
		probs.add(0, fmt.Sprintf("after record %d: %s", v.index, msg))
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		probs.add(0, "data after the end of the JSON array is ignored")
	}
	return nil
}

func oiReadDocument(dec *json.Decoder, probs *problemList, fn func(v *oiValue) error) error {
	v := oiValue{shape: oiDocument}
	var raw json.RawMessage
	for {
		raw = raw[:0]
		err := dec.Decode(&raw)
		if err == io.EOF {
			return nil
		}
		v.index++
		if err != nil {
			msg, err := oiDecodeErr(err)
			if err != nil {
				return err
			}
			probs.add(0, fmt.Sprintf("record %d: %s; the rest of the file is not read", v.index, msg))
			return nil
		}
		v.raw = raw
		if err := fn(&v); err != nil {
			return err
		}
	}
}

// ---- JSON helpers ----

// oiJSONErr says what is wrong with a JSON value read into a struct,
// without naming Go types.
func oiJSONErr(err error) string {
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
		return fmt.Sprintf("%s is %s, not %s", what, oiKindName(te.Value), want)
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return "not valid JSON: " + oiShortErr(err)
	}
	return oiShortErr(err)
}

func oiKindName(v string) string {
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

func oiShortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// oiNull reports an absent or null JSON value.
func oiNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// oiString decodes a JSON string quickly: without escapes, the bytes
// between the quotes are the string. raw must be valid JSON.
func oiString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// oiInput is a tool call's input: arguments that are JSON as they are,
// a string holding JSON as that JSON, any other string JSON-encoded,
// nothing as {}.
func oiInput(args json.RawMessage) json.RawMessage {
	args = bytes.TrimSpace(args)
	if oiNull(args) {
		return json.RawMessage("{}")
	}
	if args[0] != '"' {
		return oiCompact(args)
	}
	s, ok := oiString(args)
	if !ok {
		return json.RawMessage("{}")
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) {
		return oiCompact([]byte(t))
	}
	return oiJSONString(s)
}

func oiCompact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// oiJSONString encodes s as a JSON string, without HTML escaping.
func oiJSONString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// oiEncodeParts is model.EncodeParts without HTML escaping, so that the
// source's blocks are kept as they were.
func oiEncodeParts(parts []model.Part) json.RawMessage {
	if len(parts) == 0 {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(parts); err != nil {
		return model.EncodeParts(parts)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// oiMediaType guesses a media type from a data: URL or a file name.
func oiMediaType(ref string) string {
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

// oiExtraMeta keeps a record's keys other than skip as meta: strings as
// they are, other values as compact JSON.
func oiExtraMeta(raw []byte, skip ...string) map[string]string {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return nil
	}
	var meta map[string]string
outer:
	for k, v := range keys {
		for _, s := range skip {
			if k == s {
				continue outer
			}
		}
		if oiNull(v) {
			continue
		}
		val := ""
		if s, ok := oiString(bytes.TrimSpace(v)); ok {
			val = s
		} else {
			val = string(oiCompact(v))
		}
		if meta == nil {
			meta = map[string]string{}
		}
		meta[k] = val
	}
	return meta
}

// ---- media placeholders (LLaMA-Factory) ----

var oiMediaTokens = [3]string{"<image>", "<video>", "<audio>"}

// oiMedia hands out a record's media lists to the placeholders of its
// messages, in order.
type oiMedia struct {
	lists [3][]json.RawMessage
	next  [3]int
}

// oiReadMedia reads a record's "images", "videos" and "audios" lists
// (each a list, or one value); nil when there are none.
func oiReadMedia(images, videos, audios json.RawMessage) *oiMedia {
	var m oiMedia
	any := false
	for i, raw := range [3]json.RawMessage{images, videos, audios} {
		if oiNull(raw) {
			continue
		}
		raw = bytes.TrimSpace(raw)
		if raw[0] != '[' {
			m.lists[i] = []json.RawMessage{raw}
		} else if json.Unmarshal(raw, &m.lists[i]) != nil {
			continue
		}
		any = any || len(m.lists[i]) > 0
	}
	if !any {
		return nil
	}
	return &m
}

// has reports whether text holds a placeholder with media left for it.
func (m *oiMedia) has(text string) bool {
	if m == nil || strings.IndexByte(text, '<') < 0 {
		return false
	}
	for i, tok := range oiMediaTokens {
		if m.next[i] < len(m.lists[i]) && strings.Contains(text, tok) {
			return true
		}
	}
	return false
}

// split cuts text at its placeholders into text parts and media parts.
func (m *oiMedia) split(text string) []model.Part {
	var parts []model.Part
	// pos: where each kind's next placeholder is in text (-1: none, or
	// no media left for it); each is searched for once per placeholder.
	var pos [3]int
	find := func(i int) {
		pos[i] = -1
		if m.next[i] < len(m.lists[i]) {
			pos[i] = strings.Index(text, oiMediaTokens[i])
		}
	}
	for i := range pos {
		find(i)
	}
	for {
		at, kind := -1, -1
		for i, j := range pos {
			if j >= 0 && (at < 0 || j < at) {
				at, kind = j, i
			}
		}
		if at < 0 {
			break
		}
		if strings.TrimSpace(text[:at]) != "" {
			parts = append(parts, model.Part{Type: model.PartText, Text: text[:at]})
		}
		raw := m.lists[kind][m.next[kind]]
		m.next[kind]++
		p := model.Part{Type: model.PartOther, Raw: raw}
		if kind == 0 {
			p.Type = model.PartImage
		}
		if s, ok := oiString(raw); ok {
			p.MediaType = oiMediaType(s)
		} else {
			var o struct {
				Path string `json:"path"`
				URL  string `json:"url"`
			}
			if json.Unmarshal(raw, &o) == nil {
				p.MediaType = oiMediaType(o.Path + o.URL)
			}
		}
		parts = append(parts, p)
		cut := at + len(oiMediaTokens[kind])
		text = text[cut:]
		for i := range pos {
			if pos[i] >= 0 {
				pos[i] -= cut // placeholders do not overlap: the others come after
			}
		}
		find(kind)
	}
	if strings.TrimSpace(text) != "" {
		parts = append(parts, model.Part{Type: model.PartText, Text: text})
	}
	return parts
}

// left says which media no placeholder took, or "".
func (m *oiMedia) left() string {
	if m == nil {
		return ""
	}
	var out []string
	for i, name := range [3]string{"image", "video", "audio"} {
		if n := len(m.lists[i]) - m.next[i]; n > 0 {
			out = append(out, fmt.Sprintf("%d of its %d %ss", n, len(m.lists[i]), name))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, " and ") + " had no placeholder (<image>, <video>, <audio>) in the messages; not imported"
}

// ---- threads ----

// oiThread emits one thread: it computes the keys, waits (a little) for
// the title, and links tool results to their calls.
type oiThread struct {
	emit    Emitter
	source  Format
	key     string // the source's key; derived from the content if empty
	ordinal int    // the record's place in the file
	meta    map[string]string

	began   bool
	pending []Message
	first   string // the first message's digest
	title   string
	emitted int

	calls   []oiCall // waiting for their results, oldest first
	callSeq int

	buf []byte // for digests
}

type oiCall struct{ id, name string }

// newCallID makes an id for a call that has none.
func (t *oiThread) newCallID() string {
	t.callSeq++
	return "call_" + strconv.Itoa(t.callSeq)
}

// called notes a call waiting for its result.
func (t *oiThread) called(id, name string) {
	if id == "" {
		return
	}
	if len(t.calls) >= oiMaxPendingCalls {
		t.calls = t.calls[1:]
	}
	t.calls = append(t.calls, oiCall{id, name})
}

// answered finds the call a result answers: the call with its id, or,
// without one, the oldest call waiting. It returns the call's id and
// tool name (the id as given and "" for an unknown call).
func (t *oiThread) answered(id string) (string, string) {
	for i, c := range t.calls {
		if id == "" || c.id == id {
			t.calls = append(t.calls[:i], t.calls[i+1:]...)
			return c.id, c.name
		}
	}
	return id, ""
}

// add emits (or holds until the title is known) the message at the
// given ordinal of the thread. nm must be valid.
func (t *oiThread) add(ordinal int, nm model.NewMessage) error {
	// model.ContentDigest, without making its hex for every message.
	t.buf = append(append(append(t.buf[:0], nm.Role...), 0), nm.Content...)
	sum := sha256.Sum256(t.buf)
	if cap(t.buf) > 1<<20 {
		t.buf = nil
	}
	key := oiOrdinalKey(make([]byte, 0, 24), ordinal)
	key = hex.AppendEncode(key, sum[:6])
	m := Message{Key: string(key), NewMessage: nm}
	if t.emitted == 0 && len(t.pending) == 0 {
		t.first = hex.EncodeToString(sum[:])
		if len(t.meta) > 0 {
			if m.Meta == nil {
				m.Meta = make(map[string]string, len(t.meta))
			}
			for k, v := range t.meta {
				if _, ok := m.Meta[k]; !ok {
					m.Meta[k] = v
				}
			}
		}
	}
	if t.began {
		t.emitted++
		return t.emit.Message(m)
	}
	t.pending = append(t.pending, m)
	if nm.Role == model.RoleUser && t.title == "" {
		t.title = oiTitle(nm.Content)
	}
	if t.title != "" || len(t.pending) >= oiLookahead {
		return t.begin()
	}
	return nil
}

func (t *oiThread) begin() error {
	t.began = true
	if t.title == "" && len(t.pending) > 0 {
		t.title = oiTitle(t.pending[0].Content)
	}
	if err := t.emit.Begin(ThreadInfo{Key: t.threadKey(), Title: t.title, Source: t.source}); err != nil {
		return err
	}
	pending := t.pending
	t.pending = nil
	for _, m := range pending {
		t.emitted++
		if err := t.emit.Message(m); err != nil {
			return err
		}
	}
	return nil
}

func (t *oiThread) threadKey() string {
	if t.key != "" {
		return t.key
	}
	return oiThreadKey(t.first, t.ordinal)
}

// oiOrdinalKey appends the ordinal zero-padded to ten digits, so keys
// sort as their messages come: a batch of an import then fills the key
// index at its end instead of splitting pages all over it.
func oiOrdinalKey(dst []byte, ordinal int) []byte {
	var digits [20]byte
	n := strconv.AppendInt(digits[:0], int64(ordinal), 10)
	for range 10 - len(n) {
		dst = append(dst, '0')
	}
	return append(append(dst, n...), ':')
}

// oiThreadKey is the key of a thread without one: the first 16 hex of
// the SHA-256 of its first message's digest and its record's place in
// the file.
func oiThreadKey(firstDigest string, ordinal int) string {
	sum := sha256.Sum256([]byte(firstDigest + ":" + strconv.Itoa(ordinal)))
	return hex.EncodeToString(sum[:])[:16]
}

// finish ends the thread; it reports whether it had any message.
func (t *oiThread) finish() (bool, error) {
	if !t.began {
		if len(t.pending) == 0 {
			return false, nil
		}
		if err := t.begin(); err != nil {
			return true, err
		}
	}
	return true, t.emit.End()
}

// oiTitle is a title from a message: its first line with text (not only
// an image), at most 80 characters.
func oiTitle(content string) string {
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "[image") && strings.HasSuffix(line, "]") {
			continue // nothing, or only an image
		}
		if utf8.RuneCountInString(line) > 80 {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:79])) + "…"
		}
		return line
	}
	return ""
}

// ---- OpenAI messages ----

// oiMessage is a message, or a record, or something else: one decode
// tells which.
type oiMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	FunctionCall     json.RawMessage `json:"function_call"`
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"`

	// a record
	Messages json.RawMessage `json:"messages"`
	Images   json.RawMessage `json:"images"`
	Videos   json.RawMessage `json:"videos"`
	Audios   json.RawMessage `json:"audios"`
	// other formats
	Mapping       json.RawMessage `json:"mapping"`
	CurrentNode   json.RawMessage `json:"current_node"`
	Conversations json.RawMessage `json:"conversations"`
}

// reset empties m for the next decode, keeping its content's buffer
// (whether a message has content is len(Content) > 0).
func (m *oiMessage) reset() {
	*m = oiMessage{Content: m.Content[:0]}
}

type oiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
	Custom struct {
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"custom"`
}

type oiBlock struct {
	Type       string          `json:"type"`
	Text       json.RawMessage `json:"text"`
	Refusal    string          `json:"refusal"`
	ImageURL   json.RawMessage `json:"image_url"`
	InputAudio struct {
		Format string `json:"format"`
	} `json:"input_audio"`
}

type oiMode uint8

const (
	oiUnknown  oiMode = iota
	oiMessages        // (a), (e): the file is one thread of messages
	oiRecords         // (b), (c), (d): records with messages
)

type oiReader struct {
	emit    Emitter
	probs   problemList
	mode    oiMode
	thread  *oiThread // of a file of messages
	threads int
	msg     oiMessage // reused
	shape   oiShape
}

const oiShapes = `a JSON array of messages ({"role", "content"}), an object or a JSON array of records with "messages", or JSON lines of either`

// ReadOpenAI reads OpenAI-style messages (see the shapes above).
func ReadOpenAI(r io.Reader, emit Emitter) ([]Problem, error) {
	o := &oiReader{emit: emit}
	shape, err := oiEachValue(r, &o.probs, o.value)
	o.shape = shape
	if err == errOIEmpty {
		return nil, err
	}
	if err == nil && o.thread != nil {
		var any bool
		if any, err = o.thread.finish(); any {
			o.threads++
		}
	}
	problems := o.probs.result()
	if err != nil {
		if _, ok := err.(*oiNotJSON); ok {
			err = fmt.Errorf("not an OpenAI messages file: %w; it should be %s", err, oiShapes)
		}
		return problems, err
	}
	if o.threads == 0 {
		what := "no message could be imported"
		if o.mode == oiUnknown {
			what = "no message or record with messages was found"
		}
		return problems, fmt.Errorf("not an OpenAI messages file: %s; it should be %s", what, oiShapes)
	}
	return problems, nil
}

func (o *oiReader) value(v *oiValue) error {
	raw := v.raw
	if v.index == 1 && v.line == 1 {
		raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	}
	if len(raw) == 0 || raw[0] != '{' {
		if json.Valid(raw) {
			v.problem(&o.probs, describeJSON(raw)+", not a message or a record; skipped")
		} else {
			v.problem(&o.probs, "not valid JSON; skipped")
		}
		return nil
	}
	if o.mode != oiRecords {
		if nm, ok := oiFastMessage(raw); ok {
			if o.mode == oiUnknown {
				o.mode = oiMessages
				o.thread = &oiThread{emit: o.emit, source: OpenAI, ordinal: 1}
			}
			if strings.TrimSpace(nm.Content) == "" {
				v.note(&o.probs, "it is empty; skipped")
				return nil
			}
			return o.thread.add(v.index, nm)
		}
	}
	m := &o.msg
	m.reset()
	if err := json.Unmarshal(raw, m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			v.problem(&o.probs, "not valid JSON; skipped")
			return nil
		}
		v.problem(&o.probs, oiJSONErr(err)+"; skipped")
		return nil
	}
	isRecord := m.Messages != nil
	isMessage := m.Role != "" || len(m.Content) > 0 || m.ToolCalls != nil
	if o.mode == oiUnknown {
		switch {
		case m.Mapping != nil || m.CurrentNode != nil:
			return errors.New(`this is a ChatGPT export (conversations with a "mapping"), not OpenAI messages: import it with --format chatgpt`)
		case m.Conversations != nil && !isRecord:
			return errors.New(`this is a ShareGPT file (records with "conversations"), not OpenAI messages: import it with --format sharegpt`)
		case isRecord:
			o.mode = oiRecords
		case isMessage:
			o.mode = oiMessages
			o.thread = &oiThread{emit: o.emit, source: OpenAI, ordinal: 1}
		default:
			v.problem(&o.probs, describeJSON(raw)+": neither a message (role, content) nor a record (messages); skipped")
			return nil
		}
	}
	if o.mode == oiRecords {
		if !isRecord {
			if isMessage {
				v.problem(&o.probs, `a single message in a file of records with "messages"; skipped`)
			} else {
				v.problem(&o.probs, `a record without "messages"; skipped`)
			}
			return nil
		}
		return o.record(v, raw)
	}
	if isRecord {
		v.problem(&o.probs, `a record with "messages" in a file of single messages; skipped`)
		return nil
	}
	nm, err := o.convert(m, raw, o.thread, nil)
	if err != "" {
		v.problem(&o.probs, err+"; skipped")
		return nil
	}
	return o.thread.add(v.index, nm)
}

// record reads a record of (b), (c), (d) and emits its thread.
func (o *oiReader) record(v *oiValue, raw []byte) error {
	m := &o.msg
	if msgs := bytes.TrimSpace(m.Messages); len(msgs) == 0 || msgs[0] != '[' {
		v.problem(&o.probs, `its "messages" is `+describeJSON(m.Messages)+", not a list; skipped")
		return nil
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(m.Messages, &msgs); err != nil {
		v.problem(&o.probs, `its "messages": `+oiJSONErr(err)+"; skipped")
		return nil
	}
	if len(msgs) == 0 {
		v.note(&o.probs, `its "messages" list is empty; skipped`)
		return nil
	}
	media := oiReadMedia(m.Images, m.Videos, m.Audios)
	th := &oiThread{emit: o.emit, source: OpenAI, ordinal: v.index,
		meta: oiExtraMeta(raw, "messages", "images", "videos", "audios")}
	var mm oiMessage
	for i, mraw := range msgs {
		where := "message " + strconv.Itoa(i+1) + ": "
		mraw = bytes.TrimSpace(mraw)
		if len(mraw) == 0 || mraw[0] != '{' {
			v.problem(&o.probs, where+describeJSON(mraw)+", not a message; skipped")
			continue
		}
		mm = oiMessage{}
		if err := json.Unmarshal(mraw, &mm); err != nil {
			v.problem(&o.probs, where+oiJSONErr(err)+"; skipped")
			continue
		}
		nm, msg := o.convert(&mm, mraw, th, media)
		if msg == oiEmpty {
			v.note(&o.probs, where+msg+"; skipped") // nothing lost
			continue
		}
		if msg != "" {
			v.problem(&o.probs, where+msg+"; skipped")
			continue
		}
		if err := th.add(i+1, nm); err != nil {
			return err
		}
	}
	if left := media.left(); left != "" {
		v.problem(&o.probs, left)
	}
	any, err := th.finish()
	if any {
		o.threads++
	} else if err == nil {
		v.note(&o.probs, "no message to import; skipped")
	}
	return err
}

// oiRole maps a role to weft's; "" for a role weft does not know.
func oiRole(role string) (model.Role, string) {
	switch role {
	case "system", "user", "assistant", "tool":
		return model.Role(role), ""
	case "developer":
		return model.RoleSystem, role
	case "function":
		return model.RoleTool, role
	}
	return "", ""
}

// convert makes a message to import of m (raw as the source has it), or
// says why it cannot.
func (o *oiReader) convert(m *oiMessage, raw []byte, th *oiThread, media *oiMedia) (model.NewMessage, string) {
	role, sourceRole := oiRole(m.Role)
	if role == "" {
		if m.Role == "" {
			return model.NewMessage{}, `it has no "role"`
		}
		return model.NewMessage{}, fmt.Sprintf("role %q is not one of system, developer, user, assistant, tool, function", m.Role)
	}
	nm := model.NewMessage{Role: role, Name: m.Name}
	if sourceRole != "" {
		nm.Meta = map[string]string{"source_role": sourceRole}
	}
	content := bytes.TrimSpace(m.Content)

	// The common case: plain text, nothing else.
	if len(content) > 0 && content[0] == '"' && role != model.RoleTool &&
		m.ToolCalls == nil && m.FunctionCall == nil && m.Refusal == "" && m.ReasoningContent == "" {
		s, ok := oiString(content)
		if !ok {
			return model.NewMessage{}, "its content is not a valid string"
		}
		if !media.has(s) {
			nm.Content = s
			if strings.TrimSpace(s) == "" {
				return model.NewMessage{}, oiEmpty
			}
			return nm, ""
		}
	}

	var parts []model.Part
	if m.ReasoningContent != "" {
		parts = append(parts, model.Part{Type: model.PartThinking, Text: m.ReasoningContent, Raw: oiJSONString(m.ReasoningContent)})
	}
	cparts, err := oiContentParts(content, media)
	if err != "" {
		return model.NewMessage{}, err
	}

	if role == model.RoleTool {
		// The output is the text; images shown by the tool follow it.
		var text []string
		var rest []model.Part
		for _, p := range cparts {
			if p.Type == model.PartText {
				text = append(text, p.Text)
			} else {
				rest = append(rest, p)
			}
		}
		res := model.Part{Type: model.PartToolResult, Text: strings.Join(text, "\n\n")}
		if sourceRole != "function" { // a function result names its function itself
			id, name := th.answered(m.ToolCallID)
			res.ToolCallID = id
			if nm.Name == "" {
				nm.Name = name
			}
		}
		res.Raw = append(json.RawMessage(nil), raw...) // the whole message
		parts = append(parts, res)
		parts = append(parts, rest...)
	} else {
		parts = append(parts, cparts...)
		if m.Refusal != "" {
			parts = append(parts, model.Part{Type: model.PartText, Text: m.Refusal, Raw: oiJSONString(m.Refusal)})
			if nm.Meta == nil {
				nm.Meta = map[string]string{}
			}
			nm.Meta["refusal"] = "true"
		}
		var legacy []model.Part
		if !oiNull(m.FunctionCall) {
			var fc struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if e := json.Unmarshal(m.FunctionCall, &fc); e != nil {
				return model.NewMessage{}, "function_call: " + oiJSONErr(e)
			}
			legacy = []model.Part{{Type: model.PartToolCall, ToolName: fc.Name,
				Input: oiInput(fc.Arguments), Raw: oiCompact(m.FunctionCall)}}
		}
		// Last: a message that is skipped leaves no call waiting.
		calls, err := oiToolCalls(m.ToolCalls, th)
		if err != "" {
			return model.NewMessage{}, err
		}
		parts = append(parts, calls...)
		parts = append(parts, legacy...)
	}
	nm.Content = RenderContent(parts)
	nm.Parts = oiEncodeParts(parts)
	if strings.TrimSpace(nm.Content) == "" && len(parts) == 0 {
		return model.NewMessage{}, oiEmpty
	}
	return nm, ""
}

// oiContentParts reads a message's content: a string, null or a list of
// parts.
func oiContentParts(content []byte, media *oiMedia) ([]model.Part, string) {
	if oiNull(content) {
		return nil, ""
	}
	switch content[0] {
	case '"':
		s, ok := oiString(content)
		if !ok {
			return nil, "its content is not a valid string"
		}
		if media.has(s) {
			return media.split(s), ""
		}
		if strings.TrimSpace(s) == "" {
			return nil, ""
		}
		return []model.Part{{Type: model.PartText, Text: s, Raw: append(json.RawMessage(nil), content...)}}, ""
	case '[':
	default:
		return nil, "its content is " + describeJSON(content) + ", not a string, a list of parts or null"
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, "its content: " + oiJSONErr(err)
	}
	parts := make([]model.Part, 0, len(blocks))
	for _, raw := range blocks {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		if raw[0] == '"' {
			s, _ := oiString(raw)
			if media.has(s) {
				parts = append(parts, media.split(s)...)
			} else {
				parts = append(parts, model.Part{Type: model.PartText, Text: s, Raw: raw})
			}
			continue
		}
		parts = append(parts, oiBlockPart(raw, media)...)
	}
	return parts, ""
}

// oiBlockPart normalises one block of a content list.
func oiBlockPart(raw json.RawMessage, media *oiMedia) []model.Part {
	other := []model.Part{{Type: model.PartOther, Raw: raw}}
	if raw[0] != '{' {
		return other
	}
	var b oiBlock
	if json.Unmarshal(raw, &b) != nil {
		return other
	}
	switch b.Type {
	case "text", "input_text", "output_text":
		text, ok := oiString(bytes.TrimSpace(b.Text))
		if !ok {
			// {"text": {"value": ...}} (the Assistants API)
			var v struct {
				Value string `json:"value"`
			}
			if json.Unmarshal(b.Text, &v) != nil {
				return other
			}
			text = v.Value
		}
		if media.has(text) {
			return media.split(text)
		}
		return []model.Part{{Type: model.PartText, Text: text, Raw: raw}}
	case "refusal":
		return []model.Part{{Type: model.PartText, Text: b.Refusal, Raw: raw}}
	case "image_url", "input_image", "image":
		p := model.Part{Type: model.PartImage, Raw: raw}
		url, ok := oiString(bytes.TrimSpace(b.ImageURL))
		if !ok {
			var o struct {
				URL string `json:"url"`
			}
			json.Unmarshal(b.ImageURL, &o)
			url = o.URL
		}
		p.MediaType = oiMediaType(url)
		return []model.Part{p}
	case "input_audio":
		p := model.Part{Type: model.PartOther, Raw: raw}
		if f := b.InputAudio.Format; f != "" {
			p.MediaType = "audio/" + f
		}
		return []model.Part{p}
	}
	return other
}

// oiToolCalls reads an assistant's tool_calls.
func oiToolCalls(raw json.RawMessage, th *oiThread) ([]model.Part, string) {
	if oiNull(raw) {
		return nil, ""
	}
	var calls []json.RawMessage
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, "tool_calls: " + oiJSONErr(err)
	}
	parts := make([]model.Part, 0, len(calls))
	for i, craw := range calls {
		var c oiToolCall
		if err := json.Unmarshal(craw, &c); err != nil {
			return nil, fmt.Sprintf("tool call %d: %s", i+1, oiJSONErr(err))
		}
		p := model.Part{Type: model.PartToolCall, ToolCallID: c.ID, Raw: oiCompact(craw)}
		switch {
		case c.Type == "custom" || c.Function.Name == "" && c.Custom.Name != "":
			p.ToolName = c.Custom.Name
			in := bytes.TrimSpace(c.Custom.Input)
			if len(in) > 0 && in[0] == '"' {
				p.Input = in
			} else {
				p.Input = oiInput(in)
			}
		default:
			p.ToolName = c.Function.Name
			p.Input = oiInput(c.Function.Arguments)
		}
		parts = append(parts, p)
	}
	for i, p := range parts { // once all are read
		if p.ToolCallID == "" {
			parts[i].ToolCallID = th.newCallID()
		}
		th.called(parts[i].ToolCallID, p.ToolName)
	}
	return parts, ""
}

// ---- the fast way for the lines of a big file ----

// oiFastMessage reads the common line of a big file of messages, a flat
// object {"role", "content", "name"} of strings with a role that needs
// no parts (system, developer, user, assistant), without encoding/json
// (several times faster). ok is false for anything else, which then
// goes the general way (and gets the same result, or its error).
func oiFastMessage(b []byte) (nm model.NewMessage, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nm, false
	}
	var role, content, name string
	var hasRole, hasContent bool
	for {
		i = skipSpace(b, i+1)
		// the key: plain ASCII, matched exactly (encoding/json matches
		// keys without regard to case: those go the general way)
		if i >= len(b) || b[i] != '"' {
			return nm, false
		}
		ks := i + 1
		j := ks
		for j < len(b) && b[j] != '"' && b[j] >= 0x20 && b[j] < 0x80 && b[j] != '\\' {
			j++
		}
		if j >= len(b) || b[j] != '"' {
			return nm, false
		}
		key := b[ks:j]
		i = skipSpace(b, j+1)
		if i >= len(b) || b[i] != ':' {
			return nm, false
		}
		i = skipSpace(b, i+1)
		val, next, vok := oiScanString(b, i)
		if !vok {
			return nm, false
		}
		switch string(key) {
		case "role":
			role, hasRole = val, true
		case "content":
			content, hasContent = val, true
		case "name":
			name = val
		default:
			return nm, false
		}
		i = skipSpace(b, next)
		if i >= len(b) {
			return nm, false
		}
		if b[i] == ',' {
			continue
		}
		if b[i] != '}' {
			return nm, false
		}
		if skipSpace(b, i+1) != len(b) || !hasRole || !hasContent {
			return nm, false
		}
		break
	}
	r, source := oiRole(role)
	if r == "" || r == model.RoleTool {
		return nm, false
	}
	nm = model.NewMessage{Role: r, Content: content, Name: name}
	if source != "" {
		nm.Meta = map[string]string{"source_role": source}
	}
	return nm, true
}

// oiScanString reads the JSON string at b[i], returning it and the index
// after it. ok is false for anything encoding/json would read otherwise
// or refuse: not a string, a control character, a bad escape, a lone
// surrogate, invalid UTF-8.
func oiScanString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	start := i + 1
	j := start
	for j < len(b) {
		c := b[j]
		if c == '"' {
			s := b[start:j]
			if !utf8.Valid(s) {
				return "", 0, false
			}
			return string(s), j + 1, true
		}
		if c == '\\' {
			return oiUnescape(b, start, j)
		}
		if c < 0x20 {
			return "", 0, false
		}
		j++
	}
	return "", 0, false
}

// oiUnescape reads the rest of a string with escapes; b[start:j] has
// none.
func oiUnescape(b []byte, start, j int) (string, int, bool) {
	out := make([]byte, 0, len(b)-start)
	out = append(out, b[start:j]...)
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", 0, false
			}
			return string(out), j + 1, true
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(b) {
			return "", 0, false
		}
		switch b[j+1] {
		case '"', '\\', '/':
			out = append(out, b[j+1])
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
			r, ok := oiHex4(b, j+2)
			if !ok {
				return "", 0, false
			}
			j += 6
			if r >= 0xd800 && r < 0xe000 {
				// a surrogate pair, or the general way
				if r >= 0xdc00 || j+1 >= len(b) || b[j] != '\\' || b[j+1] != 'u' {
					return "", 0, false
				}
				lo, ok := oiHex4(b, j+2)
				if !ok || lo < 0xdc00 || lo >= 0xe000 {
					return "", 0, false
				}
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				j += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", 0, false
		}
		j += 2
	}
	return "", 0, false
}

func oiHex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
