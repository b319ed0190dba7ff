package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/record"
)

// quoteJS writes s as JSON.stringify does (no HTML escaping, the line
// separators as they are); quoteGo as encoding/json does by default.
func quoteJS(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(out)
}

func quoteGo(s string) string { b, _ := json.Marshal(s); return string(b) }

// withParts is a message of content whose parts are doc, as an importer
// makes them.
func withParts(seq uint64, role model.Role, content, doc string) model.Message {
	m := msg(seq, role, content, t0)
	m.Parts = json.RawMessage(doc)
	return m
}

// partsOf are the parts the importers make of a client's message that
// says text: the text in the part and again in its source block, as the
// client wrote it (q), in the shapes the three APIs send; and the
// message's content.
func partsOf(text, q string) map[string][2]string {
	own := quoteJS(text)
	return map[string][2]string{
		"a string content":    {text, `[{"type":"text","text":` + own + `,"raw":` + q + `}]`},
		"a text block":        {text, `[{"type":"text","text":` + own + `,"raw":{"type":"text","text":` + q + `,"cache_control":{"type":"ephemeral"}}}]`},
		"a tool result":       {"[tool result] " + text, `[{"type":"tool_result","text":` + own + `,"tool_call_id":"toolu_1","raw":{"tool_use_id":"toolu_1","type":"tool_result","content":` + q + `,"is_error":false}}]`},
		"a chat tool message": {"[tool result] " + text, `[{"type":"tool_result","text":` + own + `,"tool_call_id":"call_1","raw":{"role":"tool","tool_call_id":"call_1","content":` + q + `}}]`},
		"a responses item":    {text, `[{"type":"text","text":` + own + `,"raw":{"type":"message","role":"user","content":[{"type":"input_text","text":` + q + `}]}}]`},
	}
}

// A message's text is stored once: its parts, which say it again as
// each part's text and in the client's block, are packed over the
// content, and read back byte for byte; whichever way the client
// escaped its JSON.
func TestMessageTextIsStoredOnce(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("func (b *Bucket) refill(now time.Time) {\n\tb.tokens += \"rate\" // <a & b> café 😀\u2028\n}\n", 8000)
	for client, q := range map[string]string{"javascript": quoteJS(text), "encoding/json": quoteGo(text)} {
		for shape, c := range partsOf(text, q) {
			m := withParts(3, model.RoleUser, c[0], c[1])
			rec := record.AppendMessage(nil, &m, m.CreatedAt.UnixNano(), record.PackParts(&m))
			if max := len(m.Content) + 1024; len(rec) > max {
				t.Errorf("%s, %s: a record of %d bytes for %d of text (at most %d): the text is stored more than once", client, shape, len(rec), len(text), max)
			}
			got, err := record.DecodeMessage(rec, 3)
			if err != nil {
				t.Fatalf("%s, %s: %v", client, shape, err)
			}
			sameMessage(t, got, m)
		}
	}
}

// Whatever a message holds (parts that say its text or not, JSON or
// not), it reads back as it was stored.
func TestMessageRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "b", " ", "<", ">", "&", "é", "日本", "😀", "\n", "\t", `"`, `\`, "/", "\u2028", "\x01", "{", "}"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range 3000 {
		body := text(rng.IntN(300))
		var m model.Message
		switch rng.IntN(4) {
		case 0: // the shapes the importers make
			shapes := partsOf(body, []string{quoteJS(body), quoteGo(body)}[rng.IntN(2)])
			for _, c := range shapes {
				m = withParts(uint64(i+1), model.RoleTool, c[0], c[1])
				break
			}
		case 1: // parts that say something else
			m = withParts(uint64(i+1), model.RoleAssistant, body, `[{"type":"thinking","text":`+quoteJS(text(80))+`}]`)
		case 2: // parts that are not JSON
			m = withParts(uint64(i+1), model.RoleUser, body, body[:rng.IntN(len(body)+1)])
		default:
			m = msg(uint64(i+1), model.RoleSystem, body, t0)
		}
		if len(m.Parts) == 0 {
			m.Parts = nil
		}
		rec := record.AppendMessage(nil, &m, m.CreatedAt.UnixNano(), record.PackParts(&m))
		if len(rec) != record.MessageLen(&m, record.PackParts(&m)) {
			t.Fatalf("message %d: encoded %d bytes, encodedLen says %d", i, len(rec), record.MessageLen(&m, record.PackParts(&m)))
		}
		got, err := record.DecodeMessage(rec, m.Seq)
		if err != nil {
			t.Fatalf("message %d: %v\n%q\n%q", i, err, m.Content, m.Parts)
		}
		sameMessage(t, got, m)
	}
}

func FuzzMessageRecordRoundTrip(f *testing.F) {
	text := "the refill reads the wall clock <a & b> café 😀\n"
	for _, c := range partsOf(text, quoteGo(text)) {
		f.Add(c[0], []byte(c[1]))
	}
	f.Fuzz(func(t *testing.T, content string, parts []byte) {
		m := msg(1, model.RoleUser, content, t0)
		if len(parts) > 0 {
			m.Parts = parts
		}
		rec := record.AppendMessage(nil, &m, m.CreatedAt.UnixNano(), record.PackParts(&m))
		got, err := record.DecodeMessage(rec, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != m.Content || !bytes.Equal(got.Parts, m.Parts) {
			t.Fatalf("read back %q %q, not %q %q", got.Content, got.Parts, m.Content, m.Parts)
		}
	})
}

// A file of schema 2 (messages' parts as they are) reads as it is, its
// file untouched, when opened to read; opened to write, it is schema 3,
// its messages read as they were, and new ones are packed.
func TestSchema2FileReads(t *testing.T) {
	t.Parallel()
	s, path := tempDB(t)
	putSession(t, s, "s")
	text := strings.Repeat("a line of the tool's output <a & b>\n", 200)
	var want []model.Message
	for shape, c := range partsOf(text, quoteJS(text)) {
		m := withParts(uint64(len(want)+1), model.RoleTool, c[0], c[1])
		m.Name = shape
		want = append(want, m)
	}
	counted := func(tx *Tx, n int) error {
		return tx.PutSession(model.Session{ID: "s", Title: "title of s", CreatedAt: t0, UpdatedAt: t0, MessageCount: n})
	}
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.AppendMessages("s", want); err != nil {
			return err
		}
		return counted(tx, len(want))
	})
	s.Close()
	// The file as a weft of schema 2 wrote it.
	setSchema(t, path, 2, func(tx *bolt.Tx) error {
		b := tx.Bucket(bktMsgs)
		var recs [][2][]byte
		err := b.ForEach(func(k, v []byte) error {
			m, err := record.DecodeMessage(v, be64(k[numLen:]))
			if err != nil {
				return err
			}
			if v[2]&record.FlagPartsPacked == 0 {
				return fmt.Errorf("message %d was not packed", m.Seq)
			}
			old := record.AppendMessage(nil, &m, m.CreatedAt.UnixNano(), record.AsIs(&m))
			recs = append(recs, [2][]byte{bytes.Clone(k), old})
			return nil
		})
		for _, r := range recs {
			if err == nil {
				err = b.Put(r[0], r[1])
			}
		}
		return err
	})
	read := func(s *Store, n int) []model.Message {
		t.Helper()
		var got []model.Message
		mustView(t, s, func(tx *Tx) error {
			return tx.Messages("s", 1, uint64(n), func(m model.Message) error {
				got = append(got, m)
				return nil
			})
		})
		return got
	}

	before := fileHash(t, path)
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("schema 2, read only: %v", err)
	}
	for i, m := range read(ro, len(want)) {
		sameMessage(t, m, want[i])
	}
	ro.Close()
	if fileHash(t, path) != before || schemaOf(t, path) != 2 {
		t.Fatal("reading a file of schema 2 changed it")
	}

	rw := openT(t, path)
	more := withParts(uint64(len(want)+1), model.RoleTool, partsOf(text, quoteJS(text))["a tool result"][0], partsOf(text, quoteJS(text))["a tool result"][1])
	want = append(want, more)
	mustUpdate(t, rw, func(tx *Tx) error {
		if err := tx.AppendMessages("s", []model.Message{more}); err != nil {
			return err
		}
		return counted(tx, len(want))
	})
	for i, m := range read(rw, len(want)) {
		sameMessage(t, m, want[i])
	}
	rw.Close()
	if v := schemaOf(t, path); v != currentSchema {
		t.Errorf("opened to write, the file has schema %d, want %d", v, currentSchema)
	}
	if problems, err := Check(path); err != nil || len(problems) > 0 {
		t.Errorf("check: %v %v", problems, err)
	}
}
