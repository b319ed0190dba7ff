package rows

import (
	"sort"

	"weft/model"
)

// Filtered is the items a filter picked, in thread order; markers are
// not rows here.
type Filtered struct {
	v   *model.View
	idx []int // item indices, ascending
}

// NewFiltered is the rows of v's items idx (ascending).
func NewFiltered(v *model.View, idx []int) *Filtered { return &Filtered{v: v, idx: idx} }

// Len is how many items the filter shows.
func (f *Filtered) Len() int { return len(f.idx) }

// At is the r-th item shown.
func (f *Filtered) At(r int) Row { return Row{Kind: Item, Item: f.idx[r]} }

// RowOfItem is the row of item i, or of the first item shown after it
// (the last one, past the end) when the filter hides it.
func (f *Filtered) RowOfItem(i int) int {
	return min(sort.SearchInts(f.idx, i), max(len(f.idx)-1, 0))
}

// RowOfMarker is the row of the item the marker stands before.
func (f *Filtered) RowOfMarker(k int) int { return f.RowOfItem(f.v.Markers[k].At) }

// Shows reports whether item i is among the picks (an item hidden by an
// operation, i < 0, is not).
func (f *Filtered) Shows(i int) bool {
	r := sort.SearchInts(f.idx, i)
	return i >= 0 && r < len(f.idx) && f.idx[r] == i
}
