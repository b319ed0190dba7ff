package tui

import (
	tea "charm.land/bubbletea/v2"

	"weft/tui/dialog"
)

// Keys typed ahead (a paste, a slow link: many keys in one read) act on
// the state the keys before them made, as in fzf. Most keys do: Update
// takes them in order. But some keys start a read whose answer comes
// later, in a message (the sessions list, its ranking, another session's
// view, the hits enter goes to), and a key after them may mean something
// only once it came: enter on a list still being ranked, any key on a
// session still loading. Such a key is held, and every key after it, until
// the answer comes; then they are taken in order, each waiting again if
// it must.

// waits reports whether key k must wait for an answer on its way before
// it means what the operator meant.
func (m *Model) waits(k tea.KeyPressMsg) bool {
	switch {
	case m.view == nil && !m.empty && m.err == nil:
		return true // a session loading: the keys are for it
	case m.search.Jumping():
		return true // enter goes to a hit still on its way: keys move from it
	}
	if d, ok := m.dialogs.Front().(dialog.Waiter); ok && m.saving == nil {
		return d.Waits(k)
	}
	return false
}

// hold keeps msg, a key or a paste, for later when it must wait, or when
// keys before it wait: it reports whether it did.
func (m *Model) hold(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			return false // quitting waits for nothing
		}
		if len(m.held) == 0 && !m.waits(msg) {
			return false
		}
	case tea.PasteMsg:
		if len(m.held) == 0 {
			return false
		}
	default:
		return false
	}
	m.held = append(m.held, msg)
	return true
}

// release takes the keys held, in order, as far as they need wait no
// more.
func (m *Model) release() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.held) > 0 {
		if k, ok := m.held[0].(tea.KeyPressMsg); ok && m.waits(k) {
			break
		}
		msg := m.held[0]
		m.held = m.held[1:]
		_, cmd := m.update(msg)
		m.syncKeys()
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}
