package thread

import (
	"testing"

	"weft/internal/benchdata"
)

func benchmarkApply(b *testing.B, n, nops int) {
	h, ops := heads(n), benchdata.Ops(n, nops)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = Apply(h, ops, nil)
	}
}

func BenchmarkApply100kMessages1kOps(b *testing.B) { benchmarkApply(b, 100_000, 1_000) }
func BenchmarkApply1MMessages10kOps(b *testing.B)  { benchmarkApply(b, 1_000_000, 10_000) }

// BenchmarkAppendToView1M is appending one message to a 1M-message
// session's view: it must not apply the operations again.
func BenchmarkAppendToView1M(b *testing.B) {
	v := Apply(heads(1_000_000), benchdata.Ops(1_000_000, 10_000), nil)
	one := heads(1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v = AppendToView(v, one) // as the service does: each append extends the latest view
	}
}
