package fuzzy

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpusDocs puts texts in a corpus, all but every fifth, which stay
// docs of their own (as a view's synthetic items do); doc i answers to
// index (i*7919)%len. It returns the refs, the docs, and every text as a
// doc by index, for the reference.
func corpusDocs(texts [][]byte) (Corpus, []Ref, []Doc, []Doc) {
	var c Corpus
	var refs []Ref
	var docs []Doc
	byIndex := make([]Doc, len(texts))
	for i, t := range texts {
		index := (i * 7919) % len(texts)
		byIndex[index] = Doc{Index: index, Text: t}
		if i%5 == 4 {
			docs = append(docs, Doc{Index: index, Text: t})
			continue
		}
		refs = append(refs, Ref{Index: index, Text: c.Len()})
		c = c.Append(t)
	}
	return c, refs, docs, byIndex
}

// holdsCands checks that the candidates a corpus search gave are in
// order and hold every one the reference found.
func holdsCands(t *testing.T, what string, got, want []int) {
	t.Helper()
	if !slices.IsSorted(got) {
		t.Fatalf("%s: candidates out of order", what)
	}
	for _, i := range want {
		if _, ok := slices.BinarySearch(got, i); !ok {
			t.Fatalf("%s: %d of %d candidates, %d missing", what, len(got), len(want), i)
		}
	}
}

func sameHits(t *testing.T, what string, got, want []LineHit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Index != w.Index || g.Score != w.Score || g.Line != w.Line || !slices.Equal(g.Matched, w.Matched) {
			t.Fatalf("%s hit %d: got %+v, want %+v", what, i, g, w)
		}
	}
}

// TestCorpusLinesEqualsSahilmFuzzy: searching texts in a corpus (lower-
// cased, case kept in bits) ranks exactly as sahilm/fuzzy ranks the
// texts themselves, with texts beyond ASCII, NULs, carriage returns,
// camelCase, queries whose characters straddle lines and queries beyond
// ASCII, which the masks cannot serve.
func TestCorpusLinesEqualsSahilmFuzzy(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"retry", "Redis", "pg", "SQL", "pgsql", "PgSql", "migration", "data", "base", "plan", "a", "the", "x_y", "café", "CAFÉ", "p/g", "\r", "PGSQL", "ReTry", "a\x00b", "DataBase", "dataBase", "\x1b[0m", "ÉTÉ"}
	size := 1500
	if testing.Short() {
		size = 300
	}
	texts := make([][]byte, size)
	for i := range texts {
		texts[i] = searchText(rng, words, 50, 6, 400, false)
	}
	c, refs, docs, byIndex := corpusDocs(texts)
	for k := range c.Len() {
		if got := restoreCase(nil, c.Text(k), c.caps, c.capAt[k]*64); !bytes.Equal(got, byIndex[refs[k].Index].Text) {
			t.Fatalf("text %d restored as %q, was %q", k, got, byIndex[refs[k].Index].Text)
		}
	}
	for _, q := range []string{"p", "pg", "pgsql", "PgSql", "retry", "data plan", "Rd", "dB", "é", "cafÉ", "a\nb", "gs\nql", "zz", "\x1b"} {
		ref := referenceRanking(byIndex, q)
		for _, limit := range []int{0, 1, 200} {
			got, gotC := c.Lines(refs, docs, q, limit, nil, -1, nil)
			want, wantC := ref.top(limit), ref.cands
			holdsCands(t, q, gotC, wantC)
			if limit == 0 && !slices.Equal(gotC, wantC) {
				t.Fatalf("%q: %d candidates, want %d (nothing is out of reach without a limit)", q, len(gotC), len(wantC))
			}
			sameHits(t, q, got, want)
		}
	}
}

// TestCorpusLinesNarrowsExactly is TestFuzzyDocsNarrowsExactly over a
// corpus: each step searches the last one's candidates, with its bounds.
func TestCorpusLinesNarrowsExactly(t *testing.T) {
	t.Parallel()
	skipOn32Bits(t)
	rng := rand.New(rand.NewPCG(9, 10))
	phrases := []string{"database migration plan", "data base", "Migration", "plan", "pgSql", "retry the job", "x", "DataBase Migration", "café plan", "d_a-t/a"}
	size := 1000
	if testing.Short() {
		size = 200
	}
	texts := make([][]byte, size)
	for i := range texts {
		texts[i] = searchText(rng, phrases, 40, 6, 300, true)
	}
	c, refs, docs, byIndex := corpusDocs(texts)
	textOf := make(map[int]int, len(refs)) // index -> corpus text
	for _, r := range refs {
		textOf[r.Index] = r.Text
	}
	ranked := newReferenceCache(byIndex)
	for _, q := range []string{"database migration plan", "DataBase", "pgsql retry", "café plan", "d_a-t/a"} {
		for _, limit := range []int{1, 20} {
			var prev []Bound
			steps, typed := -1, 0
			inRefs, inDocs := refs, docs
			for typed < len(q) {
				add := 1 + rng.IntN(3)
				for typed+add < len(q) && !utf8.RuneStart(q[typed+add]) {
					add++
				}
				was := typed
				typed = min(typed+add, len(q))
				if prev != nil {
					steps = utf8.RuneCountInString(q[was:typed])
				}
				next := make([]Bound, len(texts))
				got, cands := c.Lines(inRefs, inDocs, q[:typed], limit, prev, steps, next)
				ref := ranked.ranking(q[:typed])
				want, wantC := ref.top(limit), ref.cands
				holdsCands(t, q[:typed], cands, wantC)
				sameHits(t, q[:typed], got, want)
				// Every bound kept holds: no text scores above it.
				for _, i := range cands {
					if best, ok := ref.best[i]; ok && next[i].known() && int(next[i].s) < best {
						t.Fatalf("%q: text %d scores %d above its bound %+v", q[:typed], i, best, next[i])
					}
				}
				inRefs, inDocs = nil, nil
				for _, i := range cands {
					if k, ok := textOf[i]; ok {
						inRefs = append(inRefs, Ref{Index: i, Text: k})
					} else {
						inDocs = append(inDocs, byIndex[i])
					}
				}
				prev = next
			}
		}
	}
}

// FuzzCorpusLines holds a corpus search of a few texts (split from one
// input at '|') to sahilm/fuzzy's ranking of the texts themselves.
func FuzzCorpusLines(f *testing.F) {
	f.Add("pgsql", "use PgSQL\nfor the queue|pg\nsql|PGSQL")
	f.Add("a\nb", "xa\nb|ab\n\na\r\nb")
	f.Add("dB", "data\r\nBase dataBase|d_b|DB")
	f.Fuzz(func(t *testing.T, query, input string) {
		if query == "" || !utf8.ValidString(query) || !utf8.ValidString(input) || strings.ContainsRune(query, 0) {
			return
		}
		if asciiOnly([]byte(query)) && strings.ContainsAny(input, "\u212a\u017f") {
			return // the Kelvin sign and the long s: see matches
		}
		var texts [][]byte
		for part := range strings.SplitSeq(input, "|") {
			texts = append(texts, []byte(part))
		}
		c, refs, docs, byIndex := corpusDocs(texts)
		got, gotC := c.Lines(refs, docs, query, 2, nil, -1, nil)
		want, wantC := referenceFuzzyDocs(byIndex, query, 2)
		holdsCands(t, query, gotC, wantC)
		sameHits(t, query, got, want)
		// Typed a character at a time, each search narrowed by the last.
		textOf := make(map[int]int, len(refs))
		for _, r := range refs {
			textOf[r.Index] = r.Text
		}
		var prev []Bound
		steps := -1
		for typed := range query {
			if typed == 0 {
				continue
			}
			q := query[:typed]
			next := make([]Bound, len(texts))
			got, cands := c.Lines(refs, docs, q, 1, prev, steps, next)
			want, wantC := referenceFuzzyDocs(byIndex, q, 1)
			holdsCands(t, q, cands, wantC)
			sameHits(t, q, got, want)
			refs, docs = nil, nil
			for _, i := range cands {
				if k, ok := textOf[i]; ok {
					refs = append(refs, Ref{Index: i, Text: k})
				} else {
					docs = append(docs, byIndex[i])
				}
			}
			prev, steps = next, 1
		}
	})
}

// TestSortRuns: lists in order but for some at their start, or made of
// a few runs in order, or in no order at all, come out sorted.
func TestSortRuns(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for round := range 200 {
		var a []int
		for range rng.IntN(4) {
			a = append(a, rng.IntN(1000)) // the last query's best
		}
		for range 1 + rng.IntN(3) {
			run := make([]int, rng.IntN(300))
			for i := range run {
				run[i] = rng.IntN(1000)
			}
			if round%5 != 0 {
				slices.Sort(run)
			}
			a = append(a, run...)
		}
		want := slices.Sorted(slices.Values(a))
		if got := sortRuns(slices.Clone(a)); !slices.Equal(got, want) {
			t.Fatalf("sortRuns(%v) = %v", a, got)
		}
	}
}
