// Package rows is the thread screen's rows: which row shows what
// (Index, every item with the operations' markers between them, or
// Filtered, a filter's picks; Move previews a resequence through them),
// and how each row looks (Painter). Rows are never materialised: a row
// number maps to what it shows in O(log markers), so a million-item
// thread costs no more to scroll than a short one.
package rows

import (
	"sort"

	"weft/model"
)

// The thread screen is a list of rows: the view's items, with each
// operation's marker in front of the item it stands before, and, under an
// expanded marker, the originals it hid.

// Kind is what a row shows.
type Kind uint8

// The kinds of row.
const (
	Item   Kind = iota // an item of the effective thread
	Marker             // an operation's marker
	Hidden             // an original shown under an expanded marker
	More               // "… and N more" at the end of a long expansion
)

// Row is what a row shows.
type Row struct {
	Kind   Kind
	Item   int // Item: index in View.Items; Hidden: index in the marker's Hidden
	Marker int // Marker, Hidden, More: index in View.Markers
}

// MaxExpanded bounds the originals listed under one expanded marker.
const MaxExpanded = 500

// Source is the thread's rows: every item with the markers between them
// (Index), or the items a filter picked (Filtered).
type Source interface {
	Len() int
	At(r int) Row
	RowOfItem(i int) int
	RowOfMarker(k int) int
}

// Index is every item of a view with the operations' markers in front
// of the items they stand before, and the originals of the markers
// expanded under them.
type Index struct {
	v         *model.View
	markerRow []int // the row of marker k
	extra     []int // rows marker k takes: itself, plus its originals when expanded
	total     int
}

func hiddenRows(m *model.Marker) int {
	if len(m.Hidden) > MaxExpanded {
		return MaxExpanded + 1
	}
	return len(m.Hidden)
}

// NewIndex lays out the rows of v, with the markers of the operations
// expanded (by ID) open.
func NewIndex(v *model.View, expanded map[string]bool) *Index {
	ri := &Index{v: v, markerRow: make([]int, len(v.Markers)), extra: make([]int, len(v.Markers))}
	before := 0
	for k := range v.Markers {
		m := &v.Markers[k]
		ri.extra[k] = 1
		if expanded[m.OpID] {
			ri.extra[k] += hiddenRows(m)
		}
		ri.markerRow[k] = m.At + before
		before += ri.extra[k]
	}
	ri.total = len(v.Items) + before
	return ri
}

// Len is how many rows the thread has.
func (ri *Index) Len() int { return ri.total }

// At returns what row r shows.
func (ri *Index) At(r int) Row {
	// The last marker whose row is at or before r.
	k := sort.Search(len(ri.markerRow), func(k int) bool { return ri.markerRow[k] > r }) - 1
	if k < 0 {
		return Row{Kind: Item, Item: r}
	}
	if off := r - ri.markerRow[k]; off < ri.extra[k] {
		switch {
		case off == 0:
			return Row{Kind: Marker, Marker: k}
		case off-1 == MaxExpanded:
			return Row{Kind: More, Marker: k}
		default:
			return Row{Kind: Hidden, Marker: k, Item: off - 1}
		}
	}
	// An item: markers 0..k stand before it.
	return Row{Kind: Item, Item: ri.v.Markers[k].At + (r - ri.markerRow[k] - ri.extra[k])}
}

// RowOfItem returns the row an item shows on.
func (ri *Index) RowOfItem(i int) int {
	// Markers standing before item i are those with At <= i.
	k := sort.Search(len(ri.v.Markers), func(k int) bool { return ri.v.Markers[k].At > i })
	if k == 0 {
		return i
	}
	return i + ri.markerRow[k-1] - ri.v.Markers[k-1].At + ri.extra[k-1]
}

// RowOfMarker returns the row of marker k.
func (ri *Index) RowOfMarker(k int) int { return ri.markerRow[k] }
