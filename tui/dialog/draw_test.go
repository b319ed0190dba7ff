package dialog

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestHighlightConvertsBytesToCells(t *testing.T) {
	// "héllo": the match on "l" is at byte 3 but cell 2.
	out := Highlight("héllo", []int{3}, lipgloss.NewStyle(), lipgloss.NewStyle().Bold(true))
	if ansi.Strip(out) != "héllo" || !strings.Contains(out, "\x1b[1ml") {
		t.Errorf("highlight: %q", out)
	}
}
