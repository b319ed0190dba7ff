package rows

import (
	"math/rand/v2"
	"testing"
)

// ItemAt answers for one position what Order lists for the whole span,
// and leaves every other position as it is.
func TestMoveItemAtFollowsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + r.IntN(30)
		first := r.IntN(n)
		last := first + r.IntN(n-first)
		by := r.IntN(n) - first // within -first .. n-1-first
		by = min(by, n-1-last)
		mv := Move{First: first, Last: last, By: by}
		lo, hi := mv.Span()
		order := mv.Order()
		if by != 0 && len(order) != hi-lo+1 {
			t.Fatalf("%+v: order %v for span %d..%d", mv, order, lo, hi)
		}
		for i := range n {
			want := i
			if by != 0 && i >= lo && i <= hi {
				want = order[i-lo]
			}
			if got := mv.ItemAt(i); got != want {
				t.Fatalf("%+v: ItemAt(%d) = %d, want %d (order %v)", mv, i, got, want, order)
			}
		}
	}
}
