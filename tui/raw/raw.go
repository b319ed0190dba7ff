// Package raw is what the raw view (R) draws beside the stored thread:
// the stretch of stored messages each operation acts on, as extents in
// lanes beside the messages (overlapping ones side by side), and the
// operations named where their extents start. The view itself is laid
// out here too: an item per stored message, in the order stored.
package raw

import (
	"slices"
	"strings"

	"weft/internal/termsafe"
	"weft/model"
	"weft/themes"
)

// Lanes is how many extents are drawn side by side; more overlapping
// operations share the last lane.
const Lanes = 4

// Extent is the stretch of stored messages an operation targets.
type Extent struct {
	Op       model.Op
	Lo, Hi   uint64 // first and last stored message it targets
	Lane     int
	Inactive bool // switched off, reverted or waiting for tags
}

// Extents are the operations' extents, by first stored message.
type Extents []Extent

// NewView lays out the stored messages 1..n as a view, with the tags
// the effective view gives them.
func NewView(n int, eff *model.View) *model.View {
	v := &model.View{Items: make([]model.Item, n), TagSets: eff.TagSets, Synth: eff.Synth}
	for i := range v.Items {
		v.Items[i].Seq = uint64(i + 1)
		if w := eff.IndexOfSeq(uint64(i + 1)); w >= 0 {
			v.Items[i].Tags = eff.Items[w].Tags
		}
	}
	return v
}

// Find finds each operation's stretch of stored messages and gives
// overlapping ones different lanes.
func Find(ops []model.Op, eff *model.View) Extents {
	var out Extents
	for _, op := range ops {
		var lo, hi uint64
		ids := op.Targets
		if op.Anchor != "" {
			ids = append(slices.Clip(ids), op.Anchor)
		}
		for _, id := range ids {
			if seq, ok := id.Seq(); ok {
				if lo == 0 || seq < lo {
					lo = seq
				}
				hi = max(hi, seq)
			}
		}
		if lo == 0 {
			continue // only synthetic targets: no stored stretch to mark
		}
		st := eff.Status[op.ID]
		out = append(out, Extent{Op: op, Lo: lo, Hi: hi, Inactive: st == model.StatusInactive || st == model.StatusReverted || op.RevertedAt != nil || !op.Active})
	}
	slices.SortStableFunc(out, func(a, b Extent) int { return int(a.Lo) - int(b.Lo) })
	var laneEnd [Lanes]uint64
	for i := range out {
		lane := Lanes - 1
		for l := range Lanes {
			if laneEnd[l] < out[i].Lo {
				lane = l
				break
			}
		}
		out[i].Lane = lane
		laneEnd[lane] = max(laneEnd[lane], out[i].Hi)
	}
	return out
}

// Gutter draws the lanes beside stored message seq: line is the row's
// line (0 is the header), last whether it is the row's last line.
func (x Extents) Gutter(seq uint64, line int, last bool, styles *themes.Styles) string {
	var cells [Lanes]string
	for l := range cells {
		cells[l] = " "
	}
	// Extents are sorted by start: only those starting at or before seq
	// can cover it.
	n, _ := slices.BinarySearchFunc(x, seq+1, func(e Extent, s uint64) int { return int(e.Lo) - int(s) })
	for _, e := range x[:n] {
		if e.Hi < seq {
			continue
		}
		c := "│"
		switch {
		case e.Lo == seq && line == 0 && e.Hi == seq && last:
			c = "╶"
		case e.Lo == seq && line == 0:
			c = "┌"
		case e.Hi == seq && last:
			c = "└"
		}
		st := styles.Thread.Marker
		if e.Inactive {
			st = styles.Thread.Dimmed
		}
		cells[e.Lane] = st.Render(c)
	}
	return strings.Join(cells[:], "")
}

// Labels names the operations whose extents start at seq, for the
// header of its row.
func (x Extents) Labels(seq uint64, styles *themes.Styles) string {
	var labels []string
	for _, e := range x {
		if e.Lo > seq {
			break
		}
		if e.Lo != seq {
			continue
		}
		label := string(e.Op.Type) + " by " + termsafe.Line(e.Op.Author)
		if e.Inactive {
			label += " (off)"
		}
		labels = append(labels, label)
	}
	if len(labels) == 0 {
		return ""
	}
	return styles.Thread.Marker.Render("◆ " + strings.Join(labels, ", "))
}
