package reads_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/store/boltstore"
)

// Benchmarks of the read tools over real files (opstest.BenchFile).

// BenchmarkOpenLastScreen1M is opening a file and reading the last screen
// (50 items) of a 1M-message session with 10k operations, from cold.
func BenchmarkOpenLastScreen1M(b *testing.B) {
	path, sid := opstest.BenchFile(b, 1_000_000, 200, 10_000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		svc := ops.New(st)
		_, v, err := svc.View(sid)
		if err != nil {
			b.Fatal(err)
		}
		end := v.Len() - 1
		start := end - 49
		res, err := reads.GetMessageRange(svc, ctx, reads.MessageRangeArgs{SessionID: sid, StartIdx: &start, EndIdx: &end})
		if err != nil || len(res.Messages) != 50 {
			b.Fatal(err, len(res.Messages))
		}
		st.Close()
	}
}

// BenchmarkTurnsAround1M is get_turns_around (count 40) on a warm
// 1M-message session: the time index, not a scan.
func BenchmarkTurnsAround1M(b *testing.B) {
	path, sid := opstest.BenchFile(b, 1_000_000, 200, 10_000)
	svc := opstest.BenchService(b, path)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 5))
	if _, _, err := svc.View(sid); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		ts := opstest.T0.Add(time.Duration(r.IntN(1_000_000)) * time.Second).Format(time.RFC3339)
		res, err := reads.GetTurnsAround(svc, ctx, reads.TurnsAroundArgs{SessionID: sid, Timestamp: ts})
		if err != nil || res.TotalCount != 40 {
			b.Fatal(err, res.TotalCount)
		}
	}
}

// BenchmarkSearchSubstring100k is a substring search over 100k messages of
// about 650 bytes (65 MB of text), for a word that occurs and one that
// does not, after a first search.
func BenchmarkSearchSubstring100k(b *testing.B) {
	path, sid := opstest.BenchFile(b, 100_000, 650, 0)
	svc := opstest.BenchService(b, path)
	ctx := context.Background()
	// The first search keeps the session's text in memory, lower-cased;
	// what is measured is every search after it.
	t0 := time.Now()
	if _, err := reads.SearchSessionHistory(svc, ctx, reads.SearchArgs{SessionID: sid, Query: "warm"}); err != nil {
		b.Fatal(err)
	}
	b.Logf("first search: %v", time.Since(t0))
	for _, q := range []string{"Migration Plan", "no such phrase"} {
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if _, err := reads.SearchSessionHistory(svc, ctx, reads.SearchArgs{SessionID: sid, Query: q}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
