package ops

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"weft/formats/claudecode"
	"weft/formats/export"
	"weft/formats/openai"
	"weft/store"
)

// BenchmarkImportClaudeCodeLongSession is the whole import of a real
// 5-hour Claude Code session (3 MB, 1512 lines) into a fresh file:
// reading, token counting and storing.
func BenchmarkImportClaudeCodeLongSession(b *testing.B) {
	path := filepath.Join("..", "formats", "testdata", "claude-code", "spotter_long_session.jsonl")
	for b.Loop() {
		b.StopTimer()
		st, err := store.Open(filepath.Join(b.TempDir(), "cc.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		im := New(st).NewImport(context.Background(), ImportOptions{})
		if _, err := claudecode.Read(f, im); err != nil {
			b.Fatal(err)
		}
		mustClose(b, im)
		b.StopTimer()
		f.Close()
		st.Close()
		b.StartTimer()
	}
}

// BenchmarkImportOpenAIJSONL1M imports a generated 1M-message OpenAI
// JSONL file (one message a line, ~200 bytes of content each) and reports
// messages/s and the peak heap seen while importing, which must not grow
// with the file.
func BenchmarkImportOpenAIJSONL1M(b *testing.B) {
	const n = 1_000_000
	src := filepath.Join(benchDir(), "openai-1m.jsonl")
	if _, err := os.Stat(src); err != nil {
		f, err := os.Create(src)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		r := rand.New(rand.NewPCG(9, 9))
		for i := range n {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			enc.Encode(map[string]string{"role": role, "content": text(r, 200)})
		}
		w.Flush()
		f.Close()
	}
	var peak uint64
	for b.Loop() {
		b.StopTimer()
		st, err := store.Open(filepath.Join(b.TempDir(), "oa.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(src)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var ms runtime.MemStats
		b.StartTimer()
		im := New(st).NewImport(context.Background(), ImportOptions{Progress: func(int) {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}})
		if _, err := openai.Read(bufio.NewReaderSize(f, 1<<20), im); err != nil {
			b.Fatal(err)
		}
		mustClose(b, im)
		b.StopTimer()
		if im.Sessions[0].Added != n {
			b.Fatalf("imported %d", im.Sessions[0].Added)
		}
		f.Close()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// BenchmarkExport100k exports the effective thread of a 100k-message
// session as OpenAI and Anthropic JSON: reading from the store and writing.
func BenchmarkExport100k(b *testing.B) {
	path, sid := benchFile(b, 100_000, 300, 1_000)
	svc := benchService(b, path)
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
