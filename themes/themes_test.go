package themes

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

func TestBuiltinThemes(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "dark,high-contrast,light" {
		t.Fatalf("themes: %s", got)
	}
	for _, name := range Names() {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for field, c := range map[string]any{"Fg": p.Fg, "Bg": p.Bg, "Accent": p.Accent, "User": p.User, "Match": p.Match, "Error": p.Error, "FgSubtle": p.FgSubtle} {
			if c == nil {
				t.Errorf("%s: %s is not set", name, field)
			}
		}
	}
	if _, err := Lookup("solarized"); err == nil || !strings.Contains(err.Error(), "dark, high-contrast, light") {
		t.Errorf("unknown theme: %v", err)
	}
	if !Default(true).Dark || Default(false).Dark {
		t.Error("Default does not follow the background")
	}
}

func TestNoColorKeepsShapes(t *testing.T) {
	s := New(Default(true), true)
	if _, ok := s.Thread.Body.GetForeground().(lipgloss.NoColor); !ok {
		t.Errorf("NO_COLOR left a foreground: %v", s.Thread.Body.GetForeground())
	}
	if !s.Thread.Cursor.GetBold() {
		t.Error("NO_COLOR dropped bold")
	}
}
