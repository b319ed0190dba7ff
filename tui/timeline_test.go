package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"weft/tui/rows"
)

// A message inserted in the demo's thread is dated by the message it
// follows, not now: the cursor on it stands in March on the timeline, and
// the strip still spans the thread's four days.
func TestInsertedMessageKeepsTheTimeline(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 120, 40)
	before := ansi.Strip(m.timelineStrip())
	m.cursor = m.rows.RowOfItem(30)
	m.scrollToCursor()
	run(t, m, m.loadBodies())
	after, ok := m.cursorTime()
	if !ok {
		t.Fatal("item 30 has no time")
	}
	press(t, m, "i")
	typeText(t, m, "note: checked by hand")
	send(t, m, keySave)
	press(t, m, "j", "j") // the insertion's marker, then the message
	rw := m.rows.At(m.cursor)
	if rw.Kind != rows.Item || m.view.Items[rw.Item].Seq != 0 {
		t.Fatalf("the cursor is not on the inserted message: %+v", rw)
	}
	at, ok := m.cursorTime()
	if !ok || !at.Equal(after) {
		t.Fatalf("the inserted message is dated %v, want %v (the message it follows)", at, after)
	}
	if at.After(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the inserted message is dated now: %v", at)
	}
	strip := ansi.Strip(m.timelineStrip())
	if !strings.HasPrefix(strings.TrimSpace(strip), "Mar 02 09:14") || !strings.HasSuffix(strip, "Mar 05 10:01") {
		t.Errorf("the strip changed its span: %q (was %q)", strip, before)
	}
	if cur, end := strings.Index(strip, "┃"), len(strip)-len("Mar 05 10:01")-2; cur < 0 || cur > end/2 {
		t.Errorf("the cursor on a message of day 1 stands at column %d of %d: %q", cur, end, strip)
	}
}
