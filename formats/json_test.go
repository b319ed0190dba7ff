package formats_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"weft/formats"
	"weft/model"
)

// jsonStrings are strings to decode: escapes of every kind, surrogates
// paired and lone, invalid UTF-8, control characters, cut-off strings.
var jsonStrings = []string{
	``, ` `, `"`, `""`, `"x`, `x"`, `"\u12"`, `"\u12g4"`, `"\x"`, "\"a\tb\"", "\"tab\there\"",
	`"\ud83d\ude00 \ud83d x \ude00 \u00e9 \/ \b\f\n\r\t \" \\"`, "\"\xff\xfe invalid utf-8\"", "\"\u2028\u2029 <&>\"",
	"\"\x01\"", `"12345678\"90"`, `"1234567\\"`, `"abcdefgh"`, `"abcdefghijklmnop\"q"`, `"\"`, `"\\"`, `"a\`,
	`"\ud800"`, `"\udc00\ud800"`, `"\ud800\u0041"`, `"é"`, ` "padded" `, `"a" "b"`, `"a"x`, `null`, `1`, `{}`,
}

// checkString holds DecodeString, DecodeStringAfter and ScanString to
// encoding/json: the
// same verdict on what a string is, the same string decoded.
func checkString(t *testing.T, raw []byte) {
	t.Helper()
	var want string
	wantErr := json.Unmarshal(raw, &want)
	isString := wantErr == nil && bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`))
	got, ok := formats.DecodeString(raw)
	if ok != isString || got != want {
		t.Fatalf("DecodeString(%q) = %q, %v; encoding/json %q, %v", raw, got, ok, want, wantErr)
	}
	// DecodeStringAfter is the same string after its prefix.
	const prefix = "[tool result] "
	if after, ok := formats.DecodeStringAfter(prefix, raw); ok != isString || ok && after != prefix+want {
		t.Fatalf("DecodeStringAfter(%q, %q) = %q, %v; encoding/json %q, %v", prefix, raw, after, ok, want, wantErr)
	}
	// ScanString reads a string at the start of its input, whatever
	// comes after it.
	in := bytes.TrimLeft(raw, " \t\r\n")
	s, end, ok := formats.ScanString(append(bytes.Clone(in), ",1]"...), 0)
	if !ok {
		if isString && len(bytes.TrimSpace(in)) == len(in) {
			t.Fatalf("ScanString(%q) refused a string encoding/json reads", in)
		}
		return
	}
	var first string
	if err := json.Unmarshal(in[:end], &first); err != nil || first != s {
		t.Fatalf("ScanString(%q) = %q up to %d; encoding/json %q, %v", in, s, end, first, err)
	}
}

func TestDecodeString(t *testing.T) {
	for _, s := range jsonStrings {
		checkString(t, []byte(s))
	}
	if s, ok := formats.DecodeString([]byte(` "a\nb" `)); !ok || s != "a\nb" {
		t.Errorf("DecodeString with space around: %q, %v", s, ok)
	}
}

func FuzzDecodeString(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkString(t, data)
	})
}

func TestMarshalParts(t *testing.T) {
	parts := []model.Part{
		{Type: model.PartText, Text: "a \"quoted\" <b>&\n\t\x01 é \u2028", Raw: json.RawMessage(`{"type":"text","text":"x"}`)},
		{Type: model.PartToolCall, ToolCallID: "t1", ToolName: "Bash", Input: json.RawMessage(`{"c":"ls"}`), Raw: json.RawMessage(`{"type":"tool_use"}`)},
		{Type: model.PartToolResult, ToolCallID: "t1", Text: "out", IsError: true, Raw: json.RawMessage(`"s"`)},
		{Type: model.PartImage, MediaType: "image/png", Raw: json.RawMessage(`{}`)},
		{Type: model.PartThinking},
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(parts); err != nil {
		t.Fatal(err)
	}
	got := model.MarshalParts(parts)
	if string(got) != strings.TrimSuffix(want.String(), "\n") {
		t.Errorf("MarshalParts\n %s\nencoding/json\n %s", got, want.String())
	}
	if !reflect.DeepEqual(model.DecodeParts(got), parts) {
		t.Errorf("parts do not decode to themselves: %s", got)
	}
	if model.MarshalParts(nil) != nil {
		t.Errorf("no parts should encode as nil")
	}
}

func TestCutTitle(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"\n\n  first line  \nsecond", "first line"},
		{long, strings.TrimSpace(strings.Repeat("word ", 16)) + "…"},
		{strings.Repeat("é", 80), strings.Repeat("é", 80)},
		{strings.Repeat("é", 81), strings.Repeat("é", 79) + "…"},
	} {
		if got := formats.CutTitle(tt.in); got != tt.want {
			t.Errorf("CutTitle(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestToolInput(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{`""`, `{}`},
		{`"  "`, `{}`},
		{`{ "a" : 1 }`, `{"a":1}`},
		{`"{\"a\": [1, 2]}"`, `{"a":[1,2]}`},
		{`"ls -la <x>"`, `"ls -la <x>"`},
		{`[1, 2]`, `[1,2]`},
	} {
		if got := formats.ToolInput(json.RawMessage(tt.in)); string(got) != tt.want {
			t.Errorf("ToolInput(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestMediaType(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"data:image/png;base64,AAAA", "image/png"},
		{"data:image/gif,xyz", "image/gif"},
		{"https://x.example/a/b.JPG?size=2#top", "image/jpeg"},
		{"clips/v.mp4", "video/mp4"},
		{"dir.d/file", ""},
		{"noext", ""},
	} {
		if got := formats.MediaType(tt.in); got != tt.want {
			t.Errorf("MediaType(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// DecodeString decodes what encoding/json decodes, to the same string,
// and refuses what it refuses: escapes of every kind, surrogate pairs
// and lone halves, invalid UTF-8.
func TestDecodeStringIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", " ", "é", "日", "😀", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`, `\uD83D\uDE00`, `\ud83d`, `\ude00`, `\uD800\u0041`, `\u12`, `\x`, `\`, "\xff", "\xe2\x80", "\u2028", "<>&"}
	for i := range 20000 {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
		lit := b.String()
		var want string
		werr := json.Unmarshal([]byte(lit), &want)
		got, ok := formats.DecodeString([]byte(lit))
		if ok != (werr == nil) || ok && got != want {
			t.Fatalf("literal %d %q: got %q (%v), encoding/json %q (%v)", i, lit, got, ok, want, werr)
		}
	}
}

// A title is a string of its own: the session keeps it for as long as it
// lives, and a part of the message it was cut from would keep the whole
// message (megabytes, perhaps) alive with it.
func TestCutTitleKeepsNothingOfTheText(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, s := range []string{"Fix the limiter.\n" + long, "  Fix the limiter.  ", long} {
		title := formats.CutTitle(s)
		start, end := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(s)))+uintptr(len(s))
		if p := uintptr(unsafe.Pointer(unsafe.StringData(title))); p >= start && p < end {
			t.Errorf("the title %.20q points into the text it was cut from", title)
		}
	}
}

// KeepParts copies each part's Input and Raw into a buffer of the
// parts' own, but one of lend bytes or more, which stays where it lies;
// plain text keeps no parts.
func TestKeepPartsLendsOnlyLargeBlocks(t *testing.T) {
	body := []byte(`{"type":"tool_use","id":"t","name":"f","input":{"a":1}}` + `{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat("x", 200) + `"}`)
	call, result := body[:55], body[55:]
	input := call[bytes.Index(call, []byte(`{"a"`)) : len(call)-1]
	parts := func() []model.Part {
		return []model.Part{
			{Type: model.PartToolCall, ToolCallID: "t", ToolName: "f", Input: input, Raw: call},
			{Type: model.PartToolResult, ToolCallID: "t", Text: strings.Repeat("x", 200), Raw: result},
		}
	}
	within := func(v []byte) bool {
		if len(v) == 0 {
			return false
		}
		p, b := uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&body[0]))
		return p >= b && p < b+uintptr(len(body))
	}
	for _, c := range []struct {
		lend     int
		lentCall bool
		lentRes  bool
	}{{0, false, false}, {len(body) / 2, false, true}, {1, true, true}} {
		kept := formats.KeepParts(parts(), c.lend)
		if within(kept[0].Raw) != c.lentCall || within(kept[0].Input) != c.lentCall || within(kept[1].Raw) != c.lentRes {
			t.Errorf("lend %d: call kept in the body %v (input %v), result %v; want %v, %v", c.lend, within(kept[0].Raw), within(kept[0].Input), within(kept[1].Raw), c.lentCall, c.lentRes)
		}
		if string(kept[0].Raw) != string(call) || string(kept[0].Input) != `{"a":1}` || string(kept[1].Raw) != string(result) {
			t.Errorf("lend %d: kept %s %s %s", c.lend, kept[0].Raw, kept[0].Input, kept[1].Raw)
		}
	}
	if kept := formats.KeepParts([]model.Part{{Type: model.PartText, Text: "plain"}}, 0); kept != nil {
		t.Errorf("plain text kept parts %+v", kept)
	}
}
