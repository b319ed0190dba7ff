package tui

import (
	"image/color"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestThemeFollowsTerminalBackground(t *testing.T) {
	t.Parallel()
	cases := []struct {
		forced string
		bg     color.Color
		want   string
	}{
		{"", color.White, "light"},
		{"", color.Black, "dark"},
		{"high-contrast", color.White, "high-contrast"}, // --theme wins
		{"light", color.Black, "light"},
	}
	for _, c := range cases {
		m := fixedModel(t, 80, 20)
		m.opts.Theme = c.forced
		if c.forced != "" {
			m = New(m.svc, Options{Theme: c.forced})
			run(t, m, m.loadView(""))
		}
		m.Update(tea.BackgroundColorMsg{Color: c.bg})
		if got := m.styles.Palette.Name; got != c.want {
			t.Errorf("theme %q on %v: got %s, want %s", c.forced, c.bg, got, c.want)
		}
	}
}

func TestMouseWheelScrolls(t *testing.T) {
	t.Parallel()
	m := fixedModel(t, 100, 30)
	press(t, m, "g")
	before := m.cursor
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.cursor != before+3 {
		t.Errorf("wheel down: cursor %d, want %d", m.cursor, before+3)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.cursor != before {
		t.Errorf("wheel up: cursor %d, want %d", m.cursor, before)
	}
}

type fakeListener struct{ notice string }

func (fakeListener) Addr() string     { return "http://127.0.0.1:7433/mcp" }
func (fakeListener) Agents() int      { return 2 }
func (l fakeListener) Notice() string { return l.notice }

func TestStatusBarShowsListener(t *testing.T) {
	t.Parallel()
	m := fixedModel(t, 140, 20)
	m.opts.Listener = fakeListener{"port 7433 was taken; listening on 127.0.0.1:40001 instead"}
	run(t, m, m.Init())
	s := screen(m)
	if !strings.Contains(s, "mcp http://127.0.0.1:7433/mcp (2 agents)") {
		t.Errorf("listener not in the status bar:\n%s", s)
	}
	if !strings.Contains(s, "port 7433 was taken") {
		t.Errorf("fallback notice not shown:\n%s", s)
	}
}
