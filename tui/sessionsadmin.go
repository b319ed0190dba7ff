package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/ops"
	"weft/themes"
)

// The sessions list's housekeeping: ctrl+r renames the session under the
// cursor (a line with its title), ctrl+x deletes it once the operator has
// said yes to a question naming it and its size. Both go through the
// Service (rename_session, delete_session), as an agent's would; the list
// is read again when they are done, and deleting the session shown opens
// another (othersessions.go).

// sessionsAdmin is the panel's part for these, and what it shows of each
// session beyond the record: its messages' dates, and whether it was
// written to since the operator opened it.
type sessionsAdmin struct {
	svc      *ops.Service
	changed  map[string]bool         // the model's: written to since last opened
	dates    map[string][2]time.Time // first and last message, by session
	renaming *sessionRename          // the title being typed, while renaming
	asking   *ops.SessionOut         // the session to delete, while asking
	said     string                  // why the last rename or delete failed
}

// sessionRename is a rename being typed.
type sessionRename struct {
	id    string
	input textinput.Model
}

// newSessionsPanel opens the sessions list on the file's sessions.
func (m *Model) newSessionsPanel() *sessionsPanel {
	p := newSessionsPanel(m.styles)
	if m.feat.changed == nil {
		m.feat.changed = map[string]bool{}
	}
	p.admin = sessionsAdmin{svc: m.svc, changed: m.feat.changed}
	p.styles = m.styles
	return p
}

// sessionDatesMsg carries the first and last message dates of sessions.
type sessionDatesMsg struct{ dates map[string][2]time.Time }

// loadSessionDates reads when each session's messages start and end, in
// a command after the list: the list shows at once, the dates a moment
// later.
func loadSessionDates(svc *ops.Service, list []ops.SessionOut) tea.Cmd {
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
	if p, ok := m.dialog.(*sessionsPanel); ok {
		p.admin.dates = msg.dates
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

func (msg sessionAdminMsg) apply(m *Model) tea.Cmd {
	p, open := m.dialog.(*sessionsPanel)
	if open && msg.renamed != "" && p.admin.renaming != nil && p.admin.renaming.id == msg.renamed && msg.err == nil {
		p.admin.renaming = nil // a refused rename stays open with its text
		p.syncAdminKeys()
	}
	if msg.err != nil {
		if open {
			p.admin.said = msg.err.Error()
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

// adminKey answers a key while renaming or asking, and the keys that
// start either; ok is false for a key the list or its filter takes.
func (p *sessionsPanel) adminKey(msg tea.KeyPressMsg) (done bool, cmd tea.Cmd, ok bool) {
	a := &p.admin
	k := &p.keys
	defer p.syncAdminKeys()
	switch {
	case a.renaming != nil:
		return false, p.renameKey(msg), true
	case a.asking != nil:
		switch {
		case key.Matches(msg, k.Yes):
			s := *a.asking
			a.asking = nil
			return false, deleteSession(a.svc, s), true
		case key.Matches(msg, k.No):
			a.asking = nil
		}
		return false, nil, true // any other key asks again
	case key.Matches(msg, k.Rename):
		a.said = ""
		s := p.all[p.shown[p.cursor]]
		in := textinput.New()
		if p.styles != nil {
			in.SetStyles(p.styles.Input)
		}
		in.Prompt = "› "
		in.SetValue(s.Title)
		in.CursorEnd()
		in.Focus()
		a.renaming = &sessionRename{id: s.SessionID, input: in}
		return false, nil, true
	case key.Matches(msg, k.Delete):
		a.said = ""
		s := p.all[p.shown[p.cursor]]
		a.asking = &s
		return false, nil, true
	}
	return false, nil, false
}

// renameKey is a key while the new title is typed: enter renames, esc
// cancels, anything else edits the title.
func (p *sessionsPanel) renameKey(msg tea.KeyPressMsg) tea.Cmd {
	a := &p.admin
	switch {
	case key.Matches(msg, p.keys.Cancel):
		a.renaming = nil
		return nil
	case key.Matches(msg, p.keys.Save):
		// The line stays until the rename is done: a refused title is
		// there to correct, with the reason under it.
		id, title := a.renaming.id, a.renaming.input.Value()
		a.said = ""
		svc := a.svc
		return func() tea.Msg {
			res, err := svc.RenameSession(context.Background(), ops.RenameSessionArgs{SessionID: id, Title: title})
			return sessionAdminMsg{what: fmt.Sprintf("renamed “%s”", termsafe.Line(res.Title)), renamed: id, err: err}
		}
	}
	var cmd tea.Cmd
	a.renaming.input, cmd = a.renaming.input.Update(msg)
	return cmd
}

// deleteSession deletes s through the Service, refused if it changed
// since the list showed it: the operator said yes to what they saw.
func deleteSession(svc *ops.Service, s ops.SessionOut) tea.Cmd {
	v := s.Version
	return func() tea.Msg {
		_, err := svc.DeleteSession(context.Background(), ops.DeleteSessionArgs{SessionID: s.SessionID, ExpectedVersion: &v})
		what := fmt.Sprintf("deleted “%s” (%s)", termsafe.Line(s.Title), english.Count(s.MessageCount, "message"))
		return sessionAdminMsg{what: what, deleted: s.SessionID, err: err}
	}
}

// syncAdminKeys switches the panel's keys for what it is doing.
func (p *sessionsPanel) syncAdminKeys() {
	k, a := &p.keys, &p.admin
	asking, busy := a.asking != nil, a.asking != nil || a.renaming != nil
	k.Yes.SetEnabled(asking)
	k.No.SetEnabled(asking)
	k.Save.SetEnabled(a.renaming != nil)
	k.Cancel.SetEnabled(a.renaming != nil)
	for _, b := range []*key.Binding{&k.Open, &k.Rename, &k.Delete} {
		b.SetEnabled(!busy && len(p.shown) > 0)
	}
}

// adminView draws the rename line or the delete question in the panel's
// place, or "" when neither is open.
func (p *sessionsPanel) adminView(w int, st *themes.Styles) string {
	a := &p.admin
	var lines []string
	switch {
	case a.renaming != nil:
		a.renaming.input.SetWidth(w - 6)
		lines = []string{st.Dialog.Title.Render("Rename the session"), a.renaming.input.View()}
		if a.said != "" {
			lines = append(lines, saidLines(st.Status.Error, a.said, w-4))
		}
		lines = append(lines, dialogHint(st, "", p.keys.ShortHelp()))
	case a.asking != nil:
		s := a.asking
		q := fmt.Sprintf("Delete “%s”, %s (%s tokens)? It cannot be undone.", termsafe.Line(s.Title), english.Count(s.MessageCount, "message"), english.Thousands(s.Tokens))
		lines = []string{st.Dialog.Title.Render("Delete a session"), saidLines(st.Status.Error, q, w-4), dialogHint(st, "", p.keys.ShortHelp())}
	default:
		return ""
	}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}

// unit is a column's unit for n, in the singular when one, padded to
// the plural's width so the columns stay aligned.
func unit(n int, one string) string {
	if n == 1 {
		return one + " "
	}
	return one + "s"
}

// meta is a session's columns beside its title: where it came from, the
// dates of its first and last messages, how many messages and tokens.
// On a narrow screen the least useful go first, so the title keeps room.
func (p *sessionsPanel) meta(s ops.SessionOut, w int) string {
	tokens, effective := english.Thousands(s.Tokens), s.Tokens
	if s.EffectiveTokens != nil && *s.EffectiveTokens != s.Tokens {
		tokens += " → " + english.Thousands(*s.EffectiveTokens)
		effective = *s.EffectiveTokens
	}
	source := s.Source
	if source == "" {
		source = "weft"
	}
	cols := []string{ // the most useful first
		fmt.Sprintf("%7s %s", english.Thousands(s.MessageCount), unit(s.MessageCount, "msg")),
		fmt.Sprintf("%-15s", spanText(p.admin.dates[s.SessionID])),
		fmt.Sprintf("%13s %s", tokens, unit(effective, "token")),
		fmt.Sprintf("%-11s", ansi.Truncate(termsafe.Line(source), 11, "…")),
	}
	for n := len(cols); n > 0; n-- {
		meta := strings.Join(reorder(cols[:n]), "  ")
		if w-4-2-2-ansi.StringWidth(meta) >= 24 || n == 1 {
			return meta
		}
	}
	return ""
}

// reorder lays the columns kept out as they read best: source, dates,
// messages, tokens.
func reorder(cols []string) []string {
	order := []int{3, 1, 0, 2}
	out := make([]string, 0, len(cols))
	for _, i := range order {
		if i < len(cols) {
			out = append(out, cols[i])
		}
	}
	return out
}

// spanText says when a session's messages were written: "Mar 03 14:05"
// for one day, "Mar 03 – Mar 05" for a span within a year, months and
// years for a longer one; "…" until the dates are read.
func spanText(d [2]time.Time) string {
	if d[0].IsZero() {
		return "…"
	}
	from, to := d[0].Local(), d[1].Local()
	switch {
	case from.Format("2006-01-02") == to.Format("2006-01-02"):
		return from.Format("Jan 02 15:04")
	case from.Year() == to.Year():
		return from.Format("Jan 02") + " – " + to.Format("Jan 02")
	}
	return from.Format("Jan 2006") + " – " + to.Format("Jan 2006")
}
