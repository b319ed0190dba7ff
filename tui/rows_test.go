package tui

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"weft/model"
)

// naiveRows lists every row the slow way.
func naiveRows(v *model.View, expanded map[string]bool) []row {
	var out []row
	mi := 0
	emit := func() {
		m := &v.Markers[mi]
		out = append(out, row{kind: rowMarker, marker: mi})
		if expanded[m.OpID] {
			for h := 0; h < len(m.Hidden) && h < maxExpanded; h++ {
				out = append(out, row{kind: rowHidden, marker: mi, item: h})
			}
			if len(m.Hidden) > maxExpanded {
				out = append(out, row{kind: rowMore, marker: mi})
			}
		}
		mi++
	}
	for i := range v.Items {
		for mi < len(v.Markers) && v.Markers[mi].At == i {
			emit()
		}
		out = append(out, row{kind: rowItem, item: i})
	}
	for mi < len(v.Markers) {
		emit()
	}
	return out
}

func TestRowIndexMatchesNaive(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		n := r.IntN(30)
		v := &model.View{Items: make([]model.Item, n)}
		at := 0
		expanded := map[string]bool{}
		for k := range r.IntN(8) {
			at = min(n, at+r.IntN(5))
			m := model.Marker{OpID: fmt.Sprint(k), At: at, Hidden: make([]model.Item, r.IntN(4))}
			if r.IntN(20) == 0 {
				m.Hidden = make([]model.Item, maxExpanded+3)
			}
			v.Markers = append(v.Markers, m)
			expanded[m.OpID] = r.IntN(2) == 0
		}
		ri := newRowIndex(v, expanded)
		want := naiveRows(v, expanded)
		if ri.Len() != len(want) {
			t.Fatalf("seed %d: %d rows, want %d", seed, ri.Len(), len(want))
		}
		for i, w := range want {
			if got := ri.At(i); got != w {
				t.Fatalf("seed %d: row %d = %+v, want %+v", seed, i, got, w)
			}
			if w.kind == rowItem && ri.RowOfItem(w.item) != i {
				t.Fatalf("seed %d: RowOfItem(%d) = %d, want %d", seed, w.item, ri.RowOfItem(w.item), i)
			}
			if w.kind == rowMarker && ri.RowOfMarker(w.marker) != i {
				t.Fatalf("seed %d: RowOfMarker(%d) wrong", seed, w.marker)
			}
		}
	}
}
