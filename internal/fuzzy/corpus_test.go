package fuzzy

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCorpusSubstringEqualsMatcher: the corpus finds exactly the texts
// the per-text Matcher finds, hits that would straddle two texts
// included, whatever the number of parts.
func TestCorpusSubstringEqualsMatcher(t *testing.T) {
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
			var want []int
			m := NewMatcher(q)
			for k, tx := range texts {
				if m.Match(tx) {
					want = append(want, k)
				}
			}
			if got := c.Substring(q); !slices.Equal(got, want) {
				t.Fatalf("round %d, %q: got %v, want %v", round, q, got, want)
			}
		}
	}
}

// TestCorpusKeepsSnapshots: a corpus taken before an append still holds
// what it held, and the texts are lower-cased with their masks.
func TestCorpusKeepsSnapshots(t *testing.T) {
	a := Corpus{}.Append([]byte("Hello World"))
	b := a.Append([]byte("PGSQL 9"))
	if a.Len() != 1 || b.Len() != 2 || string(b.Text(0)) != "hello world" || string(b.Text(1)) != "pgsql 9" {
		t.Fatalf("a %d, b %d: %q %q", a.Len(), b.Len(), b.Text(0), b.Text(1))
	}
	if got := a.Substring("pgsql"); len(got) != 0 {
		t.Errorf("the older corpus finds %v", got)
	}
	q, ok := QueryMask("pgsql")
	if !ok || b.Mask(1)&q != q || b.Mask(0)&q == q {
		t.Errorf("masks %x %x, query %x", b.Mask(0), b.Mask(1), q)
	}
	if _, ok := QueryMask("été"); ok {
		t.Error("a query beyond ASCII has a mask")
	}
}
