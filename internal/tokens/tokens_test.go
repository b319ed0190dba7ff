package tokens

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// o200kPattern is the split pattern of o200k_base in
// github.com/tiktoken-go/tokenizer v0.10.0 (codec/o200k_base.go). Compiling
// the same string gets the same engine the codec runs: the codec package
// registers its generated matcher for this pattern with regexp2.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var splitRE = func() *regexp2.Regexp {
	_ = codec() // make sure the codec package, and its engine, is loaded
	return regexp2.MustCompile(o200kPattern, regexp2.None)
}()

// codecCount is the reference: the codec's own count of the whole string.
func codecCount(t testing.TB, s string) int {
	t.Helper()
	n, err := codec().Count(s)
	if err != nil {
		t.Fatalf("codec.Count(%q): %v", s, err)
	}
	return n
}

type tokSpan struct {
	start, end int
	kind       int
}

// splitSpans is nextSpan run over all of s.
func splitSpans(s string) []tokSpan {
	var out []tokSpan
	for p := 0; p < len(s); {
		end, kind := nextSpan(s, p)
		if end <= p || end > len(s) {
			panic("nextSpan made no progress")
		}
		out = append(out, tokSpan{p, end, kind})
		p = end
	}
	return out
}

// regexMatches returns the byte ranges of the split regex's matches in s.
func regexMatches(t testing.TB, s string) [][2]int {
	t.Helper()
	var out [][2]int
	m, err := splitRE.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = splitRE.FindNextMatch(m) {
		i, n := m.ByteRange()
		out = append(out, [2]int{i, i + n})
	}
	if err != nil {
		t.Fatalf("regex on %q: %v", s, err)
	}
	return out
}

// checkSpans checks nextSpan's spans of s against the regex's matches: the
// spans tile s, and its pieces are the regex's matches, in order, one for
// one (so the skips are what the regex steps over). On ASCII text the fast
// path does it all. runePiece, the general path that nextSpan takes only
// around non-ASCII bytes, must give the same matches on its own, on any
// text.
func checkSpans(t testing.TB, s string) {
	t.Helper()
	spans := splitSpans(s)
	var sb strings.Builder
	for _, sp := range spans {
		sb.WriteString(s[sp.start:sp.end])
	}
	if sb.String() != s {
		t.Fatalf("spans of %q do not tile it: %v", s, spans)
	}
	var pieces [][2]int
	for _, sp := range spans {
		if sp.kind == spanPiece {
			pieces = append(pieces, [2]int{sp.start, sp.end})
		} else if s[sp.start] != 0x7f {
			t.Errorf("%q: skipped %q, not a DEL", s, s[sp.start:sp.end])
		}
		if isASCII(s) && asciiPiece(s, sp.start) != sp.end {
			t.Errorf("%q: the ASCII path gave up at %d", s, sp.start)
		}
	}
	matches := regexMatches(t, s)
	if !slices.Equal(pieces, matches) {
		t.Fatalf("%q: pieces %q, regex matches %q", s, matchStrings(s, pieces), matchStrings(s, matches))
	}

	pieces = pieces[:0]
	for p := 0; p < len(s); {
		end, ok := runePiece(s, p)
		if ok {
			pieces = append(pieces, [2]int{p, end})
		}
		p = end
	}
	if !slices.Equal(pieces, matches) {
		t.Fatalf("%q: runePiece gives %q, regex matches %q", s, matchStrings(s, pieces), matchStrings(s, matches))
	}
}

func matchStrings(s string, ms [][2]int) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = s[m[0]:m[1]]
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

var trickyTokenInputs = []string{
	"",
	"a", "A", " ", "\n", "\t", "1", "!", "'", "\x00", "\x7f",
	// contractions, both cases
	"don't", "DON'T", "Don'T", "I'm", "I'M", "you're", "YOU'RE", "you'rE",
	"we've", "WE'VE", "she'll", "SHE'LL", "she'Ll", "he'd", "HE'D",
	"it's", "IT'S", "can't", "CAN'T", "'s", "'S", "x'", "x'r", "x'l", "x'lx",
	"rock'n'roll", "O'Neil", "o'clock", "the dogs' bones", "it''s", "'tis",
	" 'twas", "l'l'l", "a'sb", "ab'LLc", "ab'ree", "ab'vE!", "'''",
	// numbers of 1 to 7 digits, and mixed
	"1", "12", "123", "1234", "12345", "123456", "1234567",
	"abc123", "123abc", "a1b2c3", "x1234567y", "3.14159", "1,000,000",
	"v1.2.3", "0x1F", "2024-01-15T10:30:00Z", " 42", "  42", "\t42",
	// whitespace runs
	"  hello", "   hello", "hello  ", "hello   ", "  ", "   ", "a \t b",
	"a\t\tb", " \t\n", "\n\n\n", "\r\n", "\r\n\r\n", "a\r\nb", "a \r\n b",
	"a  \n  \n  b", "x\n \n \ny", "x \n\t\n y", "\n x", " \n", "  \n", "\n ",
	"a\n\n\nb", "\t\tindented", "\v\fform", "\f", "a\vb", "end.\n", "end. ",
	"a \x7f b", "a\x7f", "\x7f\x7f", "!\x7f!", " \x7f", "\x7f ", "ab\x7fcd",
	// punctuation runs with newlines and slashes
	"!!!", "...\n", "?!\n\n", "--/", "//\n//", "!\n/\n/x", " !!\n", " ...",
	"a, b; c: d.", "(hello)", "[World]", "{x}", "\"quoted\"", "'single'",
	"-- comment", "/* c */", "// line\n", "#!/bin/sh\n", "a//b", "x/\n/y",
	"@user", "#tag", "$var", "100%", "a&b", "<tag>", "</tag>", "=>", "!=",
	// code
	"func main() {\n\tfmt.Println(\"hi\")\n}\n",
	"for i := 0; i < 10; i++ {\n\t\tx += i\n\t}",
	"def f(x):\n    return x ** 2  # square\n",
	"if (a && b) || !c { return nil, err }",
	"    self.assertEqual(result['key'], 42)\n",
	"SELECT id, name FROM users WHERE age >= 21;",
	// JSON, URLs
	`{"name": "weft", "version": 1, "tags": ["a", "b"], "ok": true}`,
	`[{"id":1},{"id":22},{"id":333}]`,
	"https://example.com/path/to/page?query=1&x=y#frag",
	"see http://foo.bar/baz_qux-123.html for details",
	// CamelCase, ALLCAPS, leading punctuation
	"CamelCase", "camelCase", "HTTPServer", "XMLHttpRequest", "getHTTPResponseCode",
	"ALLCAPS WORDS HERE", "NASA's", "iPhone", "eBay", "A", "AB", "ABc", "aBC",
	"(Hello", "\"Quote", "...Wait", "-flag", "--long-flag", "_private",
	"__init__", "@Override", "#Include", "$HOME", "~user",
	// prose
	"The quick brown fox jumps over the lazy dog.",
	"Hello, world! How are you doing today? I'm fine, thanks.",
	"  Leading spaces and trailing spaces   ",
	"Line one\nLine two\r\nLine three\n\n\nLine four",
	// non-ASCII
	"café", "naïve résumé", "don’t", "“quoted”", "em—dash", "emoji 🙂 here",
	"日本語のテキスト", "Привет, мир!", "a\u00a0b", "a\u0085b", "x\u2028y",
	"ſ", "it'ſ", "IT'ſ ok", "x²", "12³", "é1", "1é", " é", "\té", "!é",
	"a\u0301b", "e\u0301 ok", "\xff", "a\xffb", "\xc3", "ok \xe2\x80 bad",
	"mixed ASCII then 漢字 then ASCII again, and 123 numbers.",
	"tab\t🙂\tsep", "  \u3000  x", "\n\u00a0\n", "A\u0300B", "Ǆx", "ǅx",
	// long runs
	strings.Repeat(" \n", 500), strings.Repeat("\n\t", 500) + "x", strings.Repeat(" ", 300),
	strings.Repeat(" \u00a0\n", 200), strings.Repeat("ab", 400), strings.Repeat("=", 200) + "\n",
}

func TestCountTricky(t *testing.T) {
	t.Parallel()
	for _, s := range trickyTokenInputs {
		if got, want := Count(s), codecCount(t, s); got != want {
			t.Errorf("Count(%q) = %d, codec says %d", s, got, want)
		}
		checkSpans(t, s)
	}
}

// TestCountSingleBytes: Count counts a one-byte piece as one
// token without asking the codec.
func TestCountSingleBytes(t *testing.T) {
	t.Parallel()
	for b := range 0x7f {
		if got, want := Count(string(rune(b))), codecCount(t, string(rune(b))); got != want || want != 1 {
			t.Errorf("byte %#x: got %d, codec %d", b, got, want)
		}
	}
	if got := Count("\x7f"); got != 0 {
		t.Errorf("DEL: got %d, want 0", got)
	}
}

// randomText draws from an alphabet weighted towards the characters the
// splitter treats specially; with unicode it mixes in non-ASCII runes.
func randomText(r *rand.Rand, n int, unicode bool) string {
	const ascii = "aAbBzZsStTrReEvVmMlLdD'''    \t\n\n\r\v\f019!./,-_\"(\x7f\x00"
	uni := []string{"é", "É", "ſ", "²", "\u00a0", "\u0085", "\u3000", "—", "’", "🙂", "\u0301", "日", "\xff", "\xe2\x80"}
	var sb strings.Builder
	for sb.Len() < n {
		if unicode && r.IntN(8) == 0 {
			sb.WriteString(uni[r.IntN(len(uni))])
			continue
		}
		c := ascii[r.IntN(len(ascii))]
		k := 1
		if r.IntN(4) == 0 {
			k = 1 + r.IntN(4)
		}
		for range k {
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// TestSplitMatchesRegex compares the hand-written splitter with the codec's
// regex on many random strings, ASCII and not, and their counts.
func TestSplitMatchesRegex(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	iters := 20000
	if testing.Short() {
		iters = 2000
	}
	for i := range iters {
		s := randomText(r, 1+r.IntN(40), i%2 == 1)
		checkSpans(t, s)
		if got, want := Count(s), codecCount(t, s); got != want {
			t.Fatalf("Count(%q) = %d, codec says %d", s, got, want)
		}
	}
}

// TestSplitBenchText checks the benchmark corpus, which is realistic text.
func TestSplitBenchText(t *testing.T) {
	t.Parallel()
	for _, set := range benchSets() {
		for _, s := range set.msgs[:200] {
			checkSpans(t, s)
			if got, want := Count(s), codecCount(t, s); got != want {
				t.Fatalf("%s: Count(%q) = %d, codec says %d", set.name, s, got, want)
			}
		}
	}
}

// TestCountConcurrent hammers the cache from several goroutines (run
// it with -race).
func TestCountConcurrent(t *testing.T) {
	t.Parallel()
	msgs := benchSets()[0].msgs[:300]
	want := make([]int, len(msgs))
	for i, s := range msgs {
		want[i] = codecCount(t, s)
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range msgs {
				k := (i + g*77) % len(msgs)
				if got := Count(msgs[k]); got != want[k] {
					t.Errorf("Count(%q) = %d, want %d", msgs[k], got, want[k])
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

func FuzzCountTokens(f *testing.F) {
	for _, s := range trickyTokenInputs {
		f.Add(s)
	}
	// Long pieces, which Count merges itself rather than through the codec.
	r := rand.New(rand.NewPCG(3, 5))
	for _, in := range longInputs() {
		f.Add(in.gen(3000))
	}
	for range 8 {
		f.Add(randomPiece(r, 100+r.IntN(3000)))
	}
	f.Fuzz(func(t *testing.T, s string) {
		// The references, the codec and its regex, take time quadratic in
		// the length of a whitespace run with line breaks in it; long
		// inputs only slow the fuzzer down.
		if len(s) > 4096 {
			s = s[:4096]
		}
		if got, want := Count(s), codecCount(t, s); got != want {
			t.Fatalf("Count(%q) = %d, codec says %d (valid UTF-8: %v)", s, got, want, utf8.ValidString(s))
		}
		checkSpans(t, s)
		// A run of the first bytes over and over makes long pieces of any
		// input.
		if s != "" {
			head := s[:min(len(s), 1+int(s[0])%4)]
			run := strings.Repeat(head, 2048/len(head))
			if got, want := Count(run), codecCount(t, run); got != want {
				t.Fatalf("Count(%q) = %d, codec says %d", run, got, want)
			}
		}
	})
}

// The corpus of BenchmarkCountTokens, also checked by the tests above:
// deterministic, varied 200-byte messages of English prose, code, and prose
// with a little non-ASCII, so a benchmark never counts the same string twice
// in a row and the piece cache sees a long tail.

const benchMsgLen = 200

var commonWords = strings.Fields(`the of and to a in is it you that he was for on are
with as I his they be at one have this from or had by hot word but what some
we can out other were all there when up use your how said an each she which
do their time if will way about many then them write would like so these her
long make thing see him two has look more day could go come did number sound
no most people my over know water than call first who may down side been now
find any new work part take get place made live where after back little only
round man year came show every good me give our under name very through just
form sentence great think say help low line differ turn cause much mean before
move right boy old too same tell does set three want air well also play small
end put home read hand port large spell add even land here must big high such
follow act why ask men change went light kind off need house picture try us
again animal point mother world near build self earth father head stand own
page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross
farm hard start might story saw far sea draw left late run don't while press
close night real life few north open seem together next white children begin
got walk example ease paper group always music those both mark often letter
until mile river car feet care second book carry took science eat room friend
began idea fish mountain stop once base hear horse cut sure watch color face
wood main enough plain girl usual young ready above ever red list though feel
talk bird soon body dog family direct pose leave song measure door product
black short numeral class wind question happen complete ship area half rock
order fire south problem piece told knew pass since top whole king space heard
best hour better true during hundred five remember step early hold west ground
interest reach fast verb sing listen six table travel less morning ten simple
several vowel toward war lay against pattern slow center love person money
serve appear road map rain rule govern pull cold notice voice unit power town
fine certain fly fall lead cry dark machine note wait plan figure star box noun
field rest correct able pound done beauty drive stood contain front teach week
final gave green oh quick develop ocean warm free minute strong special mind
behind clear tail produce fact street inch multiply nothing course stay wheel
full force blue object decide surface deep moon island foot system busy test
record boat common gold possible plane stead dry wonder laugh thousand ago ran
check game shape equate miss brought heat snow tire bring yes distant fill
east paint language among I'm it's you're we've they'll she'd can't won't
function server request response error value config token message thread
session import export parse render branch commit merge model assistant user`)

var syllables = strings.Fields(`ka lo mi ne ru sa ti vo xe zu bra cli dro fle gri
pla sto tre qua zen mor tan vel rix dol pen sul gar bin cor fex lum nat`)

// zipfWord draws a word: mostly common words, with a long tail of made-up
// ones, Zipf-distributed over a vocabulary of tens of thousands.
func zipfWord(r *rand.Rand, z *rand.Zipf) string {
	k := int(z.Uint64())
	if k < len(commonWords) {
		return commonWords[k]
	}
	var sb strings.Builder
	for k > 0 {
		sb.WriteString(syllables[k%len(syllables)])
		k /= len(syllables)
	}
	return sb.String()
}

func benchProse(r *rand.Rand, z *rand.Zipf, unicode bool) string {
	var sb strings.Builder
	start := true
	for sb.Len() < benchMsgLen {
		w := zipfWord(r, z)
		switch {
		case start:
			w = strings.ToUpper(w[:1]) + w[1:]
			start = false
		case r.IntN(40) == 0:
			w = strings.ToUpper(w)
		case r.IntN(25) == 0:
			w = fmt.Sprint(r.IntN(100000))
		}
		if unicode && r.IntN(12) == 0 {
			w = []string{"café", "naïve", "“" + w + "”", w + "’s", w + " —", "🙂", "über", "résumé"}[r.IntN(8)]
		}
		sb.WriteString(w)
		switch n := r.IntN(20); {
		case n == 0:
			sb.WriteString(". ")
			start = true
		case n == 1:
			sb.WriteString(", ")
		case n == 2:
			sb.WriteString("\n\n")
			start = true
		case n == 3:
			sb.WriteString("? ")
			start = true
		case n == 4:
			sb.WriteString(": ")
		default:
			sb.WriteByte(' ')
		}
	}
	return sb.String()[:benchMsgLen]
}

func benchCode(r *rand.Rand, z *rand.Zipf) string {
	ident := func() string {
		a, b := zipfWord(r, z), zipfWord(r, z)
		switch r.IntN(4) {
		case 0:
			return a
		case 1:
			return a + "_" + b
		case 2:
			return a + strings.ToUpper(b[:1]) + b[1:]
		default:
			return strings.ToUpper(a[:1]) + a[1:] + strings.ToUpper(b[:1]) + b[1:]
		}
	}
	var sb strings.Builder
	depth := 1
	for sb.Len() < benchMsgLen {
		sb.WriteString(strings.Repeat("\t", depth))
		switch r.IntN(7) {
		case 0:
			fmt.Fprintf(&sb, "if %s != nil {\n", ident())
			depth = min(depth+1, 4)
		case 1:
			fmt.Fprintf(&sb, "%s := %s.%s(%s, %d)\n", ident(), ident(), ident(), ident(), r.IntN(5000))
		case 2:
			fmt.Fprintf(&sb, "return fmt.Errorf(\"%s %s: %%w\", err)\n", zipfWord(r, z), zipfWord(r, z))
		case 3:
			fmt.Fprintf(&sb, "// %s %s the %s.\n", ident(), zipfWord(r, z), zipfWord(r, z))
		case 4:
			fmt.Fprintf(&sb, "for i := 0; i < len(%s); i++ {\n", ident())
			depth = min(depth+1, 4)
		case 5:
			sb.WriteString("}\n")
			depth = max(depth-1, 1)
		default:
			fmt.Fprintf(&sb, "%s[\"%s\"] = %s{%s: %q}\n", ident(), zipfWord(r, z), ident(), ident(), zipfWord(r, z))
		}
	}
	return sb.String()[:benchMsgLen]
}

type benchSet struct {
	name string
	msgs []string
}

// benchSets returns 4096 messages of each kind (english, code, unicode),
// built once.
var benchSets = sync.OnceValue(func() []benchSet {
	const n = 4096
	r := rand.New(rand.NewPCG(7, 11))
	z := rand.NewZipf(r, 1.1, 4, 40000)
	sets := []benchSet{{name: "english"}, {name: "code"}, {name: "unicode"}}
	for range n {
		sets[0].msgs = append(sets[0].msgs, benchProse(r, z, false))
		sets[1].msgs = append(sets[1].msgs, benchCode(r, z))
		sets[2].msgs = append(sets[2].msgs, benchProse(r, z, true))
	}
	return sets
})

// TestPackShort: packShort keeps every byte of a key and its length, so two
// keys share a packing only if they are equal.
func TestPackShort(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		n := 1 + r.IntN(shortKeyMax)
		key := make([]byte, n)
		for i := range key {
			key[i] = byte(r.IntN(256))
			if r.IntN(3) == 0 {
				key[i] = 0
			}
		}
		a, b := packShort(string(key))
		if b&0xf != 0 || int(b>>4&0xf) != n {
			t.Fatalf("%q: length nibble of %#x", key, b)
		}
		got := make([]byte, n)
		for i := range got {
			if i < 8 {
				got[i] = byte(a >> (8 * i))
			} else {
				got[i] = byte(b >> (8 * (i - 8 + 1)))
			}
		}
		if string(got) != string(key) || n <= 8 && b>>8 != 0 || n < 8 && a>>(8*n) != 0 {
			t.Fatalf("%q packs to %#x %#x", key, a, b)
		}
	}
}

// TestShortCache fills a table past its limit: lookups give back what was
// put, never another key's count, and the full table is replaced. It
// swaps the table every Count uses, so it is not parallel.
func TestShortCache(t *testing.T) {
	old := shortTable.Load()
	defer shortTable.Store(old)
	tab := new(shortCache)
	shortTable.Store(tab)
	key := func(i int) string { return fmt.Sprintf("k%x", i) }
	for i := range shortMaxFill {
		a, b := packShort(key(i))
		tab.put(a, b, i%16)
	}
	missing := 0
	for i := range shortMaxFill {
		a, b := packShort(key(i))
		n, ok := tab.get(a, b)
		if !ok {
			missing++ // possible: the probe window was full
		} else if n != i%16 {
			t.Fatalf("%q: got %d, put %d", key(i), n, i%16)
		}
	}
	if missing > shortMaxFill/100 {
		t.Errorf("%d of %d entries missing", missing, shortMaxFill)
	}
	for _, k := range []string{"k", "k0\x00", "x1", "k10000000000000"} {
		a, b := packShort(k)
		if n, ok := tab.get(a, b); ok {
			t.Errorf("%q: found %d, never put", k, n)
		}
	}
	if shortTable.Load() != tab {
		t.Fatal("table replaced before it was full")
	}
	a, b := packShort("one more")
	tab.put(a, b, 2)
	if shortTable.Load() == tab {
		t.Fatal("full table not replaced")
	}
	if got := Count("a fresh start for the cache"); got != codecCount(t, "a fresh start for the cache") {
		t.Fatal("count wrong after the table was replaced")
	}
}

// TestRuneClass checks runeClass, on non-ASCII runes, against regexp2's
// own reading of the classes (the generated code tests non-ASCII runes the
// same way; on ASCII, TestSplitMatchesRegex covers it).
func TestRuneClass(t *testing.T) {
	t.Parallel()
	classes := []struct {
		bit uint8
		re  *regexp2.Regexp
	}{
		{rcUpperish, regexp2.MustCompile(`^[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]$`, regexp2.None)},
		{rcLowerish, regexp2.MustCompile(`^[\p{Ll}\p{Lm}\p{Lo}\p{M}]$`, regexp2.None)},
		{rcLead, regexp2.MustCompile(`^[^\r\n\p{L}\p{N}]$`, regexp2.None)},
		{rcNumber, regexp2.MustCompile(`^\p{N}$`, regexp2.None)},
		{rcPunct, regexp2.MustCompile(`^[^\s\p{L}\p{N}]$`, regexp2.None)},
		{rcSpace, regexp2.MustCompile(`^\s$`, regexp2.None)},
	}
	step := rune(1)
	for r := rune(0x80); r <= utf8.MaxRune; r += step {
		if r >= 0x3000 {
			step = 97 // all of the alphabets, then a sample
		}
		if !utf8.ValidRune(r) {
			continue
		}
		got := runeClass(r)
		for _, c := range classes {
			want, err := c.re.MatchString(string(r))
			if err != nil {
				t.Fatal(err)
			}
			if got&c.bit != 0 != want {
				t.Fatalf("%U %q: class %s is %v, regexp2 says %v", r, r, c.re, got&c.bit != 0, want)
			}
		}
		if again := runeClass(r); again != got {
			t.Fatalf("%U: cached class %#x, first %#x", r, again, got)
		}
	}
}

// longInput is a kind of long message, for BenchmarkCountLong and the
// tests of long pieces: gen(n) makes one of n bytes.
type longInput struct {
	name string
	gen  func(n int) string
}

func longInputs() []longInput {
	random := func(seed uint64, alphabet string) func(int) string {
		return func(n int) string {
			r := rand.New(rand.NewPCG(seed, seed))
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			return string(b)
		}
	}
	return []longInput{
		{"A", func(n int) string { return strings.Repeat("A", n) }},
		{"ab", func(n int) string { return strings.Repeat("ab", n/2) }},
		{"lower", random(1, "abcdefghijklmnopqrstuvwxyz")},
		{"digits-punct", random(2, "0123456789.,;:-+*/=()[]{}#%")},
		{"punct", random(3, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")},
		{"prose", func(n int) string {
			r := rand.New(rand.NewPCG(5, 6))
			z := rand.NewZipf(r, 1.1, 4, 40000)
			var sb strings.Builder
			for sb.Len() < n {
				sb.WriteString(benchProse(r, z, false))
			}
			return sb.String()[:n]
		}},
	}
}
