package jsonpack

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// roundTrip packs doc over text and checks that it unpacks to doc byte
// for byte, and how long the packed form is.
func roundTrip(t testing.TB, text string, doc []byte) int {
	t.Helper()
	p := Make(text, doc)
	if !p.Packs() {
		return len(doc)
	}
	return unpacksTo(t, p, doc, text, doc)
}

// unpacksTo checks that plan's packed form of doc (nil for a Builder's)
// is as long as plan says and unpacks over text to want byte for byte,
// and returns its length.
func unpacksTo(t testing.TB, plan Plan, doc []byte, text string, want []byte) int {
	t.Helper()
	packed := plan.Append(nil, doc)
	if len(packed) != plan.Len() {
		t.Fatalf("packed %d bytes, Len says %d", len(packed), plan.Len())
	}
	got, err := Unpack(packed, text)
	if err != nil {
		t.Fatalf("unpack: %v\ntext %q\nwant %s", err, text, want)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("unpacked\n%s\nnot\n%s", got, want)
	}
	return len(packed)
}

// encoders write a JSON string as the clients that send weft their
// messages do.
var encoders = map[string]func(s string) []byte{
	"encoding/json": func(s string) []byte { b, _ := json.Marshal(s); return b },
	"encoding/json, no HTML": func(s string) []byte {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		_ = e.Encode(s)
		return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	},
	// JSON.stringify, serde_json: the line separators as they are.
	"javascript": func(s string) []byte { return appendQuoted(nil, s, styleLineSep) },
	// Python's json.dumps: everything past ASCII escaped.
	"python": func(s string) []byte {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r == '"' || r == '\\':
				b.WriteString(`\` + string(r))
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\b':
				b.WriteString(`\b`)
			case r == '\f':
				b.WriteString(`\f`)
			case r < 0x20 || r >= 0x7f && r <= 0xFFFF && r > 0x7f:
				fmt.Fprintf(&b, `\u%04x`, r)
			case r > 0xFFFF:
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+r>>10, 0xDC00+r&0x3FF)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
		return []byte(b.String())
	},
}

var samples = []string{
	"plain text, nothing to escape",
	"func (b *Bucket) refill(now time.Time) {\n\tb.tokens += \"rate\" // <a & b>\n}\n",
	"caf\u00e9, na\u00efve, \u65e5\u672c\u8a9e, \U0001F600 and a line\u2028separator\u2029",
	"a/b/c \\ d \b\f\r \x01\x1f \x7f",
	"",
}

// Every encoder's string of a text is matched whole, and the style read
// off it writes it back byte for byte.
func TestMatchReadsEachEncodersStyle(t *testing.T) {
	for name, enc := range encoders {
		for _, s := range samples {
			lit := enc(s)
			n, st, ok := match(lit, s+"and more after it")
			if !ok || n != len(s) {
				t.Errorf("%s: %s not matched (%d, %v)", name, lit, n, ok)
				continue
			}
			if got := appendQuoted(nil, s, st); !bytes.Equal(got, lit) {
				t.Errorf("%s: style %05b writes\n%s\nnot\n%s", name, st, got, lit)
			}
		}
	}
	// A string that is not the text, or says it otherwise than any
	// style, is not matched.
	for _, c := range []struct{ lit, text string }{
		{`"abc"`, "abd"},
		{`"abc"`, "ab"},
		{`"a\u0062c"`, "abc"},              // an escape no style writes
		{`"<\u003c"`, "<<"},                // HTML escaped once of twice
		{`"\u00e9\u00E9"`, "\u00e9\u00e9"}, // both cases
		{`"\u00e9` + "\u00e9" + `"`, "éé"}, // ASCII once of twice
		{"\"a\x01\"", "a\x01"},             // a control character as it is
		{`"\ufffd"`, "\xff"},               // not text an encoder is given
		{`"abc`, "abc"},                    // not closed
	} {
		if n, _, ok := match([]byte(c.lit), c.text); ok {
			t.Errorf("%s matched %q (%d bytes)", c.lit, c.text, n)
		}
	}
}

// A message's parts as the importers write them: the text in each part,
// and again in its source block as the client wrote it; a tool call's
// input in the content, the part and the block; a thinking block's text
// twice. Packed over the content, each is written once, and unpacked
// byte for byte.
func TestPackAMessagesParts(t *testing.T) {
	text := strings.Repeat("func (b *Bucket) refill(now time.Time) {\n\tb.tokens += \"rate\" // <a & b>\n}\n", 2000)
	for name, enc := range encoders {
		q, own := encoders["encoding/json, no HTML"](text), enc(text)
		input := `{"file_path":"/src/bucket.go","content":` + string(q) + `}`
		thinking := encoders["encoding/json, no HTML"]("I should read the bucket first, then the clock it reads.")
		docs := map[string]struct {
			content string
			doc     string
		}{
			"a string content": {text, `[{"type":"text","text":` + string(q) + `,"raw":` + string(own) + `}]`},
			"a block":          {text, `[{"type":"text","text":` + string(q) + `,"raw":{"type":"text","text":` + string(own) + `,"cache_control":{"type":"ephemeral"}}}]`},
			"a tool result":    {"[tool result] " + text, `[{"type":"tool_result","text":` + string(q) + `,"tool_call_id":"toolu_1","raw":{"tool_use_id":"toolu_1","type":"tool_result","content":` + string(own) + `,"is_error":false}}]`},
			"a tool call": {"[tool call Write] " + input, `[{"type":"thinking","text":` + string(thinking) + `,"raw":{"type":"thinking","thinking":` + string(thinking) + `,"signature":"sig"}},` +
				`{"type":"tool_call","tool_call_id":"toolu_2","tool_name":"Write","input":` + input + `,"raw":{"type":"tool_use","id":"toolu_2","name":"Write","input":` + input + `}}]`},
		}
		for what, d := range docs {
			n := roundTrip(t, d.content, []byte(d.doc))
			if n > 512 {
				t.Errorf("%s, %s: %d bytes packed of %d: the text is not written once", name, what, n, len(d.doc))
			}
		}
	}
}

// Whatever the text and the document (JSON or not, repeating the text
// or not), the document unpacks byte for byte.
func TestPackRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "<", "é", "\n", `"`, `\`, "/", "\u2028", "😀", "\x01", " ", "{", "}", "[", "]", ",", ":"}
	randText := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	names := []string{"encoding/json", "encoding/json, no HTML", "javascript", "python"}
	for range 2000 {
		text := randText(rng.IntN(200))
		var doc bytes.Buffer
		doc.WriteByte('[')
		for k := range rng.IntN(6) {
			if k > 0 {
				doc.WriteByte(',')
			}
			lo := rng.IntN(len(text) + 1)
			hi := lo + rng.IntN(len(text)-lo+1)
			// Snap to rune boundaries, as a part's text is.
			for lo > 0 && lo < len(text) && !utf8.RuneStart(text[lo]) {
				lo--
			}
			for hi < len(text) && !utf8.RuneStart(text[hi]) {
				hi++
			}
			s := text[lo:hi]
			switch rng.IntN(5) {
			case 0:
				doc.Write(encoders[names[rng.IntN(len(names))]](s))
			case 1:
				fmt.Fprintf(&doc, `{"text":%s,"raw":{"text":%s}}`, encoders[names[rng.IntN(len(names))]](s), encoders[names[rng.IntN(len(names))]](s))
			case 2:
				doc.WriteString(s) // not JSON, perhaps
			case 3:
				fmt.Fprintf(&doc, `{"input":%s}`, text[lo:hi])
			default:
				doc.WriteString(`"` + randText(rng.IntN(40)) + `"`)
			}
		}
		doc.WriteByte(']')
		roundTrip(t, text, doc.Bytes())
	}
}

// Unpack reads any bytes without harm: a packed form cut short or
// changed is an error, never a panic nor a document it did not hold.
func TestUnpackRefusesWhatIsDamaged(t *testing.T) {
	text := strings.Repeat("the refill reads the wall clock <a & b>\n", 20)
	doc := []byte(`[{"type":"text","text":` + string(encoders["encoding/json"](text)) + `,"raw":` + string(encoders["javascript"](text)) + `}]`)
	packed := Make(text, doc).Append(nil, doc)
	for i := range packed {
		if _, err := Unpack(packed[:i], text); err == nil && i > 0 {
			got, _ := Unpack(packed[:i], text)
			if bytes.Equal(got, doc) {
				t.Errorf("cut at %d of %d: read whole", i, len(packed))
			}
		}
		for _, bit := range []byte{1, 0x10, 0x80} {
			b := bytes.Clone(packed)
			b[i] ^= bit
			_, _ = Unpack(b, text)
		}
	}
}

func FuzzPack(f *testing.F) {
	text := "func (b *Bucket) refill() {\n\tb.tokens += \"rate\" // <a & b> é 😀\n}\n"
	f.Add(text, []byte(`[{"type":"text","text":`+string(encoders["encoding/json"](text))+`,"raw":`+string(encoders["python"](text))+`}]`))
	f.Add(text, []byte(`{"input":{"a":1},"raw":{"input":{"a":1}}}`))
	f.Fuzz(func(t *testing.T, text string, doc []byte) {
		roundTrip(t, text, doc)
		// Any bytes as a packed form (of a document small enough that
		// the fuzzer keeps its pace).
		if size, n := binary.Uvarint(doc); n > 0 && size < 1<<20 {
			_, _ = Unpack(doc, text)
		}
	})
}
