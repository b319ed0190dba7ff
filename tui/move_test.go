package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/tui/rows"
)

// bodyOf is item i's ID, which its header shows.
func bodyOf(t *testing.T, m *Model, i int) string {
	t.Helper()
	return string(m.view.ID(m.view.Items[i]))
}

// lineOf is the screen line whose header shows an item's ID, or -1.
func lineOf(s, id string) int {
	for i, line := range strings.Split(s, "\n") {
		if slices.Contains(strings.Fields(line), id) {
			return i
		}
	}
	return -1
}

// J and K show the moved rows in their new place while moving, with the
// cursor on the moved item; esc puts everything back, enter makes one
// resequence labelled by what moved.
func TestMovePreviewsAndLabels(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 120, 60)
	const at = 40
	m.cursor = m.rows.RowOfItem(at)
	m.scrollToCursor()
	run(t, m, m.loadBodies())
	moved, next := bodyOf(t, m, at), bodyOf(t, m, at+1)
	if s := screen(m); lineOf(s, moved) < 0 || lineOf(s, moved) > lineOf(s, next) {
		t.Fatalf("before the move, item %d is not above item %d:\n%s", at, at+1, s)
	}

	press(t, m, "J")
	s := screen(m)
	if lineOf(s, next) < 0 || lineOf(s, next) > lineOf(s, moved) {
		t.Fatalf("J did not show item %d below item %d:\n%s", at, at+1, s)
	}
	if rw := m.rowAt(m.cursor); rw.Kind != rows.Item || rw.Item != at {
		t.Fatalf("the cursor is not on the moved item: %+v", rw)
	}
	if !strings.Contains(s, "at 41/") {
		t.Errorf("the status bar does not say where the item will stand:\n%s", s)
	}
	if !strings.Contains(s, "moving item 40 down by 1 place") || !strings.Contains(s, "J/K move down/up") {
		t.Errorf("the move's hint:\n%s", s)
	}

	// esc: the thread as it was, the cursor where it was.
	send(t, m, keyEsc)
	if s := screen(m); lineOf(s, moved) > lineOf(s, next) || m.rows.At(m.cursor).Item != at {
		t.Fatalf("esc did not put the thread back:\n%s", s)
	}

	n := len(mustOps(t, svc, m.sid))
	press(t, m, "J", "J", "K")
	send(t, m, keyEnter)
	ops := mustOps(t, svc, m.sid)
	if len(ops) != n+1 || ops[n].Type != model.OpResequence {
		t.Fatalf("enter made no resequence: %+v", ops[len(ops)-1])
	}
	s = screen(m)
	if got := resequenceMarker(t, m); got != "▸ moved 1 message by 1 place by operator" {
		t.Errorf("the marker of one message moved one place says %q", got)
	}
	if !strings.Contains(s, "moved item 40 down by 1 place") {
		t.Errorf("the confirmation does not say what moved:\n%s", s)
	}
	if rw := m.rows.At(m.cursor); rw.Kind != rows.Item || rw.Item != at+1 || bodyOf(t, m, at+1) != moved {
		t.Errorf("the cursor did not follow the moved item to %d: %+v", at+1, rw)
	}
}

// A block of three moved up two places: the preview shows the block in
// its new place, and the marker counts the messages that moved.
func TestMoveBlockPreview(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 120, 60)
	m.cursor = m.rows.RowOfItem(50)
	press(t, m, "v", "j", "j") // items 50–52
	run(t, m, m.loadBodies())
	above := []string{bodyOf(t, m, 48), bodyOf(t, m, 49)}
	block := []string{bodyOf(t, m, 50), bodyOf(t, m, 51), bodyOf(t, m, 52)}
	press(t, m, "K", "K")
	s := screen(m)
	if lineOf(s, block[2]) > lineOf(s, above[0]) {
		t.Fatalf("K K did not show items 50–52 above item 48:\n%s", s)
	}
	for r := min(m.anchor, m.cursor); r <= max(m.anchor, m.cursor); r++ {
		if rw := m.rowAt(r); rw.Kind == rows.Item && (rw.Item < 50 || rw.Item > 52) {
			t.Fatalf("row %d is selected and shows item %d, not one of the block", r, rw.Item)
		}
	}
	send(t, m, keyEnter)
	if got := resequenceMarker(t, m); got != "▸ moved 2 messages by 3 places by operator" {
		t.Errorf("the marker of a block of three moved up two places says %q", got)
	}
}

// resequenceMarker is the text of the thread's resequence marker.
func resequenceMarker(t *testing.T, m *Model) string {
	t.Helper()
	for k := range m.view.Markers {
		if mk := &m.view.Markers[k]; mk.OpType == model.OpResequence {
			return ansi.Strip(m.paint().Marker(m.view, mk, 100, false))
		}
	}
	t.Fatal("no resequence marker")
	return ""
}

// q and ctrl+c quit while moving: the move is dropped, nothing is made.
func TestQuitWhileMoving(t *testing.T) {
	t.Parallel()
	for _, k := range []tea.KeyPressMsg{{Code: 'q', Text: "q"}, {Code: 'c', Mod: tea.ModCtrl}} {
		m, svc := demoModel(t, 120, 40)
		n := len(mustOps(t, svc, m.sid))
		press(t, m, "k", "J")
		if m.moving == nil {
			t.Fatal("J started no move")
		}
		_, cmd := m.Update(k)
		if cmd == nil {
			t.Fatalf("%s while moving does nothing", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s while moving does not quit", k)
		}
		if m.moving != nil || len(mustOps(t, svc, m.sid)) != n {
			t.Fatalf("%s left the move on or made an operation", k)
		}
	}
}

// The move's hint fits the width, dropping its least useful keys, never
// cut in the middle.
func TestMoveHintFits(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 80, 30)
	press(t, m, "k", "k", "J", "J")
	lines := strings.Split(screen(m), "\n")
	last := lines[len(lines)-1]
	if strings.Contains(last, "…") || !strings.Contains(last, "moving item 240 down by 2 places") || !strings.Contains(last, "enter confirm the move") {
		t.Errorf("the move's hint at 80 columns: %q", last)
	}
}
