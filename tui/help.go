package tui

import (
	"weft/tui/helpview"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Help is generated from the key map, in two forms: the full help (?)
// lists every key, greying those that do nothing now, so a key can be
// learnt before it is needed; the bottom line lists the keys that work
// now, as many as fit, the most useful first, and always ? for the rest.

// whyNot says why a binding does nothing now, or "" when it acts: keys
// that stay on with nothing to do (redo, the next match) and keys
// switched off for the state (an edit in the raw view).
func (m *Model) whyNot(b key.Binding) string {
	k := &m.keys
	is := func(o key.Binding) bool { return b.Help().Key == o.Help().Key } // help keys are unique
	switch {
	case is(k.Redo) && !m.canRedo():
		return m.redoReason()
	case (is(k.Next) || is(k.Prev)) && len(m.search.Hits()) == 0:
		return "no search yet: " + k.Search.Help().Key + " searches the thread"
	case is(k.Undo) && m.info.OpCount == 0:
		return "nothing to undo"
	case b.Enabled():
		return ""
	case m.feat.filter.on() && (is(k.Select) || is(k.MoveDown) || is(k.MoveUp) || is(k.Raw)):
		return "does nothing while a filter is on (" + k.Cancel.Help().Key + " clears it)"
	case m.raw.on:
		return "does nothing in the raw view (" + k.Raw.Help().Key + " goes back to the thread)"
	case m.moving != nil:
		return "does nothing while moving (" + k.Commit.Help().Key + " confirms the move, " + k.Cancel.Help().Key + " cancels it)"
	case m.rows == nil || m.rows.Len() == 0:
		return "does nothing in an empty thread"
	}
	return "does nothing here"
}

// canRedo reports whether ctrl+r has something to restore in this
// session.
func (m *Model) canRedo() bool {
	for _, s := range m.redoStack {
		if s.sid == m.sid {
			return true
		}
	}
	return false
}

// helpEntries is the full help's keys, in the key map's groups, each
// marked usable or not.
func (m *Model) helpEntries() []helpview.Entry {
	var out []helpview.Entry
	for _, group := range m.keys.FullHelp() {
		for _, b := range group {
			h := b.Help()
			out = append(out, helpview.Entry{Key: h.Key, Desc: h.Desc, Usable: m.whyNot(b) == ""})
		}
	}
	return out
}

// fullHelpView is the full help, laid out by helpview.
func (m *Model) fullHelpView() []string {
	entries := m.helpEntries()
	note := "grey: does nothing now · " + m.keys.Help.Help().Key + " or " + m.keys.Cancel.Help().Key + " closes this"
	return helpview.Lines(entries, m.width, m.styles, note)
}

// shortLine is the bottom line's keys: those of shortHelp that work now,
// in its order (the most useful first), as many as fit the width beside
// the help and quit keys, which always show.
func (m *Model) shortLine() string {
	keys := m.shortHelp()
	var always, rest []key.Binding
	for _, b := range keys {
		switch {
		case b.Help().Key == m.keys.Help.Help().Key || b.Help().Key == m.keys.Quit.Help().Key:
			always = append(always, b)
		case m.whyNot(b) == "":
			rest = append(rest, b)
		}
	}
	h := m.help
	h.SetWidth(0) // measured here: the help's own cut would end the line in "…"
	fits := func(bs []key.Binding) bool {
		return lipgloss.Width(h.ShortHelpView(bs)) <= m.width
	}
	// In order, the most useful first; a key too long for what is left
	// makes way for a shorter one after it.
	var shown []key.Binding
	for _, b := range rest {
		if try := append(append(shown[:len(shown):len(shown)], b), always...); fits(try) {
			shown = append(shown, b)
		}
	}
	return h.ShortHelpView(append(shown, always...))
}

// explainKey says why a key that matched nothing does nothing, when it
// is one of the TUI's keys switched off for now.
func (m *Model) explainKey(msg tea.KeyPressMsg) tea.Cmd {
	for _, group := range m.keys.FullHelp() {
		for _, b := range group {
			if b.Enabled() || b.Help().Key == m.keys.Cancel.Help().Key {
				continue // esc with nothing to cancel is a reflex, not a question
			}
			for _, k := range b.Keys() {
				if k == msg.String() {
					return m.flash(b.Help().Key+" "+m.whyNot(b), true)
				}
			}
		}
	}
	return nil
}
