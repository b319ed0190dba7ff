package ops_test

import (
	"io"
	"testing"

	"weft/formats/export"
	"weft/ops/opstest"
)

// BenchmarkExport100k exports the effective thread of a 100k-message
// session as OpenAI and Anthropic JSON: reading from the store and writing.
func BenchmarkExport100k(b *testing.B) {
	path, sid := opstest.BenchFile(b, 100_000, 300, 1_000)
	svc := opstest.BenchService(b, path)
	for _, name := range []string{"openai", "anthropic"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_, items, err := svc.ExportItems(sid, false)
				if err != nil {
					b.Fatal(err)
				}
				if name == "openai" {
					_, err = export.WriteOpenAI(io.Discard, items)
				} else {
					_, err = export.WriteAnthropic(io.Discard, items)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(100_000*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
