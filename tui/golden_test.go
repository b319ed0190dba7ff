package tui

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"weft/demo"
	"weft/ops"
)

// Screens are compared as text (colour stripped) at a fixed size, in UTC
// and on a fixed clock, so they read the same on every machine. Run
// `go test ./tui -run Golden -update` after a deliberate change and read
// the diff.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}

var opIDPattern = regexp.MustCompile(`\b[0-9a-z]{16}\b`)

func fixedModel(t *testing.T, w, h int) *Model {
	t.Helper()
	now := time.Date(2026, 3, 6, 9, 0, 0, 0, time.UTC)
	svc := newService(t, ops.WithClock(func() time.Time { return now }))
	if _, err := demo.Seed(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	return openModel(t, svc, Options{Theme: "dark"}, "", w, h)
}

func TestGoldenScreens(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		keys []string
	}{
		{"open", nil},
		{"top_marker_expanded", []string{"g", "enter"}},
		{"selection", []string{"g", "j", "j", "v", "j", "j"}},
		{"operations_panel", []string{"o"}},
		{"full_help", []string{"?"}},
		{"raw_view", []string{"g", "R"}},
		{"digest_dialog", []string{"g", "j", "j", "v", "j", "d"}},
		{"search", []string{"/", "redis"}},
		{"sessions", []string{"tab"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := fixedModel(t, 100, 30)
			for _, k := range c.keys {
				switch k {
				case "enter":
					send(t, m, keyEnter)
				case "tab":
					send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
				case "redis":
					typeText(t, m, k)
				default:
					press(t, m, k)
				}
			}
			// Operation IDs carry randomness; the rest is fixed.
			out := opIDPattern.ReplaceAllString(screen(m), "<op-id>")
			golden.RequireEqual(t, []byte(out+"\n"))
		})
	}
}

func TestShortHelpFollowsState(t *testing.T) {
	t.Parallel()
	m := fixedModel(t, 160, 30)
	help := func() string {
		lines := strings.Split(screen(m), "\n")
		return lines[len(lines)-1]
	}
	if h := help(); !strings.Contains(h, "digest") || strings.Contains(h, "confirm the move") || strings.Contains(h, "redo") {
		t.Errorf("plain view help: %q", h)
	}
	if m.keys.Commit.Enabled() {
		t.Error("confirm enabled with nothing to confirm")
	}
	press(t, m, "K")
	if h := help(); !strings.Contains(h, "moving item 242 up by 1 place") || !strings.Contains(h, "enter confirm the move") {
		t.Errorf("moving hint: %q", h)
	}
	if h := m.help.ShortHelpView(m.shortHelp()); !strings.Contains(h, "confirm the move") || strings.Contains(h, "digest") {
		t.Errorf("moving help: %q", h)
	}
	if m.keys.Digest.Enabled() || !m.keys.Commit.Enabled() {
		t.Error("digest enabled or confirm disabled while moving")
	}
	send(t, m, keyEsc)
	press(t, m, "u")
	if !m.keys.Redo.Enabled() {
		t.Error("redo disabled after an undo")
	}
	m.status = "" // the undo's message
	press(t, m, "R")
	if h := help(); !strings.Contains(h, "raw/effective") || strings.Contains(h, "search") {
		t.Errorf("raw view help: %q", h)
	}
}
