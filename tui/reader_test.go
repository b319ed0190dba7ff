package tui

import (
	"fmt"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/tui/rows"
)

// longThread is a session with a short question, a long answer of n
// numbered lines ("log line 0001 …"), and a short reply after it; the
// model is open on it, 100x30, with the cursor on the long answer
// (folded).
func longThread(t testing.TB, n int) (*Model, *ops.Service) {
	t.Helper()
	svc := newService(t)
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "log line %04d: the request took %d ms\n", i, i%97)
	}
	msgs := []model.NewMessage{
		{Role: model.RoleUser, Content: "Show me the log."},
		{Role: model.RoleAssistant, Content: strings.TrimSpace(b.String())},
		{Role: model.RoleUser, Content: "Thanks, that is all."},
	}
	m := openModel(t, svc, Options{Theme: "dark"}, newSession(t, svc, "Long", msgs), 100, 30)
	press(t, m, "g", "j")
	return m, svc
}

// shows reports whether the screen has the numbered log line i.
func shows(m *Model, i int) bool {
	return strings.Contains(screen(m), fmt.Sprintf("log line %04d:", i))
}

func TestExpandedLongMessageReadsLineByLine(t *testing.T) {
	t.Parallel()
	m, _ := longThread(t, 726)
	press(t, m, "enter")
	if !shows(m, 1) || !shows(m, 20) || shows(m, 60) {
		t.Fatalf("the expanded message does not start at its first lines:\n%s", screen(m))
	}
	// j reads on a line at a time, in the same message.
	for range 10 {
		press(t, m, "j")
	}
	if rw := m.rows.At(m.cursor); rw.Kind != rows.Item || rw.Item != 1 {
		t.Fatalf("j left the long message for row kind %d item %d", rw.Kind, rw.Item)
	}
	if shows(m, 1) || !shows(m, 11) {
		t.Fatalf("ten j did not scroll ten lines:\n%s", screen(m))
	}
	if s := screen(m); !strings.Contains(s, "lines 10–36/") {
		t.Fatalf("the status bar does not say which lines show:\n%s", s)
	}
	// ctrl+d half a page on, still in the message, to line 300 and on.
	for !shows(m, 300) {
		before := screen(m)
		press(t, m, "ctrl+d")
		if screen(m) == before {
			t.Fatalf("ctrl+d stopped before line 300:\n%s", before)
		}
	}
	if rw := m.rows.At(m.cursor); rw.Item != 1 {
		t.Fatalf("ctrl+d left the long message")
	}
	// G goes to the message's end, then to the thread's.
	press(t, m, "G")
	if !shows(m, 726) || m.rows.At(m.cursor).Item != 1 {
		t.Fatalf("G did not show the message's end:\n%s", screen(m))
	}
	press(t, m, "j")
	if m.rows.At(m.cursor).Item != 2 {
		t.Fatalf("j at the message's end did not go on to the next message")
	}
	// k goes back into it at its end, and up line by line.
	press(t, m, "k")
	if m.rows.At(m.cursor).Item != 1 || !shows(m, 726) {
		t.Fatalf("k did not come back to the long message's end:\n%s", screen(m))
	}
	press(t, m, "k")
	if !shows(m, 725) || shows(m, 726) {
		t.Fatalf("k did not scroll a line up:\n%s", screen(m))
	}
	// g goes to the message's start, then to the thread's.
	press(t, m, "g")
	if !shows(m, 1) || m.rows.At(m.cursor).Item != 1 {
		t.Fatalf("g did not show the message's start:\n%s", screen(m))
	}
	press(t, m, "g")
	if m.cursor != 0 {
		t.Fatalf("a second g did not go to the thread's start")
	}
}

func TestSearchHitScrollsToItsLine(t *testing.T) {
	t.Parallel()
	m, _ := longThread(t, 726)
	press(t, m, "G", "/")
	typeText(t, m, "log line 0299")
	if len(m.search.Hits()) == 0 {
		t.Fatal("no hit")
	}
	send(t, m, keyEnter)
	if !shows(m, 299) {
		t.Fatalf("the hit's line is not on the screen:\n%s", screen(m))
	}
	if rw := m.rows.At(m.cursor); rw.Item != 1 {
		t.Fatalf("the cursor is not on the message with the hit")
	}
}

// TestExpandingAHugeMessageRendersLittleMarkdown: unfolding a message of
// thousands of lines renders only its start as markdown (the rest is
// wrapped as plain text), so the screen does not freeze; every line can
// still be reached.
func TestExpandingAHugeMessageRendersLittleMarkdown(t *testing.T) {
	t.Parallel()
	m, _ := longThread(t, 5000)
	press(t, m, "enter")
	lines := m.rowLines(m.cursor)
	if len(lines) < 5000 {
		t.Fatalf("the unfolded message has %d lines, want all 5,000", len(lines))
	}
	if !strings.Contains(lines[0], "plain text past it") {
		t.Fatalf("the unfolded message's header does not say where markdown stops: %q", lines[0])
	}
	press(t, m, "G")
	if !shows(m, 5000) {
		t.Fatalf("the last line cannot be reached:\n%s", screen(m))
	}
}

// A hit in a message already unfolded, far below the screen, is scrolled
// to as well (the e2e found it: the line was "shown" since the message
// was open, and the screen stayed at its start).
func TestSearchHitInAnOpenMessageScrollsToItsLine(t *testing.T) {
	t.Parallel()
	m, _ := longThread(t, 500)
	send(t, m, keyEnter) // unfold it
	if !shows(m, 1) {
		t.Fatalf("not unfolded:\n%s", screen(m))
	}
	press(t, m, "/")
	typeText(t, m, "log line 0299")
	send(t, m, keyEnter)
	if !shows(m, 299) {
		t.Fatalf("the hit's line is not on the screen:\n%s", screen(m))
	}
}

// BenchmarkExpandHugeMessage is the time from enter on a folded
// 5,000-line message to its unfolded rows being drawn: markdown is
// rendered for its first 16 KB only, so it stays in milliseconds (it was
// seconds when the whole message went through glamour).
func BenchmarkExpandHugeMessage(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		m, _ := longThread(b, 5000)
		b.StartTimer()
		press(b, m, "enter")
		_ = m.render()
	}
}
