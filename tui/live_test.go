package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/formats/openai"
	"weft/ops"
	"weft/ops/ingest"
)

// events collects what the service announces, as Run forwards it.
func events(t *testing.T, svc *ops.Service) func() []ops.Event {
	t.Helper()
	ch, stop := svc.Subscribe()
	t.Cleanup(stop)
	return func() []ops.Event {
		var got []ops.Event
		for {
			select {
			case ev := <-ch:
				got = append(got, ev)
			case <-time.After(100 * time.Millisecond):
				return got
			}
		}
	}
}

// deliver hands the model the events the service announced, as the
// program does, and runs what each asks for.
func deliver(t *testing.T, m *Model, evs []ops.Event) {
	t.Helper()
	for _, ev := range evs {
		_, cmd := m.Update(eventMsg(ev))
		run(t, m, cmd)
	}
}

// What the operator writes from the command line while the TUI is open
// (weft import, weft call, weft new: through the TUI's own listener, as
// the operator) shows in the TUI as it lands, as an agent's edits do:
// the open thread is read again, and the sessions list too.
func TestOperatorsCommandLineWritesShowLive(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 100, 30)
	announced := events(t, svc)
	sid := m.sid

	// weft import --session SID file.json, as the listener runs it.
	src := `[{"messages":[{"role":"user","content":"Imported question from the CLI"},{"role":"assistant","content":"Imported answer, live"}]}]`
	im := ingest.New(context.Background(), svc, ingest.Options{Session: sid})
	if _, err := openai.Read(strings.NewReader(src), im); err != nil {
		t.Fatal(err)
	}
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	evs := announced()
	if len(evs) == 0 {
		t.Fatal("the import announced nothing")
	}
	deliver(t, m, evs)
	press(t, m, "G")
	if s := screen(m); !strings.Contains(s, "Imported answer, live") {
		t.Errorf("the import does not show in the open thread:\n%s", s)
	}

	// A new session made meanwhile shows in the sessions list, open.
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	if _, err := svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "Made from the CLI"}); err != nil {
		t.Fatal(err)
	}
	deliver(t, m, announced())
	if s := screen(m); !strings.Contains(s, "Made from the CLI") {
		t.Errorf("the new session is not listed:\n%s", s)
	}
}

// A long import comes as one write a batch; its notice follows it to the
// end, counting what all the batches brought, not the last one's.
func TestImportNoticeFollowsTheImport(t *testing.T) {
	t.Parallel()
	m, _, other := otherSession(t)
	for range 3 {
		_, cmd := m.Update(eventMsg(ops.Event{SessionID: other, Title: "Other work", Kind: ops.EventAppended, Author: "operator", What: "10,000 messages imported"}))
		run(t, m, cmd)
	}
	if s := screen(m); !strings.Contains(s, "30,000 messages imported by operator") {
		t.Errorf("the notice after three batches of 10,000:\n%s", s)
	}
	for range 2 {
		_, cmd := m.Update(eventMsg(ops.Event{SessionID: m.sid, Kind: ops.EventAppended, Version: m.info.Version + 1, Author: "claude-code", What: "2 messages appended"}))
		run(t, m, cmd)
	}
	if s := screen(m); !strings.Contains(s, "4 messages appended by claude-code") {
		t.Errorf("the notice after two appends of 2:\n%s", s)
	}
}
