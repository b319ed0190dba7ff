package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// esc closes the full help, as ? does.
func TestEscClosesHelp(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 100, 40)
	press(t, m, "?")
	if !strings.Contains(screen(m), "half page down") {
		t.Fatalf("? shows no help:\n%s", screen(m))
	}
	send(t, m, keyEsc)
	if s := screen(m); strings.Contains(s, "half page down") || m.full {
		t.Fatalf("esc did not close the help:\n%s", s)
	}
}

// The full help lays every key out within the width, in as many columns
// as fit: at 80 columns nothing is cut.
func TestFullHelpFitsTheWidth(t *testing.T) {
	t.Parallel()
	for _, w := range []int{60, 80, 100, 160} {
		m, _ := demoModel(t, w, 50)
		press(t, m, "?")
		s := screen(m)
		for _, want := range [][2]string{{"u", "undo"}, {"ctrl+r", "redo"}, {"o", "operations"}, {"tab", "sessions"}, {"R", "raw/effective thread"}, {"q", "quit"}, {"n/N", "next/previous match"}, {"?", "help"}} {
			if !helpShows(s, want[0], want[1]) {
				t.Errorf("at %d columns the full help does not show %s %s:\n%s", w, want[0], want[1], s)
			}
		}
		for _, line := range strings.Split(s, "\n") {
			if n := ansi.StringWidth(line); n > w {
				t.Errorf("at %d columns a line is %d wide: %q", w, n, line)
			}
		}
	}
}

// The bottom line fits the keys that matter most into the width, and
// never ends cut with "…".
func TestBottomLineFitsTheWidth(t *testing.T) {
	t.Parallel()
	for _, w := range []int{60, 80, 120, 160, 220} {
		m, _ := demoModel(t, w, 30)
		for _, state := range [][]string{nil, {"v"}, {"R"}} {
			press(t, m, state...)
			lines := strings.Split(screen(m), "\n")
			last := lines[len(lines)-1]
			if strings.HasSuffix(strings.TrimSpace(last), "…") || ansi.StringWidth(last) > w {
				t.Errorf("at %d columns (after %v) the key line is cut: %q", w, state, last)
			}
			if !strings.Contains(last, "? help") {
				t.Errorf("at %d columns (after %v) the key line has no ? help: %q", w, state, last)
			}
			if !strings.Contains(last, "j/↓ down") && w >= 80 {
				t.Errorf("at %d columns (after %v) the key line lost the first key: %q", w, state, last)
			}
			press(t, m, "esc")
		}
	}
}

// ctrl+r and n/N are in the full help whether or not they can be used
// now, so they can be learnt; those that cannot are greyed.
func TestFullHelpGreysWhatCannotBeUsedNow(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 120, 50)
	usable := func(k string) bool {
		t.Helper()
		for _, e := range m.helpEntries() {
			if e.Key == k {
				return e.Usable
			}
		}
		t.Fatalf("the full help does not list %s", k)
		return false
	}
	if usable("ctrl+r") || usable("n/N") || !usable("u") {
		t.Fatalf("with nothing to redo and no search: ctrl+r %v, n/N %v, u %v", usable("ctrl+r"), usable("n/N"), usable("u"))
	}
	press(t, m, "?")
	grey := lineWith(m.render(), "ctrl+r")
	press(t, m, "?", "u")
	if !usable("ctrl+r") {
		t.Fatal("ctrl+r is greyed after an undo")
	}
	m.status = ""
	press(t, m, "?")
	if lit := lineWith(m.render(), "ctrl+r"); lit == grey || ansi.Strip(lit) != ansi.Strip(grey) {
		t.Errorf("ctrl+r is drawn the same greyed and usable:\n%q\n%q", grey, lit)
	}
	press(t, m, "?", "/")
	typeText(t, m, "redis")
	send(t, m, keyEnter)
	if !usable("n/N") {
		t.Fatal("n/N is greyed after a search")
	}
}

// A key that does nothing in the state it is pressed in says why.
func TestKeysThatDoNothingSaySo(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 120, 40)
	press(t, m, "n")
	if s := screen(m); !strings.Contains(s, "no search") {
		t.Errorf("n with no search says nothing:\n%s", s)
	}
	m.status = ""
	press(t, m, "g", "R", "d")
	if s := screen(m); !strings.Contains(s, "d does nothing in the raw view") {
		t.Errorf("d in the raw view says nothing:\n%s", s)
	}
}

func lineWith(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}

// helpShows reports whether a line shows the key followed by its
// description.
func helpShows(s, key, desc string) bool {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		for i := range f {
			if f[i] == key && strings.HasPrefix(strings.Join(f[i+1:], " "), desc) {
				return true
			}
		}
	}
	return false
}
