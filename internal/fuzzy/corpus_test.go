package fuzzy

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCorpusSubstringEqualsMatcher: the corpus finds exactly the texts
// the per-text Matcher finds, hits that would straddle two texts
// included, whatever the number of parts.
func TestCorpusSubstringEqualsMatcher(t *testing.T) {
	eachScan(t, testCorpusSubstringEqualsMatcher)
}

func testCorpusSubstringEqualsMatcher(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"ab", "AB", "Ba", "c", " ", "\n", "é", "", "abc", "CAB"}
	for round := range 40 {
		var c Corpus
		var texts [][]byte
		n := 1 + rng.IntN(3000)
		if round%4 == 0 {
			n = 1 + rng.IntN(5)
		}
		for range n {
			var b []byte
			for range rng.IntN(6) {
				b = append(b, pieces[rng.IntN(len(pieces))]...)
			}
			texts = append(texts, b)
			c = c.Append(b)
		}
		for _, q := range []string{"ab", "ABC", "ba", "cab", "b c", "a\nb", "zz", "c", "bab"} {
			want := matching(texts, q)
			if got := c.Substring(q); !slices.Equal(got, want) {
				t.Fatalf("round %d, %q: got %v, want %v", round, q, got, want)
			}
		}
	}
}

// TestCorpusKeepsSnapshots: a corpus taken before an append still holds
// what it held, and the texts are lower-cased with their masks.
func TestCorpusKeepsSnapshots(t *testing.T) {
	t.Parallel()
	a := Corpus{}.Append([]byte("Hello World"))
	b := a.Append([]byte("PGSQL 9"))
	if a.Len() != 1 || b.Len() != 2 || string(b.Text(0)) != "hello world" || string(b.Text(1)) != "pgsql 9" {
		t.Fatalf("a %d, b %d: %q %q", a.Len(), b.Len(), b.Text(0), b.Text(1))
	}
	if got := a.Substring("pgsql"); len(got) != 0 {
		t.Errorf("the older corpus finds %v", got)
	}
	q, ok := QueryMask("pgsql")
	if !ok || b.masks[1]&q != q || b.masks[0]&q == q {
		t.Errorf("masks %x %x, query %x", b.masks[0], b.masks[1], q)
	}
	if _, ok := QueryMask("été"); ok {
		t.Error("a query beyond ASCII has a mask")
	}
}

// TestCorpusSubstringLongQueries: queries of every length up to 24, taken
// from the texts themselves (so most are found), over a corpus big
// enough to be split across cores, find what the per-text Matcher finds:
// the two bytes a scan looks for may be far apart, at a text's first or
// last byte, or in the last few bytes of a part.
func TestCorpusSubstringLongQueries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "abAB \nxyz"
	var c Corpus
	var texts [][]byte
	for c.Bytes() < 2<<20+1000 {
		b := make([]byte, rng.IntN(120))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, b)
		c = c.Append(b)
	}
	// The queries and what the per-text Matcher finds, once for both scans.
	queries := make([]string, 72)
	wants := make([][]int, len(queries))
	for round := range queries {
		var q string
		src := texts[rng.IntN(len(texts))]
		n := 1 + round%24
		if len(src) >= n && round%5 != 0 {
			at := rng.IntN(len(src) - n + 1)
			q = string(src[at : at+n])
		} else {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			q = string(b)
		}
		queries[round], wants[round] = q, matching(texts, q)
	}
	eachScan(t, func(t *testing.T) {
		for round, q := range queries {
			if got := c.Substring(q); !slices.Equal(got, wants[round]) {
				t.Fatalf("%q: got %d texts, want %d (first difference near %v)", q, len(got), len(wants[round]), firstDiff(got, wants[round]))
			}
		}
	})
}

func firstDiff(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return min(a[i], b[i])
		}
	}
	return -1
}

// eachScan runs test with the vector pair scan, where the machine has
// it, and with the portable one. It sets pairSIMD, which every scan
// reads: a test that calls it is not parallel, so no other test runs
// beside it.
func eachScan(t *testing.T, test func(t *testing.T)) {
	simd := pairSIMD
	t.Cleanup(func() { pairSIMD = simd })
	if simd {
		t.Run("pair", test)
	}
	pairSIMD = false
	t.Run("portable", test)
}

// FuzzCorpusSubstring: whatever the texts (the input cut at 0xff bytes,
// repeated to pass the vector scan's 32-byte blocks) and an ASCII query,
// the corpus finds what the per-text Matcher finds, on each scan.
func FuzzCorpusSubstring(f *testing.F) {
	f.Add([]byte("Hello World\xffpgsql 9\xff\xffMIGRATION plan"), "migration plan", uint8(3))
	f.Add([]byte("ab\xffba\xffcab"), "ab", uint8(20))
	f.Add([]byte("a\nb\xffa"), "a\nb", uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, query string, repeat uint8) {
		if query == "" || !CanSubstring(query) || len(in) > 4096 {
			return
		}
		var c Corpus
		var texts [][]byte
		for range 1 + int(repeat)%40 {
			for _, tx := range bytes.Split(in, []byte{0xff}) {
				texts = append(texts, tx)
				c = c.Append(tx)
			}
		}
		want := matching(texts, query)
		simd := pairSIMD
		defer func() { pairSIMD = simd }()
		for _, pair := range []bool{simd, false} {
			pairSIMD = pair
			if got := c.Substring(query); !slices.Equal(got, want) {
				t.Fatalf("pair scan %v, %q: got %v, want %v", pair, query, got, want)
			}
		}
	})
}

// matching is the texts the per-text Matcher finds query in, in order.
func matching(texts [][]byte, query string) []int {
	var want []int
	m := NewMatcher(query)
	for k, tx := range texts {
		if m.Match(tx) {
			want = append(want, k)
		}
	}
	return want
}
