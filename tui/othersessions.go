package tui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
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
	ev.What = m.eventWhat(ev)
	return m.flash(otherSessionNotice(ev.Title, ev), false)
}

// writeRun is a run of appends to one session by one author (the
// batches of an import, an agent's turns), counted while its notice
// shows.
type writeRun struct {
	sid, author, verb string
	n                 int
	seq               int // the status message that says it
}

// appended reads an append's words: "10,000 messages imported".
var appended = regexp.MustCompile(`^([0-9,]+) messages? (imported|appended)$`)

// eventWhat is what to say of event ev: an append that follows one of
// the same session and author whose notice still shows says how much
// they brought together, so a long import's notice follows it to the
// end rather than repeating the size of a batch. The caller flashes it
// next.
func (m *Model) eventWhat(ev ops.Event) string {
	sub := appended.FindStringSubmatch(ev.What)
	if sub == nil {
		m.feat.writes = writeRun{}
		return ev.What
	}
	n, _ := strconv.Atoi(strings.ReplaceAll(sub[1], ",", ""))
	w := &m.feat.writes
	if w.sid == ev.SessionID && w.author == ev.Author && w.verb == sub[2] && w.seq == m.statusSeq && m.status != "" {
		n += w.n
	}
	*w = writeRun{sid: ev.SessionID, author: ev.Author, verb: sub[2], n: n, seq: m.statusSeq + 1}
	return english.Count(n, "message") + " " + sub[2]
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
