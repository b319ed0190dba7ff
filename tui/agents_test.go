package tui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/demo"
	"weft/ops/tools"
)

// agentsListener is an embedded listener whose agents come and go as a
// test says.
type agentsListener struct {
	agents atomic.Int32
	notice string
}

func (l *agentsListener) Addr() string   { return "http://127.0.0.1:7433/mcp" }
func (l *agentsListener) Agents() int    { return int(l.agents.Load()) }
func (l *agentsListener) Notice() string { return l.notice }

func listenerModel(t *testing.T, l *agentsListener, seed bool) *Model {
	t.Helper()
	svc := newService(t)
	if seed {
		if _, err := demo.Seed(context.Background(), svc); err != nil {
			t.Fatal(err)
		}
	}
	// The count is read every 20 ms rather than every second: the tests
	// check that a change is shown, not how soon.
	m := New(tools.Local{Service: svc}, Options{Theme: "dark", Listener: l, AgentsPoll: 20 * time.Millisecond})
	run(t, m, m.loadView(""))
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 30})
	return m
}

// awaitMsg runs a command and returns its message, failing after wait.
func awaitMsg(t *testing.T, cmd tea.Cmd, wait time.Duration) tea.Msg {
	t.Helper()
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		return msg
	case <-time.After(wait):
		t.Fatalf("no message in %v", wait)
		return nil
	}
}

// The agent count follows agents as they connect and leave, with no key
// pressed: the TUI watches the listener and draws again only when the
// count changed.
func TestAgentCountFollowsTheListener(t *testing.T) {
	t.Parallel()
	l := &agentsListener{}
	m := listenerModel(t, l, true)
	start, ok := awaitMsg(t, m.Init(), time.Second).(tea.BatchMsg)
	if !ok {
		t.Fatal("Init is not a batch")
	}
	var watch tea.Cmd
	for _, c := range start {
		if c == nil {
			continue
		}
		if msg, ok := awaitMsg(t, c, time.Second).(agentsWatchMsg); ok {
			_, watch = m.Update(msg)
		}
	}
	if watch == nil {
		t.Fatal("a TUI with a listener does not watch its agents")
	}
	l.agents.Store(1)
	_, next := m.Update(awaitMsg(t, watch, 5*time.Second))
	if s := screen(m); !strings.Contains(s, "(1 agent)") {
		t.Fatalf("an agent connected and the status bar does not say so:\n%s", s)
	}
	l.agents.Store(0)
	m.Update(awaitMsg(t, next, 5*time.Second))
	if s := screen(m); strings.Contains(s, "agent") {
		t.Fatalf("the agent left and the status bar still counts it:\n%s", s)
	}
}

// A port fallback is said on a new file's screen too.
func TestEmptyFileShowsTheListenersNotice(t *testing.T) {
	t.Parallel()
	l := &agentsListener{notice: "127.0.0.1:7433 is taken: agents connect at http://127.0.0.1:40001/mcp"}
	m := listenerModel(t, l, false)
	if s := screen(m); !strings.Contains(s, "No sessions in this file yet") || !strings.Contains(s, "7433 is taken") {
		t.Fatalf("the empty file's screen does not show the listener's notice:\n%s", s)
	}
}
