package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
)

// twoSessions makes a file with two sessions of seven messages each,
// whose texts differ (their IDs, m1..m7, do not), and a model open on
// the first.
func twoSessions(t *testing.T) (m *Model, svc *ops.Service, first, second string) {
	t.Helper()
	svc = newService(t)
	ids := make([]string, 2)
	for k, name := range []string{"Alpha", "Bravo"} {
		var msgs []model.NewMessage
		for i := 1; i <= 7; i++ {
			role := model.RoleUser
			if i%2 == 0 {
				role = model.RoleAssistant
			}
			msgs = append(msgs, model.NewMessage{Role: role, Content: fmt.Sprintf("%s says line %d.", name, i)})
		}
		ids[k] = newSession(t, svc, name+" thread", msgs)
	}
	m = openModel(t, svc, Options{Theme: "dark", Session: ids[0]}, ids[0], 100, 30)
	return m, svc, ids[0], ids[1]
}

func TestSwitchingSessionsShowsTheOtherSession(t *testing.T) {
	t.Parallel()
	m, _, _, second := twoSessions(t)
	if s := screen(m); !strings.Contains(s, "Alpha says line 7.") {
		t.Fatalf("the first session is not shown:\n%s", s)
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	typeText(t, m, "Bravo")
	send(t, m, keyEnter)
	s := screen(m)
	if m.sid != second || !strings.Contains(s, "Bravo thread") {
		t.Fatalf("enter did not open the second session:\n%s", s)
	}
	if strings.Contains(s, "Alpha says") || !strings.Contains(s, "Bravo says line 7.") {
		t.Fatalf("the second session shows the first one's messages:\n%s", s)
	}
}

func TestLateBodiesOfThePreviousSessionAreDropped(t *testing.T) {
	t.Parallel()
	m, svc, first, second := twoSessions(t)
	// The first session's bodies, read before the switch, arrive after it.
	late, err := svc.Messages(first, []uint64{1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	cmd := m.openSession(second)
	stale := bodiesLoadedMsg{sid: first, msgs: late}
	m.Update(stale)
	run(t, m, cmd)
	if s := screen(m); strings.Contains(s, "Alpha says") || !strings.Contains(s, "Bravo says line 7.") {
		t.Fatalf("late bodies of the first session show in the second:\n%s", s)
	}
}

func TestLateViewOfThePreviousSessionIsDropped(t *testing.T) {
	t.Parallel()
	m, svc, first, second := twoSessions(t)
	info, v, err := svc.View(first)
	if err != nil {
		t.Fatal(err)
	}
	cmd := m.openSession(second)
	run(t, m, cmd)
	// An agent's edit of the first session was being loaded when the
	// operator switched: its view arrives now.
	m.Update(viewLoadedMsg{info: info, view: v})
	if s := screen(m); m.sid != second || strings.Contains(s, "Alpha says") {
		t.Fatalf("a late view of the first session replaced the second:\n%s", s)
	}
}
