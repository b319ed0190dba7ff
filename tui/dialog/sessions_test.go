package dialog

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/ops"
	"weft/themes"
)

// TestSessionsShowRoomAndInterface: a session's room and interface are
// a column of their own, beside where it came from, when any session
// listed has them; a list without rooms is drawn as before.
func TestSessionsShowRoomAndInterface(t *testing.T) {
	st := themes.New(themes.Default(true), true)
	draw := func(width int, list ...ops.SessionOut) []string {
		t.Helper()
		p := NewSessions(st, nil)
		titles := make([]string, len(list))
		for i, s := range list {
			titles[i] = s.Title
		}
		p.HandleMsg(p.SetSessions(list, titles)())
		return strings.Split(ansi.Strip(p.View(width, st)), "\n")
	}
	line := func(lines []string, title string) string {
		for _, l := range lines {
			if strings.Contains(l, title) {
				return l
			}
		}
		t.Fatalf("no line for %q in\n%s", title, strings.Join(lines, "\n"))
		return ""
	}
	matrix := ops.SessionOut{SessionID: "s1", Title: "standup", Room: "!general:example.org", Interface: "matrix", Source: "bot"}
	bare := ops.SessionOut{SessionID: "s2", Title: "notes", Room: "lobby"}
	solo := ops.SessionOut{SessionID: "s3", Title: "shell", Interface: "cli"}
	plain := ops.SessionOut{SessionID: "s4", Title: "plain"}

	lines := draw(150, matrix, bare, solo, plain)
	for _, tt := range []struct{ title, shows string }{
		{"standup", "  !general:example.org (m…  …  "},
		{"notes", "  lobby                     …  "},
		{"shell", "  (cli)                     …  "},
		{"plain", "                            …  "},
	} {
		if l := line(lines, tt.title); !strings.Contains(l, tt.shows) {
			t.Errorf("%s: %q, want it to show %q", tt.title, l, tt.shows)
		}
	}
	// The columns stay aligned: the counts end at one place on every line.
	at := -1
	for _, title := range []string{"standup", "notes", "shell", "plain"} {
		l := line(lines, title)
		i := ansi.StringWidth(l[:strings.Index(l, "0 msgs")]) // in cells: "…" is one cell of three bytes
		if at >= 0 && i != at {
			t.Errorf("%s: the counts at %d, the others at %d", title, i, at)
		}
		at = i
	}
	// Without a room or an interface anywhere, there is no such column:
	// where the session came from shows in its place.
	if l := line(draw(150, plain), "plain"); !strings.Contains(l, "  weft         …  ") {
		t.Errorf("a list without rooms: %q", l)
	}
	// On a narrow screen the room gives way before the dates and counts.
	if l := line(draw(70, matrix, plain), "standup"); strings.Contains(l, "general") || !strings.Contains(l, "msgs") {
		t.Errorf("narrow: %q", l)
	}
}
