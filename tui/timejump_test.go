package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/tui/dialog"
)

var keyBackspace = tea.KeyPressMsg{Code: tea.KeyBackspace}

// jumpTime types a time into T's dialog and presses enter.
func jumpTime(t *testing.T, m *Model, when string) {
	t.Helper()
	press(t, m, "T")
	if _, ok := m.dialogs.Front().(*dialog.Time); !ok {
		t.Fatalf("T opened %T", m.dialogs.Front())
	}
	typeText(t, m, when)
	send(t, m, keyEnter)
}

// cursorAt is the time of the message under the cursor.
func cursorAt(t *testing.T, m *Model) time.Time {
	t.Helper()
	// On a marker: the time of the message it stands before.
	return m.cursorBase()
}

func march(d, h, min int) time.Time { return time.Date(2026, 3, d, h, min, 0, 0, time.UTC) }

// T reads times without a date on the day under the cursor and relative
// times from the cursor's, so the README's examples work on a thread that
// is not today's (the demo's is in March 2026).
func TestTimeJumpCountsFromTheCursor(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 40)
	// The demo's days are short: Mar 2 09:14–10:44, Mar 3 09:43–11:38,
	// Mar 4 10:07–10:59, Mar 5 08:56–10:01.
	jumpTime(t, m, "2026-03-03 10:00")
	if at := cursorAt(t, m); at.Before(march(3, 10, 0)) || at.After(march(3, 10, 10)) {
		t.Fatalf("2026-03-03 10:00 landed at %v", at)
	}
	cases := []struct {
		when     string
		from, to func(cursor time.Time) time.Time // the message landed on is in [from, to]
	}{
		{"11:00", at(march(3, 11, 0)), at(march(3, 11, 40))},
		{"-1h", func(c time.Time) time.Time { return c.Add(-time.Hour) }, func(c time.Time) time.Time { return c }},
		{"yesterday 9am", at(march(2, 9, 0)), at(march(2, 10, 0))},
		{"Mar 4", at(march(4, 0, 0)), at(march(4, 10, 10))},
		{"march 4 10:30", at(march(4, 10, 30)), at(march(4, 11, 0))},
		{"4 Mar 10:15", at(march(4, 10, 15)), at(march(4, 10, 30))},
		{"monday", at(march(2, 0, 0)), at(march(2, 10, 0))}, // from Wednesday Mar 4: the Monday before
	}
	for _, c := range cases {
		cursor := cursorAt(t, m)
		jumpTime(t, m, c.when)
		if m.dialogs.Front() != nil {
			t.Fatalf("%q left the dialog open:\n%s", c.when, screen(m))
		}
		from, to := c.from(cursor), c.to(cursor)
		if got := cursorAt(t, m); got.Before(from) || got.After(to) {
			t.Errorf("%q from %v landed at %v, want between %v and %v", c.when, cursor, got, from, to)
		}
	}
}

// at is a fixed bound, whatever the cursor.
func at(t time.Time) func(time.Time) time.Time { return func(time.Time) time.Time { return t } }

// A time that cannot be read keeps the dialog open with the text and
// says why; the next good one jumps and leaves no error behind.
func TestTimeJumpKeepsABadEntry(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 80, 40)
	press(t, m, "g")
	before := m.cursor
	jumpTime(t, m, "whenever")
	d, ok := m.dialogs.Front().(*dialog.Time)
	if !ok {
		t.Fatalf("a bad time closed the dialog:\n%s", screen(m))
	}
	if d.Value() != "whenever" || m.cursor != before {
		t.Fatalf("the dialog lost the text (%q) or the cursor moved", d.Value())
	}
	if s := screen(m); !strings.Contains(s, `cannot read "whenever" as a time`) {
		t.Fatalf("the dialog does not say why:\n%s", s)
	}
	for range len("whenever") {
		send(t, m, keyBackspace)
	}
	typeText(t, m, "Mar 4 10am")
	send(t, m, keyEnter)
	if m.dialogs.Front() != nil {
		t.Fatalf("a good time did not jump:\n%s", screen(m))
	}
	if s := screen(m); strings.Contains(s, "cannot read") || m.statusErr {
		t.Fatalf("the old error stays after a good jump:\n%s", s)
	}
}

// The dialog lists the forms it takes in full, wrapped to its width.
func TestTimeJumpListsTheFormsInFull(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 80, 40)
	press(t, m, "T")
	s := screen(m)
	for _, want := range []string{"15:30", "-2h", "yesterday 9am", "Mar 4", "monday", "2026-03-04 14:00", "the latest on or before"} {
		if !strings.Contains(s, want) {
			t.Errorf("the dialog does not list %q:\n%s", want, s)
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "│") && strings.Contains(line, "…") {
			t.Errorf("a line of the dialog is cut: %q", line)
		}
	}
}
