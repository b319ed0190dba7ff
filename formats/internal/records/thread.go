package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"weft/formats"
	"weft/model"
)

// Empty says a message is skipped for having nothing in it: a note, not
// a problem.
const Empty = "it is empty"

// lookahead is how many messages of a thread wait, at most, for its
// first user message (the title) before the thread begins.
const lookahead = 16

// maxPendingCalls bounds the calls a thread remembers while they wait
// for their results.
const maxPendingCalls = 1024

// Calls links the tool results of a thread to its calls. The zero value
// is ready.
type Calls struct {
	waiting []call // oldest first
	seq     int
}

type call struct{ id, name string }

// NewID makes an id for a call that has none: "call_<k>", k counting the
// calls of the thread.
func (c *Calls) NewID() string {
	c.seq++
	return "call_" + strconv.Itoa(c.seq)
}

// Called notes a call waiting for its result.
func (c *Calls) Called(id, name string) {
	if id == "" {
		return
	}
	if len(c.waiting) >= maxPendingCalls {
		c.waiting = c.waiting[1:]
	}
	c.waiting = append(c.waiting, call{id, name})
}

// Answered finds the call a result answers: the call with its id, or,
// without one, the oldest call waiting. It returns the call's id and
// tool name (the id as given and "" for an unknown call).
func (c *Calls) Answered(id string) (string, string) {
	for i, w := range c.waiting {
		if id == "" || w.id == id {
			c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
			return w.id, w.name
		}
	}
	return id, ""
}

// Thread emits one thread of a file without ids: it makes the keys from
// the content, waits (a little) for the title, and links tool results
// to their calls.
//
// A message's key is "<ordinal>:<first 12 hex of its digest>", the
// ordinal (zero-padded to ten digits) its place in its record or file,
// given by the reader; a thread's key, unless the source has one, is the
// first 16 hex of the SHA-256 of "<digest>:<place>", digest its first
// message's and place the record's in the file.
type Thread struct {
	Emit   formats.Emitter
	Source formats.Format
	// Key is the source's key for the thread; without one it is derived
	// from the content.
	Key string
	// Ordinal is the record's place in the file (1 for a file that is
	// one thread).
	Ordinal int
	// Meta goes in the meta of the thread's first message.
	Meta map[string]string
	Calls

	began   bool
	pending []formats.Message
	first   string // the first message's digest
	title   string
	emitted int

	buf []byte // for digests
}

// Add emits (or holds until the title is known) the message at the
// given ordinal of the thread. nm must be valid.
func (t *Thread) Add(ordinal int, nm model.NewMessage) error {
	// model.ContentDigest, without making its hex for every message.
	t.buf = append(append(append(t.buf[:0], nm.Role...), 0), nm.Content...)
	sum := sha256.Sum256(t.buf)
	if cap(t.buf) > 1<<20 {
		t.buf = nil
	}
	key := ordinalKey(make([]byte, 0, 24), ordinal)
	key = hex.AppendEncode(key, sum[:6])
	m := formats.Message{Key: string(key), Digest: hex.EncodeToString(sum[:]), NewMessage: nm}
	if t.emitted == 0 && len(t.pending) == 0 {
		t.first = m.Digest
		if len(t.Meta) > 0 {
			if m.Meta == nil {
				m.Meta = make(map[string]string, len(t.Meta))
			}
			for k, v := range t.Meta {
				if _, ok := m.Meta[k]; !ok {
					m.Meta[k] = v
				}
			}
		}
	}
	if t.began {
		t.emitted++
		return t.Emit.Message(m)
	}
	t.pending = append(t.pending, m)
	if nm.Role == model.RoleUser && t.title == "" {
		t.title = Title(nm.Content)
	}
	if t.title != "" || len(t.pending) >= lookahead {
		return t.begin()
	}
	return nil
}

func (t *Thread) begin() error {
	t.began = true
	if t.title == "" && len(t.pending) > 0 {
		t.title = Title(t.pending[0].Content)
	}
	if err := t.Emit.Begin(formats.ThreadInfo{Key: t.threadKey(), Title: t.title, Source: t.Source}); err != nil {
		return err
	}
	pending := t.pending
	t.pending = nil
	for _, m := range pending {
		t.emitted++
		if err := t.Emit.Message(m); err != nil {
			return err
		}
	}
	return nil
}

func (t *Thread) threadKey() string {
	if t.Key != "" {
		return t.Key
	}
	return ThreadKey(t.first, t.Ordinal)
}

// ordinalKey appends the ordinal zero-padded to ten digits, so keys
// sort as their messages come: a batch of an import then fills the key
// index at its end instead of splitting pages all over it.
func ordinalKey(dst []byte, ordinal int) []byte {
	var digits [20]byte
	n := strconv.AppendInt(digits[:0], int64(ordinal), 10)
	for range 10 - len(n) {
		dst = append(dst, '0')
	}
	return append(append(dst, n...), ':')
}

// ThreadKey is the key of a thread without one: the first 16 hex of the
// SHA-256 of its first message's digest and its record's place in the
// file.
func ThreadKey(firstDigest string, ordinal int) string {
	sum := sha256.Sum256([]byte(firstDigest + ":" + strconv.Itoa(ordinal)))
	return hex.EncodeToString(sum[:])[:16]
}

// Finish ends the thread; it reports whether it had any message.
func (t *Thread) Finish() (bool, error) {
	if !t.began {
		if len(t.pending) == 0 {
			return false, nil
		}
		if err := t.begin(); err != nil {
			return true, err
		}
	}
	return true, t.Emit.End()
}

// FinishRecord ends the thread of the record v: the media no
// placeholder took are a problem, a record with nothing imported a note.
// It reports whether the thread had any message.
func (t *Thread) FinishRecord(v *Value, p *formats.Problems, media *Media) (bool, error) {
	if left := media.Left(); left != "" {
		v.Problem(p, left)
	}
	any, err := t.Finish()
	if !any && err == nil {
		v.Note(p, "no message to import; skipped")
	}
	return any, err
}

// Title is a title from a message: its first line with text (not only
// an image), cut as formats.CutTitle cuts.
func Title(content string) string {
	for line := range strings.SplitSeq(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "[image") && strings.HasSuffix(line, "]") {
			continue // nothing, or only an image
		}
		return formats.CutTitle(line)
	}
	return ""
}

// ExtraMeta keeps a record's keys other than skip as meta: strings as
// they are, other values as compact JSON.
func ExtraMeta(raw []byte, skip ...string) map[string]string {
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
		if formats.IsNull(v) {
			continue
		}
		val := ""
		if s, ok := formats.DecodeString(v); ok {
			val = s
		} else {
			val = string(formats.Compact(v))
		}
		if meta == nil {
			meta = map[string]string{}
		}
		meta[k] = val
	}
	return meta
}

var mediaTokens = [3]string{"<image>", "<video>", "<audio>"}

// Media hands out a record's media lists ("images", "videos", "audios",
// as LLaMA-Factory writes them) to the placeholders of its messages, in
// order: each <image> (<video>, <audio>) in a message's text takes the
// next one and becomes an image (other) part there. A nil *Media has
// none.
type Media struct {
	lists [3][]json.RawMessage
	next  [3]int
}

// MediaLists are a record's "images", "videos" and "audios", as the
// source has them; a reader embeds them in the record it decodes.
type MediaLists struct {
	Images json.RawMessage `json:"images"`
	Videos json.RawMessage `json:"videos"`
	Audios json.RawMessage `json:"audios"`
}

// Media reads the lists (see ReadMedia).
func (l *MediaLists) Media() *Media { return ReadMedia(l.Images, l.Videos, l.Audios) }

// ReadMedia reads a record's "images", "videos" and "audios" lists
// (each a list, or one value); nil when there are none.
func ReadMedia(images, videos, audios json.RawMessage) *Media {
	var m Media
	any := false
	for i, raw := range [3]json.RawMessage{images, videos, audios} {
		if formats.IsNull(raw) {
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

// Has reports whether text holds a placeholder with media left for it.
func (m *Media) Has(text string) bool {
	if m == nil || strings.IndexByte(text, '<') < 0 {
		return false
	}
	for i, tok := range mediaTokens {
		if m.next[i] < len(m.lists[i]) && strings.Contains(text, tok) {
			return true
		}
	}
	return false
}

// Split cuts text at its placeholders into text parts and media parts.
func (m *Media) Split(text string) []model.Part {
	var parts []model.Part
	// pos: where each kind's next placeholder is in text (-1: none, or
	// no media left for it); each is searched for once per placeholder.
	var pos [3]int
	find := func(i int) {
		pos[i] = -1
		if m.next[i] < len(m.lists[i]) {
			pos[i] = strings.Index(text, mediaTokens[i])
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
		if s, ok := formats.DecodeString(raw); ok {
			p.MediaType = formats.MediaType(s)
		} else {
			var o struct {
				Path string `json:"path"`
				URL  string `json:"url"`
			}
			if json.Unmarshal(raw, &o) == nil {
				p.MediaType = formats.MediaType(o.Path + o.URL)
			}
		}
		parts = append(parts, p)
		cut := at + len(mediaTokens[kind])
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

// Left says which media no placeholder took, or "".
func (m *Media) Left() string {
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
