package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/tui/rows"
)

// TestEnterOnAHiddenMessageUnfoldsIt: under an expanded marker, a long
// original says "… N more lines (enter)"; enter there unfolds that
// message and leaves the marker expanded.
func TestEnterOnAHiddenMessageUnfoldsIt(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 100, 40)
	press(t, m, "g", "enter") // the digest at the top, expanded
	found := -1
	for r := 0; r < m.rows.Len() && found < 0; r++ {
		if m.rows.At(r).Kind != rows.Hidden {
			continue
		}
		if strings.Contains(ansi.Strip(strings.Join(m.rowLines(r), "\n")), "more line") {
			found = r
		}
	}
	if found < 0 {
		t.Fatal("no folded original under the expanded digest")
	}
	m.cursor = found
	m.scrollToCursor()
	folded := len(m.rowLines(found))
	marker := m.rows.At(found).Marker
	press(t, m, "enter")
	if rw := m.rows.At(m.cursor); rw.Kind != rows.Hidden || rw.Marker != marker {
		t.Fatalf("enter on a folded original left the cursor on row kind %d: the digest collapsed", rw.Kind)
	}
	if n := len(m.rowLines(m.cursor)); n <= folded {
		t.Fatalf("the original still shows %d lines after enter (%d before)", n, folded)
	}
	if s := screen(m); !strings.Contains(s, "▾ digest of") {
		t.Fatalf("the digest is no longer expanded:\n%s", s)
	}
	press(t, m, "enter")
	if n := len(m.rowLines(m.cursor)); n != folded {
		t.Fatalf("a second enter did not fold the original again: %d lines, want %d", n, folded)
	}
}
