package jsonpack

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"weft/model"
)

// built writes parts with a Builder over text, and checks that what it
// made unpacks to what model.AppendParts writes, byte for byte; it
// returns the stored length.
func built(t *testing.T, text string, parts []model.Part) int {
	t.Helper()
	want, ok := model.AppendParts(nil, parts, nil)
	b := NewBuilder(text)
	wrote := model.WriteParts(b, parts)
	plan, doc, fine := b.Finish()
	if ok != (wrote && fine) {
		t.Fatalf("parts %+v: AppendParts says %v, the builder %v", parts, ok, wrote && fine)
	}
	if !ok {
		return 0
	}
	if !plan.Packs() {
		if !bytes.Equal(doc, want) {
			t.Fatalf("unpacked, the builder wrote\n%s\nnot\n%s", doc, want)
		}
		return len(doc)
	}
	return unpacksTo(t, plan, nil, text, want)
}

// A tool result as the Messages API sends it: its text is the content,
// in the part and in its block, written by any client's encoder. Built,
// each is a hole: the stored parts are a few dozen bytes, whatever the
// text's length.
func TestBuilderWritesATextOnce(t *testing.T) {
	text := strings.Repeat("func (b *Bucket) refill(now time.Time) {\n\tb.tokens += \"rate\" // <a & b>\n}\n", 2000)
	for name, enc := range encoders {
		raw := `{"type":"tool_result","tool_use_id":"toolu_01","content":` + string(enc(text)) + `,"is_error":false}`
		parts := []model.Part{{Type: model.PartToolResult, ToolCallID: "toolu_01", Text: text, Raw: json.RawMessage(raw)}}
		if n := built(t, text, parts); n > 200 {
			t.Errorf("%s: a %d-byte tool result stored its parts in %d bytes", name, len(text), n)
		}
		// Spaced as Python writes it: compacted, as AppendParts does.
		spaced := strings.ReplaceAll(raw, `":`, `": `)
		parts[0].Raw = json.RawMessage(spaced)
		if n := built(t, text, parts); n > 200 {
			t.Errorf("%s, spaced: stored in %d bytes", name, n)
		}
	}
	// Two parts, each a stretch of the content, the second after the
	// first.
	a, b := strings.Repeat("first part's text. ", 10), strings.Repeat("second part's text. ", 10)
	parts := []model.Part{
		{Type: model.PartText, Text: a, Raw: json.RawMessage(`{"type":"text","text":` + string(model.AppendQuoted(nil, a)) + `}`)},
		{Type: model.PartText, Text: b, Raw: json.RawMessage(`{"type":"text","text":` + string(model.AppendQuoted(nil, b)) + `}`)},
	}
	if n := built(t, a+"\n\n"+b, parts); n > 160 { // 4 holes and the keys; 870 bytes written out
		t.Errorf("two texts stored in %d bytes", n)
	}
}

// Whatever the parts hold (any characters, values spaced or not, not
// JSON at all, texts that are in the content or not), the builder's
// form unpacks to what AppendParts writes, and refuses what it refuses.
func TestBuilderIsAppendParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", " ", "<", "&", "é", "日本", "😀", "\n", "\t", `"`, `\`, "/", "\u2028", "\x01", "\xff", strings.Repeat("long stretch ", 4)}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(16) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	types := []model.PartType{model.PartText, model.PartThinking, model.PartToolCall, model.PartToolResult, model.PartImage, model.PartOther}
	for range 3000 {
		var content strings.Builder
		parts := make([]model.Part, rng.IntN(4))
		for k := range parts {
			p := &parts[k]
			*p = model.Part{Type: types[rng.IntN(len(types))], Text: str(), IsError: rng.IntN(3) == 0}
			if rng.IntN(2) == 0 {
				content.WriteString(p.Text + "\n")
			}
			if rng.IntN(2) == 0 {
				p.ToolCallID, p.ToolName = str(), str()
			}
			enc := encoders["javascript"]
			if rng.IntN(2) == 0 {
				enc = encoders["python"]
			}
			switch rng.IntN(5) {
			case 0:
				p.Raw = json.RawMessage(`{"type":"x","text":` + string(enc(p.Text)) + `,"n":[1, 2]}`)
			case 1:
				p.Input = json.RawMessage(`{"a": ` + string(enc(str())) + `}`)
			case 2:
				p.Raw = json.RawMessage(`{"a":`)
			case 3:
				p.Raw = json.RawMessage(`[` + string(enc(p.Text)) + `,` + string(enc(p.Text)) + `]`)
			}
		}
		built(t, content.String(), parts)
	}
}

// Whatever a part holds and whatever the content, the builder's form
// unpacks to what AppendParts writes, or both refuse.
func FuzzBuilder(f *testing.F) {
	f.Add("the output of a tool, long enough to be a hole", `{"type":"tool_result","content":"the output of a tool, long enough to be a hole"}`, "[tool result] the output of a tool, long enough to be a hole")
	f.Add("caf\u00e9 \u2028 <&> \"q\" \\ \x01", `["caf\u00e9 \u2028 <&> \"q\" \\ \u0001", 1, {"a": null}]`, "caf\u00e9 \u2028 <&> \"q\" \\ \x01 and more caf\u00e9 \u2028 <&>")
	f.Add("", `{"a":`, "")
	f.Fuzz(func(t *testing.T, text, raw, content string) {
		parts := []model.Part{{Type: model.PartToolResult, Text: text, Raw: json.RawMessage(raw)}, {Type: model.PartText, Text: content}}
		built(t, content, parts)
	})
}
