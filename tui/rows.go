package tui

import (
	"sort"

	"weft/model"
)

// The thread screen is a list of rows: the view's items, with each
// operation's marker in front of the item it stands before, and, under an
// expanded marker, the originals it hid. Rows are never materialised: a
// row number maps to what it shows in O(log markers), so a million-item
// thread costs no more to scroll than a short one.

type rowKind uint8

const (
	rowItem   rowKind = iota // an item of the effective thread
	rowMarker                // an operation's marker
	rowHidden                // an original shown under an expanded marker
	rowMore                  // "… and N more" at the end of a long expansion
)

type row struct {
	kind   rowKind
	item   int // rowItem: index in View.Items; rowHidden: index in the marker's Hidden
	marker int // rowMarker, rowHidden, rowMore: index in View.Markers
}

// maxExpanded bounds the originals listed under one expanded marker.
const maxExpanded = 500

type rowIndex struct {
	v         *model.View
	markerRow []int // the row of marker k
	extra     []int // rows marker k takes: itself, plus its originals when expanded
	total     int
}

func hiddenRows(m *model.Marker) int {
	if len(m.Hidden) > maxExpanded {
		return maxExpanded + 1
	}
	return len(m.Hidden)
}

func newRowIndex(v *model.View, expanded map[string]bool) *rowIndex {
	ri := &rowIndex{v: v, markerRow: make([]int, len(v.Markers)), extra: make([]int, len(v.Markers))}
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
func (ri *rowIndex) Len() int { return ri.total }

// At returns what row r shows.
func (ri *rowIndex) At(r int) row {
	// The last marker whose row is at or before r.
	k := sort.Search(len(ri.markerRow), func(k int) bool { return ri.markerRow[k] > r }) - 1
	if k < 0 {
		return row{kind: rowItem, item: r}
	}
	if off := r - ri.markerRow[k]; off < ri.extra[k] {
		switch {
		case off == 0:
			return row{kind: rowMarker, marker: k}
		case off-1 == maxExpanded:
			return row{kind: rowMore, marker: k}
		default:
			return row{kind: rowHidden, marker: k, item: off - 1}
		}
	}
	// An item: markers 0..k stand before it.
	return row{kind: rowItem, item: ri.v.Markers[k].At + (r - ri.markerRow[k] - ri.extra[k])}
}

// RowOfItem returns the row an item shows on.
func (ri *rowIndex) RowOfItem(i int) int {
	// Markers standing before item i are those with At <= i.
	k := sort.Search(len(ri.v.Markers), func(k int) bool { return ri.v.Markers[k].At > i })
	if k == 0 {
		return i
	}
	return i + ri.markerRow[k-1] - ri.v.Markers[k-1].At + ri.extra[k-1]
}

// RowOfMarker returns the row of marker k.
func (ri *rowIndex) RowOfMarker(k int) int { return ri.markerRow[k] }
