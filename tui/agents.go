package tui

import (
	"cmp"
	"time"

	tea "charm.land/bubbletea/v2"
)

// The status bar counts the agents connected to the embedded listener.
// They come and go while no key is pressed, so the TUI watches the
// count: a command polls it every second (Options.AgentsPoll) and
// reports only a change, so the screen is drawn again only then.

// agentsPoll is how often the count is read by default.
const agentsPoll = time.Second

type (
	// agentsWatchMsg starts the watch (from Init).
	agentsWatchMsg struct{}
	// agentsMsg is a new count.
	agentsMsg struct{ n int }
)

// startAgentsWatch is Init's part: the watch, when there is a listener.
func (m *Model) startAgentsWatch() tea.Cmd {
	if m.opts.Listener == nil {
		return nil
	}
	return func() tea.Msg { return agentsWatchMsg{} }
}

// watchAgents waits for the count to differ from the one shown.
func (m *Model) watchAgents() tea.Cmd {
	l, last := m.opts.Listener, m.agents
	if l == nil {
		return nil
	}
	poll := cmp.Or(m.opts.AgentsPoll, agentsPoll)
	return func() tea.Msg {
		for {
			time.Sleep(poll)
			if n := l.Agents(); n != last {
				return agentsMsg{n}
			}
		}
	}
}
