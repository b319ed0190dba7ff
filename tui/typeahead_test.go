package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
)

// keysOf turns a sequence as a test writes it into key presses: named
// keys in angle brackets (<tab>, <enter>), every other character typed.
func keysOf(seq string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for seq != "" {
		if strings.HasPrefix(seq, "<") {
			end := strings.IndexByte(seq, '>')
			switch seq[1:end] {
			case "tab":
				out = append(out, tea.KeyPressMsg{Code: tea.KeyTab})
			case "enter":
				out = append(out, keyEnter)
			case "esc":
				out = append(out, keyEsc)
			}
			seq = seq[end+1:]
			continue
		}
		r := []rune(seq)[0]
		if r == ' ' {
			out = append(out, tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
		} else {
			out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		seq = seq[len(string(r)):]
	}
	return out
}

// typeAhead gives Update the keys as one read from the terminal brings
// them: the results of the commands they start come after the keys
// numbered in deliver (after the last key when deliver is empty).
func typeAhead(t *testing.T, m *Model, keys []tea.KeyPressMsg, deliver ...int) {
	t.Helper()
	var pending []tea.Cmd
	flush := func() {
		for len(pending) > 0 {
			cmd := pending[0]
			pending = pending[1:]
			run(t, m, cmd)
		}
	}
	for i, k := range keys {
		_, cmd := m.Update(k)
		if cmd != nil {
			pending = append(pending, cmd)
		}
		for _, d := range deliver {
			if d == i {
				flush()
			}
		}
	}
	flush()
}

// typeAheadSessions is the demo file with two more sessions, one to
// find by "Average", one by "start phoenix".
func typeAheadSessions(t *testing.T) (m *Model, svc *ops.Service, average, phoenix string) {
	t.Helper()
	m, svc = demoModel(t, 110, 36)
	average = newSession(t, svc, "Average response times", []model.NewMessage{{Role: model.RoleUser, Content: "how slow is it on average?"}})
	phoenix = newSession(t, svc, "Start phoenix deploy", []model.NewMessage{{Role: model.RoleUser, Content: "start the phoenix deploy"}})
	return m, svc, average, phoenix
}

// Keys typed ahead in the sessions list act on the list the keys before
// them made, whenever the list and its ranking come: enter opens the
// session the filter picks, and nothing typed for the list reaches the
// thread (where s would snip).
func TestTypedAheadKeysInTheSessionsList(t *testing.T) {
	t.Parallel()
	keys := keysOf("<tab>Average<enter><tab>start phoenix<enter>")
	for _, deliver := range [][]int{nil, {0}, {3}, {7}, {8}, {9}, {12}, {0, 7, 9}} {
		t.Run(fmt.Sprint(deliver), func(t *testing.T) {
			t.Parallel()
			m, svc, _, phoenix := typeAheadSessions(t)
			shown := m.sid
			before := len(mustOps(t, svc, shown))
			typeAhead(t, m, keys, deliver...)
			if m.dialogs.Front() != nil {
				t.Errorf("a dialog is still open: %T", m.dialogs.Front())
			}
			if m.sid != phoenix {
				t.Errorf("session %s shown, want the phoenix one %s", m.sid, phoenix)
			}
			if after := len(mustOps(t, svc, shown)); after != before {
				t.Errorf("the keys edited the session shown first: %d operations, were %d", after, before)
			}
		})
	}
}

// Keys typed ahead after a switch of session land in the search the
// keys before them opened, not on a screen still loading.
func TestTypedAheadSearchAfterASwitch(t *testing.T) {
	t.Parallel()
	for _, deliver := range [][]int{nil, {8}, {9}} {
		t.Run(fmt.Sprint(deliver), func(t *testing.T) {
			t.Parallel()
			m, _, average, _ := typeAheadSessions(t)
			typeAhead(t, m, keysOf("<tab>Average<enter>/slow"), deliver...)
			if m.sid != average {
				t.Fatalf("session %s shown, want %s", m.sid, average)
			}
			if !m.search.IsOpen() || m.search.Value() != "slow" {
				t.Fatalf("search open %v with %q, want open with %q", m.search.IsOpen(), m.search.Value(), "slow")
			}
		})
	}
}

// A key typed after enter in the search, while its hits are on their
// way, moves from the hit enter goes to.
func TestTypedAheadKeyAfterASearchJump(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	press(t, m, "g")
	typeAhead(t, m, keysOf("/retry<enter>j"))
	best := m.search.Hits()[0]
	if want := m.rows.RowOfItem(best.Index) + 1; m.cursor != want {
		t.Fatalf("cursor on row %d, want %d (one below the best hit's)", m.cursor, want)
	}
}
