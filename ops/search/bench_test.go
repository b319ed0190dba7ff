package search_test

import (
	"context"
	"testing"

	"weft/internal/benchdata"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/search"
	"weft/store/boltstore"
)

// BenchmarkSearchFirst is the first search of a session, which reads its
// stored messages once into the text kept for searches (fuzzy.Corpus),
// on the benchmark files of 100k and 1M messages (page cache warm after
// the first op). MB-text is the text kept.
func BenchmarkSearchFirst(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(benchdata.Label(n), func(b *testing.B) {
			st, err := boltstore.Open(benchdata.DB(b, n), boltstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			var text int
			for b.Loop() {
				b.StopTimer()
				svc := ops.New(st) // nothing kept from the last op
				sessions, err := reads.ListSessions(svc, ctx, reads.ListSessionsArgs{})
				if err != nil || len(sessions.Sessions) == 0 {
					b.Fatal(err, "no session")
				}
				sid := sessions.Sessions[0].SessionID
				if _, _, err := svc.View(sid); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := reads.SearchSessionHistory(svc, ctx, reads.SearchArgs{SessionID: sid, Query: "no such phrase"}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				text = search.KeptTextBytes(svc, sid)
				b.StartTimer()
			}
			b.ReportMetric(float64(text)/1e6, "MB-text")
		})
	}
}
