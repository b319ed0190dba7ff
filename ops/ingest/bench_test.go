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

	"weft/formats"
	"weft/formats/claudecode"
	"weft/formats/openai"
	"weft/internal/benchdata"
	"weft/ops"
	"weft/store/boltstore"
)

// BenchmarkImportClaudeCodeLongSession is the whole import of a real
// 5-hour Claude Code session (3 MB, 1512 lines) into a fresh file:
// reading, token counting and storing.
func BenchmarkImportClaudeCodeLongSession(b *testing.B) {
	path := filepath.Join("..", "..", "formats", "testdata", "claude-code", "spotter_long_session.jsonl")
	for b.Loop() {
		importTimed(b, path, claudecode.Read, nil)
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
		im, _ := importTimed(b, src, openai.Read, &peak)
		if im.Sessions[0].Added != n {
			b.Fatalf("imported %d", im.Sessions[0].Added)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// importTimed imports the file src with read into a new database file,
// and returns the import and the file's size. Only the import is timed
// (from New to its Close), not the opening and closing of the files.
// With peak, it records the peak heap seen while importing, after a
// collection that leaves the last run's garbage out.
func importTimed(b *testing.B, src string, read formats.Reader, peak *uint64) (*Import, int64) {
	b.Helper()
	b.StopTimer()
	db := filepath.Join(b.TempDir(), "import.db")
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	var opts Options
	if peak != nil {
		runtime.GC()
		var ms runtime.MemStats
		opts.Progress = func(int) {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
		}
	}
	b.StartTimer()
	im := New(context.Background(), ops.New(st), opts)
	if _, err := read(bufio.NewReaderSize(f, 1<<20), im); err != nil {
		b.Fatal(err)
	}
	mustClose(b, im)
	b.StopTimer()
	f.Close()
	st.Close()
	fi, err := os.Stat(db)
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	return im, fi.Size()
}
