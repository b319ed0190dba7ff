package tokens

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// bpeCount is the reference for countPiece: the merge itself, by the
// rules, with a heap. It counts the parts that merging s leaves.
func bpeCount(v *vocab, s string) int {
	var m merger
	m.merge(v, s, nil)
	n := 0
	for i := 0; i < len(s); i = int(m.next[i]) {
		n++
	}
	return n
}

// pieceAlphabets draw texts the search finds hard: a few letters that make
// many tokens, lower-case letters, punctuation, runs of one byte, bytes of
// broken UTF-8 (which the codec reads as U+FFFD), and accented letters.
var pieceAlphabets = []string{
	"A", "ab", "abc", "aab", "abcdefghijklmnopqrstuvwxyz",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "=-", "*", " \n\t", "0123456789",
	"\x80\x81\xe2\xff\xc3\xa9\xd1", "eéèêë", "aeiou y", "ſs'",
}

func randomPiece(r *rand.Rand, n int) string {
	alphabet := pieceAlphabets[r.IntN(len(pieceAlphabets))]
	b := make([]byte, 0, n)
	for len(b) < n {
		c := alphabet[r.IntN(len(alphabet))]
		for k := 1 + r.IntN(3); k > 0 && len(b) < n; k-- {
			b = append(b, c)
		}
	}
	return string(b)
}

// TestCountPieceMatchesMerge compares the search with the merge on many
// random texts, and the merge with the codec where the text is one piece
// of its split.
func TestCountPieceMatchesMerge(t *testing.T) {
	t.Parallel()
	v := loadVocab()
	if v == nil {
		t.Fatal("no vocabulary")
	}
	r := rand.New(rand.NewPCG(9, 9))
	iters := 5000
	if testing.Short() {
		iters = 500
	}
	for range iters {
		s := randomPiece(r, 1+r.IntN(600))
		want := bpeCount(v, asRunes(s))
		if v.entry(asRunes(s))&entToken != 0 {
			want = 1
		}
		if got := countPiece(v, s); got != want {
			t.Fatalf("%q: countPiece %d, merge %d", s, got, want)
		}
		if end, kind := nextSpan(s, 0); end == len(s) && kind == spanPiece {
			if c := codecCount(t, s); c != want {
				t.Fatalf("%q: merge %d, codec %d", s, want, c)
			}
		}
	}
}

// TestCountVocab checks the index against the vocabulary: every token is
// found with its rank and counts as one token;
// each is reachable if and only if its merge leaves it whole; and every
// string a token begins with is known to begin one.
func TestCountVocab(t *testing.T) {
	t.Parallel()
	v := loadVocab()
	if v == nil {
		t.Fatal("no vocabulary")
	}
	unreachable := 0
	for i := range uint32(len(v.off) - 1) {
		s := v.token(i)
		e := v.entry(s)
		if e&entToken == 0 || e&entID != i || v.rank(s) != v.rankOf[i] {
			t.Fatalf("token %q: entry %#x, id %d, rank %d", s, e, i, v.rankOf[i])
		}
		if reachable := bpeCount(v, s) == 1; reachable != (e&entReachable != 0) {
			t.Fatalf("token %q: reachable %v, entry %#x", s, reachable, e)
		} else if !reachable {
			unreachable++
		}
		// (The codec reads broken UTF-8 as U+FFFD, so such a token is
		// counted as another string.)
		if n := countPiece(v, s); n != 1 && utf8.ValidString(s) {
			t.Fatalf("token %q counts %d", s, n)
		}
		for k := 1; k < len(s); k++ {
			if v.entry(s[:k])&entExtends == 0 {
				t.Fatalf("%q begins token %q, entry %#x", s[:k], s, v.entry(s[:k]))
			}
		}
	}
	t.Logf("%d tokens, %d not reachable", len(v.off)-1, unreachable)
}

// TestCountLongTokens counts each token longer than a short piece, and
// twice it and thrice, and compares with the codec. (A piece that is a
// token is one token even if merging it would not give it.)
func TestCountLongTokens(t *testing.T) {
	t.Parallel()
	v := loadVocab()
	if v == nil {
		t.Fatal("no vocabulary")
	}
	for i := range uint32(len(v.off) - 1) {
		s := v.token(i)
		if len(s) <= shortKeyMax {
			continue
		}
		for _, text := range []string{s, s + s, s + s + s} {
			if got, want := Count(text), codecCount(t, text); got != want {
				t.Fatalf("Count(%q) = %d, codec says %d", text, got, want)
			}
		}
	}
}

// TestCountSegments counts texts in segments, as megabyte pieces are
// counted in parallel, and compares with counting them whole.
func TestCountSegments(t *testing.T) {
	t.Parallel()
	v := loadVocab()
	if v == nil {
		t.Fatal("no vocabulary")
	}
	r := rand.New(rand.NewPCG(5, 9))
	iters := 60
	if testing.Short() {
		iters = 10
	}
	for range iters {
		s := asRunes(randomPiece(r, 1000+r.IntN(20000)))
		words := len(s)/64 + 1
		want, _ := v.count(s, make([]uint64, words), make([]uint64, words))
		for k := 2; k <= 8; k++ {
			if got := v.countSegments(s, k); got != want {
				t.Fatalf("%q... in %d segments: %d, whole %d", s[:40], k, got, want)
			}
		}
	}
}

// TestCountPieceLinear: the search's work grows with the length of the
// text, not faster: on each kind of text, four times the text takes at
// most five times the steps (and a step, at most one pair's validation,
// takes a bounded time).
func TestCountPieceLinear(t *testing.T) {
	t.Parallel()
	v := loadVocab()
	if v == nil {
		t.Fatal("no vocabulary")
	}
	steps := func(s string) int {
		s = asRunes(s)
		words := len(s)/64 + 1
		_, n := v.count(s, make([]uint64, words), make([]uint64, words))
		return n
	}
	for _, in := range longInputs() {
		small, big := steps(in.gen(1<<16)), steps(in.gen(1<<18))
		if big > 5*small {
			t.Errorf("%s: %d steps for 64 KB, %d for 256 KB", in.name, small, big)
		}
		if small > 4<<16 {
			t.Errorf("%s: %d steps for 64 KB", in.name, small)
		}
	}
}

// FuzzCountPiece compares the search with the merge on any bytes, and on
// a long run of them.
func FuzzCountPiece(f *testing.F) {
	for _, s := range []string{"A", "ab", "aab", "é", "\xd1", "!!=", "x'y", " \n"} {
		f.Add(s)
	}
	v := loadVocab()
	if v == nil {
		f.Fatal("no vocabulary")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || len(s) > 512 {
			return
		}
		for _, text := range []string{s, strings.Repeat(s, 2048/len(s))} {
			text = asRunes(text)
			want := bpeCount(v, text)
			if v.entry(text)&entToken != 0 {
				want = 1
			}
			if got := countPiece(v, text); got != want {
				t.Fatalf("%s: countPiece %d, merge %d", fmt.Sprintf("%q", text), got, want)
			}
		}
	})
}
