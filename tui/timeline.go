package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops"
)

// The timeline strip sits above the thread: message density across the
// session's time, with the cursor's place marked. T jumps to a time.

const timelineBuckets = 240

type timelineLoadedMsg struct {
	t   ops.Timeline
	sid string
}

func (m *Model) loadTimeline() tea.Cmd {
	svc, sid := m.svc, m.sid
	return func() tea.Msg {
		t, err := svc.Timeline(sid, timelineBuckets)
		if err != nil {
			return nil
		}
		return timelineLoadedMsg{t, sid}
	}
}

var bars = []rune(" ▁▂▃▄▅▆▇█")

// timelineStrip draws the density in width cells.
func (m *Model) timelineStrip() string {
	tl := m.timeline
	st := m.styles.Timeline
	if len(tl.Counts) == 0 || m.width < 30 {
		return ""
	}
	left, right := tl.Start.Local().Format("Jan 02 15:04"), tl.End.Local().Format("Jan 02 15:04")
	w := m.width - len(left) - len(right) - 4
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
	if at, ok := m.cursorTime(); ok {
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
	return ansi.Truncate(" "+st.Label.Render(left)+" "+strip+" "+st.Label.Render(right), m.width, "")
}

// cursorTime is the time of the message under the cursor.
func (m *Model) cursorTime() (time.Time, bool) {
	if m.rows == nil || m.rows.Len() == 0 {
		return time.Time{}, false
	}
	rw := m.rowAt(m.cursor)
	if rw.kind != rowItem {
		return time.Time{}, false
	}
	return m.itemTime(m.view.Items[rw.item])
}

// itemTime is when an item was written: a stored message's time (once
// its body is loaded), a synthetic item's place in the time it stands
// for (where a digest starts, the item an insertion follows).
func (m *Model) itemTime(it model.Item) (time.Time, bool) {
	if it.Seq == 0 {
		s := &m.view.Synth[it.Synth]
		switch {
		case !s.CreatedAt.IsZero():
			return s.CreatedAt, true
		case !s.TimeSpanStart.IsZero():
			return s.TimeSpanStart, true
		}
		return time.Time{}, false
	}
	if b := m.bodies[it.Seq]; b != nil {
		return b.CreatedAt, true
	}
	return time.Time{}, false
}
