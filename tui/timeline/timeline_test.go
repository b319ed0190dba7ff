package timeline

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"weft/ops"
	"weft/themes"
)

func TestStripMarksTheCursorInItsSpan(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tl := ops.Timeline{Start: start, End: start.Add(4 * time.Hour), Counts: make([]int, Buckets)}
	for i := range tl.Counts {
		tl.Counts[i] = i % 7
	}
	st := themes.New(themes.Default(true), true)
	strip := ansi.Strip(Strip(tl, start.Add(time.Hour), true, 80, st))
	if ansi.StringWidth(strip) > 80 || !strings.Contains(strip, start.Local().Format("Jan 02 15:04")) {
		t.Fatalf("strip %q", strip)
	}
	// An hour into four: a quarter of the way along the bars.
	bars := []rune(strings.Fields(strip)[3]) // after "Mar 02 09:00"
	cur := slices.Index(bars, '┃')
	if n := len(bars); cur < n/4-1 || cur > n/4+1 {
		t.Errorf("the cursor stands at column %d of %d: %q", cur, n, string(bars))
	}
	if s := ansi.Strip(Strip(tl, time.Time{}, false, 80, st)); strings.Contains(s, "┃") {
		t.Errorf("a strip without a cursor time marks one: %q", s)
	}
	if Strip(tl, start, true, 29, st) != "" || Strip(ops.Timeline{}, start, true, 80, st) != "" {
		t.Error("a strip with no room or nothing to count is drawn")
	}
}

// TestStripSaysWhatLiesOutside: messages the timeline set aside, far
// before or after the rest, are counted at its ends.
func TestStripSaysWhatLiesOutside(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tl := ops.Timeline{Start: start, End: start.Add(4 * time.Hour), Counts: make([]int, Buckets), Before: 2, After: 1}
	for i := range tl.Counts {
		tl.Counts[i] = 1
	}
	st := themes.New(themes.Default(true), true)
	strip := ansi.Strip(Strip(tl, time.Time{}, false, 100, st))
	if !strings.Contains(strip, "2◂") || !strings.Contains(strip, "▸1") || ansi.StringWidth(strip) > 100 {
		t.Errorf("strip %q does not say 2 before and 1 after", strip)
	}
}
