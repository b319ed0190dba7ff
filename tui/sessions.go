package tui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
	"weft/tui/dialog"
)

// The sessions list (tab, tui/dialog's Sessions) reads the file's
// sessions, then their dates, in commands; renaming and deleting one go
// through the Service (rename_session, delete_session), as an agent's
// would, and the list is read again when they are done. Deleting the
// session shown opens another (othersessions.go).

type sessionsLoadedMsg struct {
	list   []ops.SessionOut
	titles []string
	err    error
}

// openSessions opens the sessions list on the file's sessions.
func (m *Model) openSessions() tea.Cmd {
	if m.feat.changed == nil {
		m.feat.changed = map[string]bool{}
	}
	m.dialogs.Open(dialog.NewSessions(m.styles, m.feat.changed))
	return loadSessions(m.svc)
}

func loadSessions(svc tools.Desk) tea.Cmd {
	return func() tea.Msg {
		res, err := svc.ListSessions(context.Background(), reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)})
		// The titles are filtered and shown as they are drawn: control
		// characters as pictures (termsafe).
		titles := make([]string, len(res.Sessions))
		for i, s := range res.Sessions {
			titles[i] = termsafe.Line(s.Title)
		}
		return sessionsLoadedMsg{res.Sessions, titles, err}
	}
}

// sessionsLoaded shows the list in the sessions list, if it is open, and
// reads the sessions' dates.
func (m *Model) sessionsLoaded(msg sessionsLoadedMsg) tea.Cmd {
	p, ok := dialog.Find[*dialog.Sessions](&m.dialogs)
	if !ok {
		return nil
	}
	if msg.err != nil {
		p.Refused(msg.err.Error())
		return p.SetSessions(nil, nil) // keys typed ahead wait for no list
	}
	return tea.Batch(p.SetSessions(msg.list, msg.titles), loadSessionDates(m.svc, msg.list))
}

// sessionDatesMsg carries the first and last message dates of sessions.
type sessionDatesMsg struct{ dates map[string][2]time.Time }

// loadSessionDates reads when each session's messages start and end, in
// a command after the list: the list shows at once, the dates a moment
// later.
func loadSessionDates(svc tools.Desk, list []ops.SessionOut) tea.Cmd {
	if svc == nil {
		return nil
	}
	ids := make([]string, 0, len(list))
	for _, s := range list {
		if s.MessageCount > 0 && s.Unreadable == "" {
			ids = append(ids, s.SessionID)
		}
	}
	return func() tea.Msg {
		dates := make(map[string][2]time.Time, len(ids))
		for _, id := range ids {
			if first, latest, err := svc.SessionSpan(id); err == nil && !first.IsZero() {
				dates[id] = [2]time.Time{first, latest}
			}
		}
		return sessionDatesMsg{dates}
	}
}

func (msg sessionDatesMsg) apply(m *Model) tea.Cmd {
	if p, ok := dialog.Find[*dialog.Sessions](&m.dialogs); ok {
		p.SetDates(msg.dates)
	}
	return nil
}

// sessionAdminMsg reports a rename or a delete.
type sessionAdminMsg struct {
	what    string
	deleted string // the session deleted, if one was
	renamed string // the session renamed, or whose rename was refused
	err     error
}

// renameSession renames session id through the Service.
func renameSession(svc tools.Desk, id, title string) tea.Cmd {
	return func() tea.Msg {
		res, err := svc.RenameSession(context.Background(), ops.RenameSessionArgs{SessionID: id, Title: title})
		return sessionAdminMsg{what: fmt.Sprintf("renamed “%s”", termsafe.Line(res.Title)), renamed: id, err: err}
	}
}

// deleteSession deletes s through the Service, refused if it changed
// since the list showed it: the operator said yes to what they saw.
func deleteSession(svc tools.Desk, s ops.SessionOut) tea.Cmd {
	v := s.Version
	return func() tea.Msg {
		_, err := svc.DeleteSession(context.Background(), ops.DeleteSessionArgs{SessionID: s.SessionID, ExpectedVersion: &v})
		what := fmt.Sprintf("deleted “%s” (%s)", termsafe.Line(s.Title), english.Count(s.MessageCount, "message"))
		return sessionAdminMsg{what: what, deleted: s.SessionID, err: err}
	}
}

func (msg sessionAdminMsg) apply(m *Model) tea.Cmd {
	p, open := dialog.Find[*dialog.Sessions](&m.dialogs)
	if r, ok := dialog.Find[*dialog.Rename](&m.dialogs); ok && msg.renamed != "" && r.ID() == msg.renamed {
		if msg.err == nil {
			m.dialogs.Close(r)
		} else {
			r.Fail(msg.err.Error()) // a refused rename stays open with its text
		}
	}
	if msg.err != nil {
		if open {
			p.Refused(msg.err.Error())
		}
		return m.flash(msg.err.Error(), true)
	}
	cmds := []tea.Cmd{m.flash(msg.what, false)}
	if open {
		cmds = append(cmds, loadSessions(m.svc))
	}
	if msg.deleted != "" && msg.deleted == m.sid {
		cmds = append(cmds, m.sessionGone(msg.what+": showing the latest session"))
	}
	return tea.Batch(cmds...)
}
