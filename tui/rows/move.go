package rows

// Move is a resequence being previewed: items First..Last moved By
// places (down when By > 0). The rows show the items through its order
// (ItemAt); markers stay where they stand, as resequence leaves them.
type Move struct {
	First, Last, By int
}

// Span is the range of items the move reorders.
func (mv *Move) Span() (lo, hi int) {
	return min(mv.First, mv.First+mv.By), max(mv.Last, mv.Last+mv.By)
}

// Order is the new order of the span, as resequence_messages takes it:
// position lo+k gets item order[k].
func (mv *Move) Order() []int {
	var order []int
	if mv.By > 0 {
		for i := mv.Last + 1; i <= mv.Last+mv.By; i++ {
			order = append(order, i)
		}
		for i := mv.First; i <= mv.Last; i++ {
			order = append(order, i)
		}
	} else {
		for i := mv.First; i <= mv.Last; i++ {
			order = append(order, i)
		}
		for i := mv.First + mv.By; i < mv.First; i++ {
			order = append(order, i)
		}
	}
	return order
}

// ItemAt is the item the preview shows at position i: the order above,
// computed for the one position, so a long move costs nothing per row.
func (mv *Move) ItemAt(i int) int {
	lo, hi := mv.Span()
	if i < lo || i > hi || mv.By == 0 {
		return i
	}
	n := mv.Last - mv.First + 1
	if mv.By > 0 {
		if k := i - lo; k < mv.By {
			return mv.Last + 1 + k // the items the block passed, moved up
		} else {
			return mv.First + k - mv.By
		}
	}
	if k := i - lo; k < n {
		return mv.First + k
	} else {
		return mv.First + mv.By + k - n
	}
}
