package tui

import (
	"strings"
	"testing"

	"weft/internal/english"
	"weft/tui/rows"
)

// Positions count from 0 everywhere in the TUI, as the tools' indices
// do: the status bar and the dialogs name the same item by the same
// number.
func TestPositionsCountFromZeroEverywhere(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	n := m.view.Len()
	press(t, m, "g", "j") // the first item, after the digest's marker
	if got := m.rows.At(m.cursor); got.Kind != rows.Item || got.Item != 0 {
		t.Fatalf("g j is on row %+v, want item 0", got)
	}
	if s := screen(m); !strings.Contains(s, "at 0/"+english.Thousands(n)) {
		t.Fatalf("the status bar on item 0 does not say at 0/%d:\n%s", n, s)
	}
	press(t, m, "j", "j", "v", "j", "j", "t")
	s := screen(m)
	if !strings.Contains(s, "Tag items 2–4") || !strings.Contains(s, "at 4/"+english.Thousands(n)) {
		t.Fatalf("the tag dialog and the status bar disagree on the range 2–4:\n%s", s)
	}
	press(t, m, "esc", "G")
	if s := screen(m); !strings.Contains(s, "at "+english.Thousands(n-1)+"/"+english.Thousands(n)) {
		t.Fatalf("the last item is not at %d/%d:\n%s", n-1, n, s)
	}
	press(t, m, "i")
	if s := screen(m); !strings.Contains(s, "Insert after item "+english.Thousands(n-1)) {
		t.Fatalf("insert after the last item does not name it %d:\n%s", n-1, s)
	}
}
