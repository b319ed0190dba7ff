package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"

	"weft/ops"
	"weft/themes"
)

// sessionsPanel lists the file's sessions with a fuzzy filter on their
// titles; enter opens one, tab goes back to the thread.
type sessionsPanel struct {
	all    []ops.SessionOut
	shown  []int // indexes into all, filtered and ranked
	match  map[int][]int
	filter textinput.Model
	cursor int
}

type sessionsLoadedMsg struct {
	list []ops.SessionOut
	err  error
}

// openSessionMsg asks the root to open a session.
type openSessionMsg struct{ id string }

func loadSessions(svc *ops.Service) tea.Cmd {
	return func() tea.Msg {
		res, err := svc.ListSessions(context.Background(), ops.ListSessionsArgs{})
		return sessionsLoadedMsg{res.Sessions, err}
	}
}

func newSessionsPanel(st *themes.Styles) *sessionsPanel {
	in := newInput(st)
	in.Prompt = "filter › "
	in.Focus()
	return &sessionsPanel{filter: in}
}

func (p *sessionsPanel) refilter() {
	p.shown, p.match = p.shown[:0], map[int][]int{}
	q := p.filter.Value()
	if q == "" {
		for i := range p.all {
			p.shown = append(p.shown, i)
		}
	} else {
		titles := make([]string, len(p.all))
		for i, s := range p.all {
			titles[i] = s.Title
		}
		for _, m := range fuzzy.Find(q, titles) {
			p.shown = append(p.shown, m.Index)
			p.match[m.Index] = m.MatchedIndexes
		}
	}
	p.cursor = min(p.cursor, max(len(p.shown)-1, 0))
}

func (p *sessionsPanel) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	switch msg := msg.(type) {
	case sessionsLoadedMsg:
		if msg.err == nil {
			p.all = msg.list
			p.refilter()
		}
		return false, nil
	case tea.KeyPressMsg:
		switch msg.String() {
		case "esc", "tab":
			return true, nil
		case "down", "ctrl+n":
			p.cursor = min(p.cursor+1, max(len(p.shown)-1, 0))
			return false, nil
		case "up", "ctrl+p":
			p.cursor = max(p.cursor-1, 0)
			return false, nil
		case "enter":
			if p.cursor < len(p.shown) {
				id := p.all[p.shown[p.cursor]].SessionID
				return true, func() tea.Msg { return openSessionMsg{id} }
			}
			return false, nil
		}
	}
	var cmd tea.Cmd
	before := p.filter.Value()
	p.filter, cmd = p.filter.Update(msg)
	if p.filter.Value() != before {
		p.refilter()
	}
	return false, cmd
}

func (p *sessionsPanel) View(width int, st *themes.Styles) string {
	w := min(width-4, 110)
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
		updated, _ := time.Parse(time.RFC3339Nano, s.UpdatedAt)
		tokens := thousands(s.Tokens)
		if s.EffectiveTokens != nil && *s.EffectiveTokens != s.Tokens {
			tokens += " → " + thousands(*s.EffectiveTokens)
		}
		meta := fmt.Sprintf("%7s msgs %19s tokens  %s", thousands(s.MessageCount), tokens, updated.Local().Format("Jan 02 15:04"))
		// Titles take what the columns leave, all cut to the same width.
		titleW := max(w-4-len(prefix)-2-ansi.StringWidth(meta), 8)
		cut := ansi.Truncate(s.Title, titleW, "…")
		title := highlight(cut, p.match[i], style, st.Search.Match) + strings.Repeat(" ", titleW-ansi.StringWidth(cut))
		lines = append(lines, prefix+title+"  "+st.List.Meta.Render(meta))
	}
	if len(p.shown) == 0 {
		lines = append(lines, st.Thread.Empty.Render("no session matches"))
	}
	lines = append(lines, st.Dialog.Hint.Render("type to filter · enter open · tab back"))
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}
