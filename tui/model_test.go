package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/demo"
	"weft/ops"
	"weft/store"
)

// run executes a command and feeds what it returns back into the model,
// the way the program would, skipping commands that wait (ticks).
func run(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(300 * time.Millisecond):
		return // a tick: not needed to test the state
	}
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			run(t, m, c)
		}
		return
	}
	if msg == nil {
		return
	}
	_, next := m.Update(msg)
	run(t, m, next)
}

func demoModel(t *testing.T, w, h int) (*Model, *ops.Service) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "demo.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := ops.New(st)
	if _, err := demo.Seed(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	m := New(svc, Options{Theme: "dark"})
	run(t, m, m.loadView(""))
	_, cmd := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	run(t, m, cmd)
	return m, svc
}

func press(t *testing.T, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "ctrl+d":
			msg = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
		case "ctrl+u":
			msg = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		_, cmd := m.Update(msg)
		run(t, m, cmd)
	}
}

func screen(m *Model) string { return ansi.Strip(m.render()) }

func TestOpensAtTheLatestMessage(t *testing.T) {
	m, _ := demoModel(t, 100, 30)
	s := screen(m)
	if !strings.Contains(s, "Rollout is at 100%") && !strings.Contains(s, "The limiter is at 100%") {
		t.Fatalf("first screen is not the end of the thread:\n%s", s)
	}
	if lines := strings.Count(s, "\n") + 1; lines != 30 {
		t.Errorf("%d lines, want 30", lines)
	}
	if !strings.Contains(s, "Rate limiter for the API gateway") || !strings.Contains(s, "tokens") {
		t.Errorf("status bar:\n%s", s)
	}
}

func TestNavigateAndExpandMarker(t *testing.T) {
	m, _ := demoModel(t, 100, 30)
	press(t, m, "g")
	s := screen(m)
	if !strings.Contains(s, "▸ digest of 10 messages by claude-code") {
		t.Fatalf("top of the thread has no digest marker:\n%s", s)
	}
	press(t, m, "enter")
	s = screen(m)
	if !strings.Contains(s, "▾ digest of 10 messages") || !strings.Contains(s, "Morning! I want to add rate limiting") {
		t.Fatalf("expanded marker does not show the originals:\n%s", s)
	}
	press(t, m, "enter")
	if s = screen(m); strings.Contains(s, "Morning! I want to add rate limiting") {
		t.Fatalf("collapsed marker still shows the originals:\n%s", s)
	}
	press(t, m, "j", "j", "ctrl+d", "ctrl+u", "G")
	if m.cursor != m.rows.Len()-1 {
		t.Errorf("G: cursor %d, want %d", m.cursor, m.rows.Len()-1)
	}
}

func TestLiveEditKeepsCursor(t *testing.T) {
	m, svc := demoModel(t, 100, 30)
	press(t, m, "g", "j", "j", "j", "j")
	before := m.view.ID(m.view.Items[m.rows.At(m.cursor).item])
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	start, end := 0, 1
	if _, err := svc.SnipMessages(ctx, ops.SnipArgs{Selection: ops.Selection{StartIdx: &start, EndIdx: &end}}); err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(eventMsg(ops.Event{SessionID: m.sid, What: "snip of 0–1", Author: "claude-code"}))
	run(t, m, cmd)
	after := m.view.ID(m.view.Items[m.rows.At(m.cursor).item])
	if before != after {
		t.Errorf("cursor moved from %s to %s", before, after)
	}
	if !strings.Contains(screen(m), "snip of 0–1 by claude-code") {
		t.Errorf("the edit was not announced:\n%s", screen(m))
	}
}
