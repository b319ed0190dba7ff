package rows

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"weft/model"
)

// naiveRows lists every row the slow way.
func naiveRows(v *model.View, expanded map[string]bool) []Row {
	var out []Row
	mi := 0
	emit := func() {
		m := &v.Markers[mi]
		out = append(out, Row{Kind: Marker, Marker: mi})
		if expanded[m.OpID] {
			for h := 0; h < len(m.Hidden) && h < MaxExpanded; h++ {
				out = append(out, Row{Kind: Hidden, Marker: mi, Item: h})
			}
			if len(m.Hidden) > MaxExpanded {
				out = append(out, Row{Kind: More, Marker: mi})
			}
		}
		mi++
	}
	for i := range v.Items {
		for mi < len(v.Markers) && v.Markers[mi].At == i {
			emit()
		}
		out = append(out, Row{Kind: Item, Item: i})
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
				m.Hidden = make([]model.Item, MaxExpanded+3)
			}
			v.Markers = append(v.Markers, m)
			expanded[m.OpID] = r.IntN(2) == 0
		}
		ri := NewIndex(v, expanded)
		want := naiveRows(v, expanded)
		if ri.Len() != len(want) {
			t.Fatalf("seed %d: %d rows, want %d", seed, ri.Len(), len(want))
		}
		for i, w := range want {
			if got := ri.At(i); got != w {
				t.Fatalf("seed %d: row %d = %+v, want %+v", seed, i, got, w)
			}
			if w.Kind == Item && ri.RowOfItem(w.Item) != i {
				t.Fatalf("seed %d: RowOfItem(%d) = %d, want %d", seed, w.Item, ri.RowOfItem(w.Item), i)
			}
			if w.Kind == Marker && ri.RowOfMarker(w.Marker) != i {
				t.Fatalf("seed %d: RowOfMarker(%d) wrong", seed, w.Marker)
			}
		}
	}
}
