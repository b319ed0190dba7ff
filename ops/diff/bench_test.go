package diff_test

import (
	"fmt"
	"testing"

	"weft/model"
	"weft/ops/diff"
	"weft/ops/thread"
)

// BenchmarkCompute: a 100,000-message thread whose first 90,000 are
// digested in 90 digests of 1,000, those nested in one archive digest,
// and 1,000 snips of one message after them.
func BenchmarkCompute(b *testing.B) {
	hs := heads(100_000)
	var ops, archive []model.Op
	for d := range 90 {
		var t []model.ItemID
		for s := d*1000 + 1; s <= (d+1)*1000; s++ {
			t = append(t, model.MessageID(uint64(s)))
		}
		o := digest(fmt.Sprintf("d%03d", d), t, "summary", 50)
		ops = append(ops, o)
		archive = append(archive, o)
	}
	var inner []model.ItemID
	for _, o := range archive {
		inner = append(inner, model.SyntheticID(o.ID, 0))
	}
	ops = append(ops, digest("zarchive", inner, "archive", 200))
	for k := range 1000 {
		ops = append(ops, op(fmt.Sprintf("s%04d", k), model.OpSnip, []model.ItemID{model.MessageID(uint64(90_001 + 2*k))}, 0))
	}
	v := thread.Apply(hs, ops, nil)
	b.ResetTimer()
	for range b.N {
		d := diff.Compute(v, ops, hs)
		if len(d.Hunks) != 1001 {
			b.Fatalf("%d hunks", len(d.Hunks))
		}
	}
}
