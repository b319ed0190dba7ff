package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
	"weft/store"
)

// twoSessions makes a file with two sessions of seven messages each,
// whose texts differ (their IDs, m1..m7, do not), and a model open on
// the first.
func twoSessions(t *testing.T) (m *Model, svc *ops.Service, first, second string) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "two.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc = ops.New(st)
	ctx := context.Background()
	ids := make([]string, 2)
	for k, name := range []string{"Alpha", "Bravo"} {
		res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: name + " thread"})
		if err != nil {
			t.Fatal(err)
		}
		var msgs []model.NewMessage
		for i := 1; i <= 7; i++ {
			role := model.RoleUser
			if i%2 == 0 {
				role = model.RoleAssistant
			}
			msgs = append(msgs, model.NewMessage{Role: role, Content: fmt.Sprintf("%s says line %d.", name, i)})
		}
		if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: res.SessionID, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		ids[k] = res.SessionID
	}
	m = New(svc, Options{Theme: "dark", Session: ids[0]})
	run(t, m, m.loadView(ids[0]))
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	run(t, m, cmd)
	return m, svc, ids[0], ids[1]
}

func TestSwitchingSessionsShowsTheOtherSession(t *testing.T) {
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
	m, svc, first, second := twoSessions(t)
	// The first session's bodies, read before the switch, arrive after it.
	late, err := svc.Messages(first, []uint64{1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(openSessionMsg{id: second})
	stale := bodiesLoadedMsg{sid: first, msgs: late}
	m.Update(stale)
	run(t, m, cmd)
	if s := screen(m); strings.Contains(s, "Alpha says") || !strings.Contains(s, "Bravo says line 7.") {
		t.Fatalf("late bodies of the first session show in the second:\n%s", s)
	}
}

func TestLateViewOfThePreviousSessionIsDropped(t *testing.T) {
	m, svc, first, second := twoSessions(t)
	info, v, err := svc.View(first)
	if err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(openSessionMsg{id: second})
	run(t, m, cmd)
	// An agent's edit of the first session was being loaded when the
	// operator switched: its view arrives now.
	m.Update(viewLoadedMsg{info: info, view: v})
	if s := screen(m); m.sid != second || strings.Contains(s, "Alpha says") {
		t.Fatalf("a late view of the first session replaced the second:\n%s", s)
	}
}
