package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
	"weft/tui/rows"
	"weft/tui/timeline"
)

// The timeline strip sits above the thread (tui/timeline draws it); it
// is loaded with each view, and marks the cursor's time. T jumps to a
// time.

type timelineLoadedMsg struct {
	t   ops.Timeline
	sid string
}

func (m *Model) loadTimeline() tea.Cmd {
	svc, sid := m.svc, m.sid
	return func() tea.Msg {
		t, err := svc.Timeline(sid, timeline.Buckets)
		if err != nil {
			return nil
		}
		return timelineLoadedMsg{t, sid}
	}
}

// timelineStrip draws the strip for the cursor's place.
func (m *Model) timelineStrip() string {
	at, ok := m.cursorTime()
	return timeline.Strip(m.timeline, at, ok, m.width, m.styles)
}

// cursorTime is the time of the message under the cursor.
func (m *Model) cursorTime() (time.Time, bool) {
	if m.rows == nil || m.rows.Len() == 0 {
		return time.Time{}, false
	}
	rw := m.rowAt(m.cursor)
	if rw.Kind != rows.Item {
		return time.Time{}, false
	}
	return m.itemTime(m.view.Items[rw.Item])
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
