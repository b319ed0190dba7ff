// Package timeline draws the strip above the thread: how many messages
// were written when, across the session's time, with the cursor's
// place marked.
package timeline

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/ops"
	"weft/themes"
)

// Buckets is how many spans of time the strip asks the service to
// count messages in; the strip sums them into its columns.
const Buckets = 240

var bars = []rune(" ▁▂▃▄▅▆▇█")

// Strip draws the density of tl in width cells, with the cursor's time
// (at, when hasAt) marked; "" when there is nothing to draw or no room.
func Strip(tl ops.Timeline, at time.Time, hasAt bool, width int, styles *themes.Styles) string {
	st := styles.Timeline
	if len(tl.Counts) == 0 || width < 30 {
		return ""
	}
	left, right := tl.Start.Local().Format("Jan 02 15:04"), tl.End.Local().Format("Jan 02 15:04")
	// Messages set aside far before or after the rest are counted at
	// the ends: 2◂ Mar 02 09:00 … Mar 02 13:00 ▸1.
	if tl.Before > 0 {
		left = english.Thousands(tl.Before) + "◂ " + left
	}
	if tl.After > 0 {
		right += " ▸" + english.Thousands(tl.After)
	}
	w := width - ansi.StringWidth(left) - ansi.StringWidth(right) - 4
	if w < 10 {
		return ""
	}
	cols := make([]int, w)
	for i, c := range tl.Counts {
		cols[i*w/len(tl.Counts)] += c
	}
	peak := 1
	for _, c := range cols {
		peak = max(peak, c)
	}
	cursorCol := -1
	if hasAt {
		cursorCol = tl.Bucket(at) * w / len(tl.Counts)
	}
	// Styled in three runs (before, the cursor, after): one Render per
	// run, not per column, since the strip is drawn on every frame.
	var before, after strings.Builder
	for i, c := range cols {
		ch := bars[0]
		if c > 0 {
			ch = bars[1+(c*(len(bars)-2))/peak]
		}
		switch {
		case i < cursorCol || cursorCol < 0:
			before.WriteRune(ch)
		case i > cursorCol:
			after.WriteRune(ch)
		}
	}
	strip := st.Bar.Render(before.String())
	if cursorCol >= 0 {
		strip += st.Cursor.Render("┃") + st.Bar.Render(after.String())
	}
	return ansi.Truncate(" "+st.Label.Render(left)+" "+strip+" "+st.Label.Render(right), width, "")
}
