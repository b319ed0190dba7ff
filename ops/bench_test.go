package ops

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"weft/internal/benchdata"
	"weft/model"
	"weft/store"
)

// Benchmarks over real files. Building a big file takes a while, so each
// is built once per run, in a directory removed when the run ends (see
// TestMain).

func TestMain(m *testing.M) {
	code := m.Run()
	benchdata.RemoveTemp()
	os.Exit(code)
}

// benchFile builds (once per run) a file with one session of n messages of
// about size bytes, one a second, and nops operations made as an operator
// would, and returns its path and the session ID.
func benchFile(b *testing.B, n, size, nops int) (string, string) {
	return benchdata.File(b, t0, n, size, nops)
}

func benchService(b *testing.B, path string) *Service {
	st, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return New(st)
}

// BenchmarkAppendOne1M is appending one message to a warm 1M-message
// session and getting the new view: one bbolt commit, no re-apply.
func BenchmarkAppendOne1M(b *testing.B) {
	path, sid := benchFile(b, 1_000_000, 200, 10_000)
	// Work on a copy: appends change the file.
	cp := filepath.Join(b.TempDir(), "append.db")
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cp, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	svc := benchService(b, cp)
	ctx := context.Background()
	if _, _, err := svc.View(sid); err != nil {
		b.Fatal(err)
	}
	msg := []model.NewMessage{{Role: model.RoleUser, Content: "one more", Tokens: 2}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.AppendMessages(ctx, AppendMessagesArgs{SessionID: sid, Messages: msg}); err != nil {
			b.Fatal(err)
		}
		if _, v, _ := svc.View(sid); v.Len() == 0 {
			b.Fatal("empty view")
		}
	}
}
