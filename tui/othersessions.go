package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"weft/internal/termsafe"
	"weft/ops"
)

// The file's other sessions: an agent may write to any of them while the
// operator reads one. A write to another session is said in a short
// flash naming it and marked in the sessions list until that session is
// opened; the thread shown is not loaded again. The session shown being
// deleted (from the sessions list, or by an agent) opens another: the
// latest, or the empty file's screen when it was the last.

// sessionEvent answers an event of another session, or the deletion of
// the one shown.
func (m *Model) sessionEvent(ev ops.Event) tea.Cmd {
	if ev.Kind == ops.EventSessionDeleted {
		delete(m.feat.changed, ev.SessionID)
		if ev.SessionID != m.sid {
			return nil
		}
		return m.sessionGone(fmt.Sprintf("%s by %s: showing the latest session", ev.What, ev.Author))
	}
	if ev.Kind == ops.EventPreferences {
		return nil // the thread is as it was
	}
	if m.feat.changed == nil {
		m.feat.changed = map[string]bool{}
	}
	m.feat.changed[ev.SessionID] = true
	return m.flash(otherSessionNotice(ev.Title, ev), false)
}

// otherSessionNotice says what happened to another session, and where to
// find it.
func otherSessionNotice(title string, ev ops.Event) string {
	return fmt.Sprintf("in “%s”: %s by %s (tab lists it)", termsafe.Line(title), ev.What, ev.Author)
}

// sessionGone opens the latest session in place of the one shown, which
// was deleted, and says why.
func (m *Model) sessionGone(why string) tea.Cmd {
	// The session asked for on the command line is gone too: the latest
	// is shown, or the empty file's screen.
	m.opts.Session = ""
	return tea.Batch(m.openSession(""), m.flash(why, false))
}

// forgetFeatures drops what the features kept of the session shown, on
// a switch to session id.
func (m *Model) forgetFeatures(id string) {
	m.feat.filter = filterState{}
	delete(m.feat.changed, id)
}
