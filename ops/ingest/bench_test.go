package ingest

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"weft/formats/claudecode"
	"weft/formats/openai"
	"weft/internal/benchdata"
	"weft/ops"
	"weft/store"
)

// BenchmarkImportClaudeCodeLongSession is the whole import of a real
// 5-hour Claude Code session (3 MB, 1512 lines) into a fresh file:
// reading, token counting and storing.
func BenchmarkImportClaudeCodeLongSession(b *testing.B) {
	path := filepath.Join("..", "..", "formats", "testdata", "claude-code", "spotter_long_session.jsonl")
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
		im := New(context.Background(), ops.New(st), Options{})
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
	// Written once: b.Loop runs this body once.
	src := filepath.Join(b.TempDir(), "openai-1m.jsonl")
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
		enc.Encode(map[string]string{"role": role, "content": benchdata.Prose(r, 200)})
	}
	w.Flush()
	f.Close()
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
		im := New(context.Background(), ops.New(st), Options{Progress: func(int) {
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
