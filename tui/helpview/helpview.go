// Package helpview lays the TUI's full help out: its keys in as many
// columns as fit the width, those that do nothing now greyed.
package helpview

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"weft/themes"
)

// Entry is a key of the help: its key, what it does, and whether it
// does anything now.
type Entry struct {
	Key, Desc string
	Usable    bool
}

// gap is the room between two columns.
const gap = 4

// Lines lays entries out in as many columns as fit width (fewer
// columns, more rows on a narrow screen), keys that do nothing now
// greyed, and under them note, which says what grey means.
func Lines(entries []Entry, width int, st *themes.Styles, note string) []string {
	grey := st.Thread.Dimmed.Faint(true)
	if len(entries) == 0 {
		return []string{grey.Render(ansi.Truncate(note, width, "…"))}
	}
	keyW := func(col []Entry) (kw, dw int) {
		for _, e := range col {
			kw, dw = max(kw, ansi.StringWidth(e.Key)), max(dw, ansi.StringWidth(e.Desc))
		}
		return kw, dw
	}
	var cols [][]Entry
	for c := len(entries); c >= 1; c-- {
		rows := (len(entries) + c - 1) / c
		cols = cols[:0]
		total := 0
		for i := 0; i < len(entries); i += rows {
			col := entries[i:min(i+rows, len(entries))]
			kw, dw := keyW(col)
			total += kw + 1 + dw + gap
			cols = append(cols, col)
		}
		if total-gap <= width || c == 1 {
			break
		}
	}
	var lines []string
	for r := 0; r < len(cols[0]); r++ {
		var b strings.Builder
		for ci, col := range cols {
			if r >= len(col) {
				continue
			}
			kw, dw := keyW(col)
			e := col[r]
			ks, ds := st.Help.Key, st.Help.Desc
			if !e.Usable {
				ks, ds = grey, grey
			}
			cell := ks.Render(e.Key+strings.Repeat(" ", max(kw-ansi.StringWidth(e.Key), 0))) + " " + ds.Render(e.Desc)
			if ci < len(cols)-1 {
				cell += strings.Repeat(" ", dw-ansi.StringWidth(e.Desc)+gap)
			}
			b.WriteString(cell)
		}
		lines = append(lines, ansi.Truncate(b.String(), width, ""))
	}
	return append(lines, grey.Render(ansi.Truncate(note, width, "…")))
}
