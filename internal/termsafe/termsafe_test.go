package termsafe

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The sequences an imported thread may carry, each shown, none left raw.
var hostile = []struct{ name, in, text, line string }{
	{"title", "\x1b]0;pwned\x07", "␛]0;pwned␇", "␛]0;pwned␇"},
	{"clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07", "␛]52;c;cm0gLXJmIH4=␇", "␛]52;c;cm0gLXJmIH4=␇"},
	{"clear", "a\x1b[2Jb", "a␛[2Jb", "a␛[2Jb"},
	{"overwrite", "ok\r\x1b[1A\x1b[K", "ok␍␛[1A␛[K", "ok␍␛[1A␛[K"},
	{"c1 csi", "x\u009b2Jy", `x\u009b2Jy`, `x\u009b2Jy`},
	{"del and nul", "a\x7fb\x00", "a␡b␀", "a␡b␀"},
	{"not utf-8", "a\x9bb", `a\x9bb`, `a\x9bb`},
	{"lines", "one\ntwo\tthree\r\nfour", "one\ntwo\tthree\nfour", "one␊two␉three␍␊four"},
	{"plain", "héllo → wörld 🙂", "héllo → wörld 🙂", "héllo → wörld 🙂"},
	// Characters that reorder what follows them or hide between letters:
	// a title "invoice \u202efdp.exe" would read "invoice exe.pdf".
	{"bidi override", "invoice \u202efdp.exe", `invoice \u202efdp.exe`, `invoice \u202efdp.exe`},
	{"bidi embeddings", "\u202aa\u202bb\u202cc\u202dd", `\u202aa\u202bb\u202cc\u202dd`, `\u202aa\u202bb\u202cc\u202dd`},
	{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`, `\u2066a\u2067b\u2068c\u2069`},
	{"bidi marks", "a\u200eb\u200fc\u061cd", `a\u200eb\u200fc\u061cd`, `a\u200eb\u200fc\u061cd`},
	{"zero width", "pay\u200bpal\u200c\u200d\u2060x\ufeff", `pay\u200bpal\u200c\u200d\u2060x\ufeff`, `pay\u200bpal\u200c\u200d\u2060x\ufeff`},
	// A joiner between two pictographs draws one emoji (a family, a
	// coder): it stays, as it hides nothing.
	{"emoji sequences", "👨\u200d👩\u200d👧 👩🏽\u200d💻 🏳\ufe0f\u200d🌈", "👨\u200d👩\u200d👧 👩🏽\u200d💻 🏳\ufe0f\u200d🌈", "👨\u200d👩\u200d👧 👩🏽\u200d💻 🏳\ufe0f\u200d🌈"},
	{"joiner beside one pictograph", "👨\u200dx", `👨\u200dx`, `👨\u200dx`},
	{"joiner beside bytes not utf-8", "\xf0\u200d\xb1", `\xf0\u200d\xb1`, `\xf0\u200d\xb1`},
	{"arabic and hebrew", "مرحبا שלום", "مرحبا שלום", "مرحبا שלום"},
}

func TestTextAndLine(t *testing.T) {
	for _, tt := range hostile {
		if got := Text(tt.in); got != tt.text {
			t.Errorf("%s: Text(%q) = %q, want %q", tt.name, tt.in, got, tt.text)
		}
		if got := Line(tt.in); got != tt.line {
			t.Errorf("%s: Line(%q) = %q, want %q", tt.name, tt.in, got, tt.line)
		}
		if got := Line(tt.in); !Safe(got) {
			t.Errorf("%s: Line(%q) = %q is not safe", tt.name, tt.in, got)
		}
		if Safe(tt.in) != (tt.in == tt.line) {
			t.Errorf("%s: Safe(%q) = %v", tt.name, tt.in, Safe(tt.in))
		}
		for _, c := range Text(tt.in) {
			if isControl(c) && c != '\n' && c != '\t' {
				t.Errorf("%s: Text left %U in %q", tt.name, c, Text(tt.in))
			}
		}
		if got := Styled(tt.in); got != strings.ReplaceAll(tt.line, "␊", "\n") && !strings.ContainsAny(tt.in, "\t\r") {
			t.Errorf("%s: Styled(%q) = %q", tt.name, tt.in, got)
		}
	}
}

// Every character that reorders or hides is shown, whichever way the
// text reaches the terminal.
func TestReorderingAndHidden(t *testing.T) {
	var all []rune
	for r := rune(0x202a); r <= 0x202e; r++ {
		all = append(all, r)
	}
	for r := rune(0x2066); r <= 0x2069; r++ {
		all = append(all, r)
	}
	all = append(all, 0x200e, 0x200f, 0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff)
	for _, r := range all {
		in := "a" + string(r) + "b"
		want := fmt.Sprintf(`a\u%04xb`, r)
		for name, f := range map[string]func(string) string{"Text": Text, "Line": Line, "Styled": Styled} {
			if got := f(in); got != want {
				t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
			}
		}
		if Safe(in) {
			t.Errorf("Safe(%q) = true", in)
		}
		b, _ := json.Marshal(in)
		if got := JSON(b); strings.ContainsRune(string(got), r) {
			t.Errorf("JSON(%s) left %U: %s", b, r, got)
		} else {
			var back string
			if err := json.Unmarshal(got, &back); err != nil || back != in {
				t.Errorf("JSON(%s) = %s changed the meaning (%v)", b, got, err)
			}
		}
	}
	// A styled frame keeps its colours around a shown mark.
	if got, want := Styled("\x1b[31mab\u202ecd\x1b[0m"), "\x1b[31mab\\u202ecd\x1b[0m"; got != want {
		t.Errorf("Styled = %q, want %q", got, want)
	}
}

// JSON escapes what encoding/json lets through, and means the same.
func TestJSON(t *testing.T) {
	in := map[string]string{"t": "a\x7fb\u0085c\u009bd\u00a0é\x1b[2J"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(b)
	if strings.ContainsAny(string(got), "\x7f\u0085\u009b\x1b") {
		t.Errorf("JSON left a control in %q", got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["t"] != in["t"] {
		t.Errorf("JSON changed the meaning: %q -> %q (%v)", b, back["t"], err)
	}
	plain := []byte(`{"a":"é ü \u001b"}`)
	if got := JSON(plain); &got[0] != &plain[0] {
		t.Errorf("JSON copied a text it had nothing to do to")
	}
}

func FuzzLine(f *testing.F) {
	for _, tt := range hostile {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := Line(s); !Safe(got) {
			t.Errorf("Line(%q) = %q is not safe", s, got)
		}
		for _, c := range Text(s) {
			if isControl(c) && c != '\n' && c != '\t' {
				t.Errorf("Text(%q) left %U", s, c)
			}
		}
	})
}

// Styled keeps the styling a screen draws with and shows the rest.
func TestStyled(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"\x1b[1;38;2;10:20:30mbold\x1b[m\n\x1b[0m", "\x1b[1;38;2;10:20:30mbold\x1b[m\n\x1b[0m"},
		{"\x1b[31mred\x1b]0;pwned\x07 \x1b[2J\r\x1b[1A\x1b[K", "\x1b[31mred␛]0;pwned␇ ␛[2J␍␛[1A␛[K"},
		{"tab\tand\u009b and \x9b", `tab␉and\u009b and \x9b`},
		{"\x1b[", "␛["},
	} {
		if got := Styled(tt.in); got != tt.want {
			t.Errorf("Styled(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := Styled(tt.in); !styledSafe(got) {
			t.Errorf("Styled(%q) = %q is not safe", tt.in, got)
		}
	}
}
