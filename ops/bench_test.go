package ops_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"weft/internal/benchdata"
	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
)

// Benchmarks over real files. Building a big file takes a while, so each
// is built once per run, in a directory removed when the run ends (see
// TestMain).

func TestMain(m *testing.M) {
	code := m.Run()
	benchdata.RemoveTemp()
	os.Exit(code)
}

// BenchmarkAppendOne1M is appending one message to a warm 1M-message
// session and getting the new view: one bbolt commit, no re-apply.
func BenchmarkAppendOne1M(b *testing.B) {
	path, sid := opstest.BenchFile(b, 1_000_000, 200, 10_000)
	// Work on a copy: appends change the file.
	cp := filepath.Join(b.TempDir(), "append.db")
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cp, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	svc := opstest.BenchService(b, cp)
	ctx := context.Background()
	if _, _, err := svc.View(sid); err != nil {
		b.Fatal(err)
	}
	msg := []model.NewMessage{{Role: model.RoleUser, Content: "one more", Tokens: 2}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: msg}); err != nil {
			b.Fatal(err)
		}
		if _, v, _ := svc.View(sid); v.Len() == 0 {
			b.Fatal("empty view")
		}
	}
}
