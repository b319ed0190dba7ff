package tui

import (
	"context"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/ops"
	"weft/tui/dialog"
)

// Typing in the sessions panel filters in a command, as the search does:
// a result for an older filter is dropped.
func TestSessionsFilterRunsInACommand(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	if _, err := svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "Another thread"}); err != nil {
		t.Fatal(err)
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	p := m.dialogs.Front().(*dialog.Sessions)
	if len(p.Shown()) != 2 {
		t.Fatalf("%d sessions shown, want 2", len(p.Shown()))
	}
	_, older := m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	_, newer := m.Update(tea.KeyPressMsg{Code: 'n', Text: "n"})
	if len(p.Shown()) != 2 {
		t.Fatal("Update filtered the sessions itself")
	}
	run(t, m, newer)
	want := p.Shown()
	run(t, m, older)
	if got := p.Shown(); len(got) != len(want) || p.Filter() != "an" {
		t.Fatalf("the result for %q replaced the one for %q: %v, want %v", "a", p.Filter(), got, want)
	}
	if len(want) == 0 || want[0].Title != "Another thread" {
		t.Fatalf("filter %q ranked %v first", p.Filter(), want)
	}
}
