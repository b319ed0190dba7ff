package tui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"

	"weft/internal/termsafe"
	"weft/ops"
	"weft/ops/reads"
	"weft/themes"
)

// sessionsPanel lists the file's sessions with a fuzzy filter on their
// titles; enter opens one, tab goes back to the thread, ctrl+r renames
// one and ctrl+x deletes one, asking first (sessionsadmin.go). The list
// is read and filtered in commands, as the search is: there may be many
// sessions. Each shows where it came from, the dates of its first and
// last messages, its size, and a mark when it was written to since the
// operator last opened it.
type sessionsPanel struct {
	admin  sessionsAdmin
	styles *themes.Styles
	all    []ops.SessionOut
	titles []string // of all; commands read it, so it is never changed, only replaced
	shown  []int    // indexes into all, filtered and ranked
	match  map[int][]int
	filter textinput.Model
	keys   sessionsKeys
	cursor int
	seq    int // of the latest filter asked for
	ranked int // seq of the filter shown; while behind seq, "no match" is not claimed
}

type sessionsLoadedMsg struct {
	list   []ops.SessionOut
	titles []string
	err    error
}

// sessionsFilteredMsg carries the sessions matching a filter, ranked.
type sessionsFilteredMsg struct {
	seq   int
	shown []int
	match map[int][]int
}

// sessionsKeys is the sessions panel's keys; every other key types into
// the filter. Open is on only while a session is listed.
type sessionsKeys struct {
	Up, Down, Open, Close   key.Binding
	Rename, Delete, Yes, No key.Binding
	Save, Cancel            key.Binding // of a rename
}

func defaultSessionsKeys() sessionsKeys {
	return sessionsKeys{
		Up:    key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑", "up")),
		Down:  key.NewBinding(key.WithKeys("down", "ctrl+n"), key.WithHelp("↓", "down")),
		Open:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open"), key.WithDisabled()),
		Close: key.NewBinding(key.WithKeys("esc", "tab"), key.WithHelp("tab", "back")),
		// ctrl keys, as every printable key types into the filter.
		Rename: key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "rename"), key.WithDisabled()),
		Delete: key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "delete"), key.WithDisabled()),
		Yes:    key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "deletes it"), key.WithDisabled()),
		No:     key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n", "keeps it"), key.WithDisabled()),
		Save:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "renames"), key.WithDisabled()),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancels"), key.WithDisabled()),
	}
}

// ShortHelp is what the panel's hint lists.
func (k sessionsKeys) ShortHelp() []key.Binding {
	switch {
	case k.Yes.Enabled():
		return []key.Binding{k.Yes, k.No}
	case k.Save.Enabled():
		return []key.Binding{k.Save, k.Cancel}
	}
	return []key.Binding{k.Open, k.Rename, k.Delete, k.Close}
}

// openSessionMsg asks the root to open a session.
type openSessionMsg struct{ id string }

func loadSessions(svc *ops.Service) tea.Cmd {
	return func() tea.Msg {
		res, err := reads.ListSessions(svc, context.Background(), reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)})
		// The titles are filtered and shown as they are drawn: control
		// characters as pictures (termsafe).
		titles := make([]string, len(res.Sessions))
		for i, s := range res.Sessions {
			titles[i] = termsafe.Line(s.Title)
		}
		return sessionsLoadedMsg{res.Sessions, titles, err}
	}
}

func newSessionsPanel(st *themes.Styles) *sessionsPanel {
	in := newInput(st)
	in.Prompt = "filter › "
	in.Focus()
	return &sessionsPanel{filter: in, keys: defaultSessionsKeys()}
}

// refilter asks for the sessions matching the filter as it is now.
func (p *sessionsPanel) refilter() tea.Cmd {
	p.seq++
	seq, titles, q := p.seq, p.titles, p.filter.Value()
	return func() tea.Msg {
		shown, match := rankTitles(titles, q)
		return sessionsFilteredMsg{seq, shown, match}
	}
}

// rankTitles returns the indexes of the titles matching q, best first
// (all, in order, for an empty q), with the matched bytes of each.
func rankTitles(titles []string, q string) ([]int, map[int][]int) {
	shown, match := make([]int, 0, len(titles)), map[int][]int{}
	if q == "" {
		for i := range titles {
			shown = append(shown, i)
		}
		return shown, match
	}
	for _, m := range fuzzy.Find(q, titles) {
		shown = append(shown, m.Index)
		match[m.Index] = m.MatchedIndexes
	}
	return shown, match
}

// HandleMsg takes the list and the filter's results as they come, and
// the panel's keys; every other key goes to the filter.
func (p *sessionsPanel) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	switch msg := msg.(type) {
	case sessionsLoadedMsg:
		if msg.err != nil {
			return false, nil
		}
		p.all, p.titles = msg.list, msg.titles
		return false, tea.Batch(p.refilter(), loadSessionDates(p.admin.svc, msg.list))
	case sessionsFilteredMsg:
		if msg.seq == p.seq {
			p.shown, p.match, p.ranked = msg.shown, msg.match, msg.seq
			p.cursor = min(p.cursor, max(len(p.shown)-1, 0))
			p.keys.Open.SetEnabled(len(p.shown) > 0)
			p.keys.Rename.SetEnabled(len(p.shown) > 0)
			p.keys.Delete.SetEnabled(len(p.shown) > 0)
		}
		return false, nil
	case tea.KeyPressMsg:
		if done, cmd, ok := p.adminKey(msg); ok {
			return done, cmd
		}
		switch {
		case key.Matches(msg, p.keys.Close):
			return true, nil
		case key.Matches(msg, p.keys.Down):
			p.cursor = min(p.cursor+1, max(len(p.shown)-1, 0))
			return false, nil
		case key.Matches(msg, p.keys.Up):
			p.cursor = max(p.cursor-1, 0)
			return false, nil
		case key.Matches(msg, p.keys.Open):
			id := p.all[p.shown[p.cursor]].SessionID
			return true, func() tea.Msg { return openSessionMsg{id} }
		case msg.Code == tea.KeyEnter:
			return false, nil // nothing listed to open; the filter takes no newline
		}
	}
	var cmd tea.Cmd
	before := p.filter.Value()
	p.filter, cmd = p.filter.Update(msg)
	if p.filter.Value() != before && p.all != nil {
		return false, tea.Batch(cmd, p.refilter())
	}
	return false, cmd
}

// View draws a window of the filtered list around the cursor.
func (p *sessionsPanel) View(width int, st *themes.Styles) string {
	w := min(width-4, 110)
	if sub := p.adminView(w, st); sub != "" {
		return sub // renaming, or asking before a delete
	}
	lines := []string{st.List.Title.Render(fmt.Sprintf("Sessions (%d)", len(p.all))), p.filter.View()}
	const shown = 12
	from := min(max(p.cursor-shown/2, 0), max(len(p.shown)-shown, 0))
	for k := from; k < min(from+shown, len(p.shown)); k++ {
		i := p.shown[k]
		s := p.all[i]
		style, prefix := st.List.Item, "  "
		if k == p.cursor {
			style, prefix = st.List.Selected, "▸ "
		}
		meta := p.meta(s, w)
		if p.admin.changed[s.SessionID] {
			prefix = prefix[:len(prefix)-1] + "●" // written to since it was last opened
		}
		// Titles take what the columns leave, all cut to the same width.
		titleW := max(w-4-ansi.StringWidth(prefix)-2-ansi.StringWidth(meta), 8)
		cut := ansi.Truncate(p.titles[i], titleW, "…")
		title := highlight(cut, p.match[i], style, st.Search.Match) + strings.Repeat(" ", titleW-ansi.StringWidth(cut))
		lines = append(lines, prefix+title+"  "+st.List.Meta.Render(meta))
	}
	if len(p.shown) == 0 && p.ranked == p.seq && p.seq > 0 {
		lines = append(lines, st.Thread.Empty.Render("no session matches"))
	}
	note := "type to filter"
	if len(p.admin.changed) > 0 {
		note = "● written to since last opened · " + note
	}
	lines = append(lines, dialogHint(st, note, p.keys.ShortHelp()))
	if p.admin.said != "" {
		lines = append(lines, saidLines(st.Status.Error, p.admin.said, w-4))
	}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}
