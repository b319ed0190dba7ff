package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"weft/model"
)

// benchOps makes count operations spread over a thread of n stored
// messages: a realistic mix of every type over short ranges, some nested
// over earlier synthetic items, a few toggled off.
func benchOps(n, count int) []model.Op {
	r := rand.New(rand.NewPCG(1, 2))
	ops := make([]model.Op, 0, count)
	for i := range count {
		o := model.Op{ID: fmt.Sprintf("op%06d", i), Active: i%17 != 0, CreatedAt: t0, Author: "bench"}
		start := 1 + r.IntN(n-20)
		rng := spanIDs(start, start+r.IntN(12))
		switch i % 6 {
		case 0:
			o.Type, o.Targets, o.Payload.Tags = model.OpTag, rng, []string{"t"}
		case 1:
			o.Type, o.Targets, o.Payload.Summary = model.OpDigest, rng, "summary"
			if i > 6 && r.IntN(4) == 0 {
				o.Targets = append(o.Targets, model.SyntheticID(ops[i-6].ID, 0)) // a digest of a digest
			}
		case 2:
			o.Type, o.Targets = model.OpSnip, rng
		case 3:
			o.Type, o.Targets = model.OpRevise, rng
			o.Payload.Messages = []model.NewMessage{{Role: model.RoleUser, Content: "r"}}
		case 4:
			o.Type, o.Targets = model.OpResequence, []model.ItemID{rng[len(rng)-1], rng[0]}
		case 5:
			o.Type, o.Anchor = model.OpInsert, rng[0]
			o.Payload.Messages = []model.NewMessage{{Role: model.RoleAssistant, Content: "i"}}
		}
		ops = append(ops, o)
	}
	return ops
}

func benchmarkApply(b *testing.B, n, nops int) {
	h, ops := heads(n), benchOps(n, nops)
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
	v := Apply(heads(1_000_000), benchOps(1_000_000, 10_000), nil)
	one := heads(1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v = AppendToView(v, one) // as the service does: each append extends the latest view
	}
}
