package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/tui/dialog"
)

// M shows the session's memory policy as key=value lines and ctrl+s
// sets what they say: the policy applies at once (the oldest turns
// digested by memory) and the status bar says so. A value that does not
// hold keeps the dialog open with the reason, and the file as it was;
// "off" removes the policy.
func TestMemoryDialog(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	sid := newSession(t, svc, "limiter", limiterTurns(12))
	m := openModel(t, svc, Options{}, sid, 160, 40)

	press(t, m, "M")
	d, ok := m.dialogs.Front().(*dialog.Text)
	if !ok || !strings.Contains(d.Value(), "max_active_turns=10") {
		t.Fatalf("M opened %T with %q", m.dialogs.Front(), d.Value())
	}
	// A value the policy does not take: refused, in the dialog.
	d.SetValue(strings.Replace(d.Value(), "max_active_turns=10", "max_active_turns=0", 1))
	send(t, m, keySave)
	if m.dialogs.Front() != d || !strings.Contains(d.Said(), "max_active_turns 0 must be 1 or more") {
		t.Fatalf("a bad policy: dialog %T says %q", m.dialogs.Front(), d.Said())
	}
	if info, _, _ := svc.View(sid); info.Memory != nil {
		t.Fatal("a refused policy was set")
	}
	// The seed's policy: set, and applied at once.
	d.SetValue(strings.Replace(d.Value(), "max_active_turns=0", "max_active_turns=10", 1))
	send(t, m, keySave)
	if m.dialogs.Front() != nil {
		t.Fatalf("the dialog stays open: %q", d.Said())
	}
	if info, v, _ := svc.View(sid); info.Memory == nil || !v.IsSummary(0) || !strings.Contains(m.statusBar(), "memory") {
		t.Errorf("policy %+v, summary first %v, status bar %q", info.Memory, v.IsSummary(0), m.statusBar())
	}
	// The policy's digest is marked as the policy's in the thread.
	press(t, m, "g")
	if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, "digest of 10 messages by memory (policy: turns)") {
		t.Errorf("no marker of the policy's digest on the screen:\n%s", screen)
	}
	// off removes it; what it made stays.
	press(t, m, "M")
	d = m.dialogs.Front().(*dialog.Text)
	d.SetValue("off")
	send(t, m, keySave)
	if info, v, _ := svc.View(sid); info.Memory != nil || !v.IsSummary(0) {
		t.Errorf("after off: policy %+v, summary first %v", info.Memory, v.IsSummary(0))
	}
}
