package benchdata

import (
	"fmt"
	"math/rand/v2"

	"weft/model"
)

// Ops makes count operations spread over a thread of n stored
// messages: a realistic mix of every type over short ranges, some nested
// over earlier synthetic items, a few toggled off.
func Ops(n, count int) []model.Op {
	r := rand.New(rand.NewPCG(1, 2))
	ops := make([]model.Op, 0, count)
	for i := range count {
		o := model.Op{ID: fmt.Sprintf("op%06d", i), Active: i%17 != 0, CreatedAt: benchStart, Author: "bench"}
		start := 1 + r.IntN(n-20)
		end := start + r.IntN(12)
		rng := make([]model.ItemID, 0, end-start+1)
		for seq := start; seq <= end; seq++ {
			rng = append(rng, model.MessageID(uint64(seq)))
		}
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
