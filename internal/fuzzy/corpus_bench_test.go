package fuzzy

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"weft/internal/benchdata"
)

// benchCorpus is n texts of about size bytes of that prose.
func benchCorpus(n, size int) Corpus {
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	var c Corpus
	var b []byte
	for range n {
		b = b[:0]
		for len(b) < size {
			b = append(b, benchdata.SmallWords[r.IntN(len(benchdata.SmallWords))]...)
			b = append(b, ' ')
		}
		c = c.Append(b)
	}
	return c
}

// BenchmarkCorpusSubstring is Corpus.Substring alone over 100k texts of
// 650 bytes (65 MB), on every core, with the vector pair scan and the
// portable one (bytes.Index), beside the floor: bytes.IndexByte
// for a byte that is not there, over the same memory on one core.
func BenchmarkCorpusSubstring(b *testing.B) {
	c := benchCorpus(100_000, 650)
	mbps := func(b *testing.B) {
		b.ReportMetric(float64(c.Bytes())/1e6*float64(b.N)/b.Elapsed().Seconds(), "MB/s")
	}
	simd := pairSIMD
	defer func() { pairSIMD = simd }()
	for _, q := range []string{"Migration Plan", "no such phrase", "pgsql", "retry"} {
		for _, pair := range []bool{true, false} {
			name := "portable"
			if pair {
				name = "pair"
				if !simd {
					continue
				}
			}
			pairSIMD = pair
			b.Run(name+"/"+strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
				for b.Loop() {
					c.Substring(q)
				}
				mbps(b)
			})
		}
	}
	b.Run("floor/IndexByte-one-core", func(b *testing.B) {
		for b.Loop() {
			if bytes.IndexByte(c.buf, 0xff) >= 0 {
				b.Fatal("0xff in prose")
			}
		}
		mbps(b)
	})
}
