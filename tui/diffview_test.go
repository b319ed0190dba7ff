package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/ops"
	"weft/tui/diffview"
	"weft/tui/rows"
)

// D opens the diff of the open session in front of the thread: what
// the digest took out and put in, under its header; it scrolls, keeps
// to the screen when resized, and esc closes it. Help lists D.
func TestDiffView(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	sid := newSession(t, svc, "limiter", limiterTurns(12))
	start, end := 2, 5
	res, err := svc.DigestMessages(context.Background(), ops.DigestArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end}, Summary: "The limiter, settled."})
	if err != nil {
		t.Fatal(err)
	}
	m := openModel(t, svc, Options{}, sid, 120, 30)

	press(t, m, "D")
	if _, ok := m.dialogs.Front().(*diffview.View); !ok {
		t.Fatalf("D opened %T", m.dialogs.Front())
	}
	s := screen(m)
	for _, want := range []string{"Diff of limiter", "@@ digest " + res.OperationID + " by ", ": m3..m6 (4 messages, ", "-m3", "Question 1 about the limiter?", "+" + res.OperationID + "/0", "The limiter, settled."} {
		if !strings.Contains(s, want) {
			t.Errorf("the diff view does not show %q:\n%s", want, s)
		}
	}
	// An agent's snip while the view is open: the view shows it.
	at := 8
	if _, err := svc.SnipMessages(ops.WithAuthor(context.Background(), "claude"), ops.SnipArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &at, EndIdx: &at}}); err != nil {
		t.Fatal(err)
	}
	run(t, m, m.loadView(sid))
	if _, ok := m.dialogs.Front().(*diffview.View); !ok {
		t.Fatalf("after a write the front dialog is %T", m.dialogs.Front())
	}
	press(t, m, "G")
	if s := screen(m); !strings.Contains(s, "@@ snip ") || !strings.Contains(s, " by claude: m12 (1 message") {
		t.Errorf("the view does not show the agent's snip:\n%s", s)
	}
	press(t, m, "g")
	// The view stays within the screen when it shrinks.
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 100, Height: 16})
	run(t, m, cmd)
	if s := screen(m); !strings.Contains(s, "Diff of limiter") || strings.Count(s, "\n")+1 > 16 {
		t.Errorf("after a resize:\n%s", s)
	}
	// enter goes to the operation in the thread, and closes the view.
	press(t, m, "n", "enter")
	if m.dialogs.Front() != nil {
		t.Fatalf("enter left %T open", m.dialogs.Front())
	}
	if rw := m.rows.At(m.cursor); rw.Kind != rows.Marker || m.view.Markers[rw.Marker].OpType != "snip" {
		t.Errorf("enter on the snip's lines put the cursor on %+v", rw)
	}
	press(t, m, "D", "esc")
	if m.dialogs.Front() != nil {
		t.Fatalf("esc left %T open", m.dialogs.Front())
	}
	if s := screen(m); strings.Contains(s, "Diff of limiter") {
		t.Errorf("the diff view still shows:\n%s", s)
	}
	// A write after it closed does not open it again.
	run(t, m, m.loadView(sid))
	if m.dialogs.Front() != nil {
		t.Errorf("a reload opened %T", m.dialogs.Front())
	}
	press(t, m, "?")
	if s := screen(m); !strings.Contains(s, "diff: stored → effective") {
		t.Errorf("help does not list D:\n%s", s)
	}
}
