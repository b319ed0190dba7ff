package diff_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"weft/model"
	"weft/ops/diff"
	"weft/ops/thread"
)

// randomOps makes k operations over a thread of n messages, each over
// items of the effective thread as it stands when it is made (stored
// or synthetic, as the TUI and agents pick them), some then switched
// off or reverted.
func randomOps(r *rand.Rand, hs []model.Head, k int) []model.Op {
	var ops []model.Op
	for i := range k {
		v := thread.Apply(hs, ops, nil)
		id := fmt.Sprintf("o%02d", i)
		if v.Len() == 0 {
			ops = append(ops, insert(id, "", msg(model.RoleUser, "x", 1+r.IntN(9))))
			continue
		}
		lo := r.IntN(v.Len())
		hi := min(lo+r.IntN(4), v.Len()-1)
		var targets []model.ItemID
		for j := lo; j <= hi; j++ {
			targets = append(targets, v.ID(v.Items[j]))
		}
		var o model.Op
		switch r.IntN(6) {
		case 0:
			o = digest(id, targets, "summary", 1+r.IntN(9))
		case 1:
			var msgs []model.NewMessage
			for range r.IntN(3) {
				msgs = append(msgs, msg(model.RoleAssistant, "revised", 1+r.IntN(9)))
			}
			o = revise(id, targets, msgs...)
		case 2:
			o = op(id, model.OpSnip, targets, 0)
		case 3:
			if len(targets) > 1 && r.IntN(2) == 0 {
				// A far item joins the reordering: positions apart.
				targets = append(targets, v.ID(v.Items[r.IntN(v.Len())]))
				targets = slices.Compact(targets)
			}
			r.Shuffle(len(targets), func(a, b int) { targets[a], targets[b] = targets[b], targets[a] })
			o = op(id, model.OpResequence, targets, 0)
		case 4:
			o = insert(id, targets[0], msg(model.RoleUser, "aside", 1+r.IntN(9)), msg(model.RoleUser, "more", 1+r.IntN(9)))
		default:
			o = op(id, model.OpTag, targets, 0)
			o.Payload.Tags = []string{"t"}
		}
		ops = append(ops, o)
	}
	for i := range ops {
		switch r.IntN(8) {
		case 0:
			ops[i].Active = false
		case 1:
			ops[i].RevertedAt = new(t0)
		}
	}
	return ops
}

// TestDiffAccountsForEverything: over random threads and operations,
// nested and switched off at random, every stored message and every
// item of the effective thread is accounted for once, and a diff is the
// same every time.
func TestDiffAccountsForEverything(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(22, 4))
	for round := range 400 {
		n := 1 + r.IntN(25)
		hs := heads(n)
		ops := randomOps(r, hs, 1+r.IntN(10))
		v := thread.Apply(hs, ops, nil)
		d := diff.Compute(v, ops, hs)
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			checkAccounts(t, d, v, n)
			if again := diff.Compute(thread.Apply(hs, ops, nil), ops, hs); brief(again) != brief(d) || again.Render(nil) != d.Render(nil) {
				t.Errorf("a second diff differs:\n%s\n%s", brief(d), brief(again))
			}
			for _, h := range d.Hunks {
				if len(h.Lines) == 0 && len(h.Within) == 0 {
					t.Errorf("an empty hunk: %+v", h)
				}
			}
			if t.Failed() {
				t.Logf("ops %+v\nview %s\ndiff %s", ops, viewString(v), brief(d))
			}
		})
	}
}
