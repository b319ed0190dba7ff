package model

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// encodingJSON is how parts were written before AppendParts: through
// encoding/json, without HTML escaping.
func encodingJSON(parts []Part) json.RawMessage {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(parts) != nil {
		return EncodeParts(parts)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// MarshalParts writes what encoding/json writes for parts, byte for byte:
// every field, every character of a string, raw values compacted, and
// nothing for parts whose raw value is not JSON.
func TestMarshalPartsIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", " ", "<", ">", "&", "é", "日本", "😀", "\n", "\r", "\t", "\b", "\f", `"`, `\`, "/", "\u2028", "\u2029", "\x00", "\x1f", "\x7f", "\xff", "\xe2\x80"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	raws := []string{"", `{"a":1}`, ` { "a" : [1, 2] , "b":"<x>" } `, `"text"`, `[1,"\u00e9"]`, `null`, `{"a":`, `nope`}
	types := []PartType{PartText, PartThinking, PartToolCall, PartToolResult, PartImage, PartOther}
	for i := range 5000 {
		parts := make([]Part, rng.IntN(4))
		for k := range parts {
			parts[k] = Part{Type: types[rng.IntN(len(types))], Text: str(), IsError: rng.IntN(2) == 0}
			if rng.IntN(2) == 0 {
				parts[k].ToolCallID, parts[k].ToolName, parts[k].MediaType = str(), str(), str()
			}
			if r := raws[rng.IntN(len(raws))]; r != "" {
				parts[k].Input = json.RawMessage(r)
			}
			if r := raws[rng.IntN(len(raws))]; r != "" {
				parts[k].Raw = json.RawMessage(r)
			}
		}
		if got, want := MarshalParts(parts), encodingJSON(parts); !bytes.Equal(got, want) && len(parts) > 0 {
			t.Fatalf("parts %d: %+v\nwrote %s\nencoding/json writes %s", i, parts, got, want)
		}
	}
}
