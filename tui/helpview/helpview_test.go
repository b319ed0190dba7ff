package helpview

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/themes"
)

// The keys take as many columns as fit: on a narrow screen fewer, and
// more rows; no line is wider than the screen, and the note closes it.
func TestColumnsFitTheWidth(t *testing.T) {
	t.Parallel()
	st := themes.New(themes.Default(true), true)
	var entries []Entry
	for _, k := range strings.Fields("a b c d e f g h i j k l") {
		entries = append(entries, Entry{Key: k, Desc: "does " + k, Usable: k != "c"})
	}
	wide, narrow := Lines(entries, 120, st, "grey: nothing now"), Lines(entries, 10, st, "grey: nothing now")
	if len(wide) >= len(narrow) || len(narrow) != len(entries)+1 {
		t.Errorf("%d lines at 120 columns, %d at 10: want fewer wide, one a key narrow", len(wide), len(narrow))
	}
	for _, l := range append(wide, narrow...) {
		if w := ansi.StringWidth(l); w > 120 {
			t.Errorf("a line %d wide: %q", w, l)
		}
	}
	if last := ansi.Strip(wide[len(wide)-1]); last != "grey: nothing now" {
		t.Errorf("the last line is %q", last)
	}
}
