package ingest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"weft/formats/sharegpt"
	"weft/internal/benchdata"
)

// BenchmarkImportManySessions imports a generated ShareGPT file of
// conversations of two short messages each (about 100 bytes a
// conversation, as fine-tuning sets are): one session a conversation.
// It reports conversations/s, the database file's size per byte of
// input, and the peak heap.
func BenchmarkImportManySessions(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := filepath.Join(b.TempDir(), fmt.Sprintf("sharegpt-%d.json", n))
			writeShareGPT(b, src, n) // once: b.Loop runs this body once
			in, err := os.Stat(src)
			if err != nil {
				b.Fatal(err)
			}
			var peak uint64
			var size int64
			for b.Loop() {
				var im *Import
				im, size = importTimed(b, src, sharegpt.Read, &peak)
				if len(im.Sessions) != n {
					b.Fatalf("%d sessions imported, want %d", len(im.Sessions), n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
			b.ReportMetric(float64(size)/float64(in.Size()), "file/input")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// writeShareGPT writes n conversations of a question and an answer.
func writeShareGPT(b *testing.B, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(4, 4))
	w.WriteString("[")
	for i := range n {
		if i > 0 {
			w.WriteString(",\n")
		}
		conv := map[string]any{"id": fmt.Sprintf("c%d", i), "conversations": []map[string]string{
			{"from": "human", "value": benchdata.Prose(r, 40)},
			{"from": "gpt", "value": benchdata.Prose(r, 50)},
		}}
		raw, err := json.Marshal(conv)
		if err != nil {
			b.Fatal(err)
		}
		w.Write(raw)
	}
	w.WriteString("]\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
