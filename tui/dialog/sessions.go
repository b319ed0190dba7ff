package dialog

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/ops"
	"weft/themes"
)

// Sessions lists the file's sessions with a fuzzy filter on their
// titles; enter opens one, tab goes back to the thread, ctrl+r renames
// one and ctrl+x deletes one, asking first (sessionsadmin.go). The root
// reads the list (SetSessions) and each session's dates (SetDates); the
// filter ranks the titles in a command, as the search does: there may
// be many sessions. Each shows where it came from, the dates of its
// first and last messages, its size, its room and interface when it has
// them, and a mark when it was written to since the operator last opened
// it.
type Sessions struct {
	styles  *themes.Styles
	changed map[string]bool         // the root's: written to since last opened
	dates   map[string][2]time.Time // first and last message, by session
	said    string                  // why the last rename or delete was refused
	all     []ops.SessionOut
	titles  []string // of all; commands read it, so it is never changed, only replaced
	shown   []int    // indexes into all, filtered and ranked
	match   map[int][]int
	filter  textinput.Model
	keys    sessionsKeys
	cursor  int
	seq     int // of the latest filter asked for
	ranked  int // seq of the filter shown; while behind seq, "no match" is not claimed
	loaded  bool
	keep    string         // the session the cursor was on when the list was read again, to stay on
	depth   []int          // of all: how deep a fork is under its source
	forks   map[string]int // the forks listed of each session
	placeW  int            // the width of the room column; 0: no session listed has a room or an interface
}

// sessionsFilteredMsg carries the sessions matching a filter, ranked.
type sessionsFilteredMsg struct {
	to    *Sessions
	seq   int
	shown []int
	match map[int][]int
}

func (msg sessionsFilteredMsg) dialog() Dialog { return msg.to }

// sessionsKeys is the sessions list's keys; every other key types into
// the filter. Open, Rename and Delete are on only while a session is
// listed.
type sessionsKeys struct {
	Up, Down, Open, Close key.Binding
	Rename, Delete        key.Binding
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
	}
}

// ShortHelp is what the list's hint lists.
func (k sessionsKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Rename, k.Delete, k.Close}
}

// NewSessions opens the sessions list; changed is the root's record of
// the sessions written to since the operator last opened them, read as
// the list is drawn.
func NewSessions(st *themes.Styles, changed map[string]bool) *Sessions {
	in := NewTextInput(st)
	in.Prompt = "filter › "
	in.Focus()
	return &Sessions{styles: st, changed: changed, filter: in, keys: defaultSessionsKeys()}
}

// SetSessions shows the file's sessions, titles being theirs as they are
// drawn (control characters as pictures); the command ranks them for the
// filter as it stands.
func (p *Sessions) SetSessions(list []ops.SessionOut, titles []string) tea.Cmd {
	if cur, ok := p.Current(); ok && p.keep == "" {
		// Read again (after a rename, an agent's edit): the cursor
		// stays on its session, wherever the list now puts it.
		p.keep = cur.SessionID
	}
	p.all, p.titles, p.depth = branches(list, titles)
	p.forks, p.placeW = map[string]int{}, 0
	for _, x := range p.all {
		if x.ForkOf != nil {
			p.forks[x.ForkOf.SessionID]++
		}
		p.placeW = max(p.placeW, min(ansi.StringWidth(place(x)), maxPlace))
	}
	p.loaded = true
	return p.refilter()
}

// branches orders the list (and titles with it) as a tree: each fork
// right after its source, when its source is listed, else where it was;
// depth is how deep each is under its source.
func branches(list []ops.SessionOut, titles []string) ([]ops.SessionOut, []string, []int) {
	listed := make(map[string]bool, len(list))
	for _, x := range list {
		listed[x.SessionID] = true
	}
	kids := map[string][]int{}
	var roots []int
	for i, x := range list {
		if x.ForkOf != nil && listed[x.ForkOf.SessionID] && x.ForkOf.SessionID != x.SessionID {
			kids[x.ForkOf.SessionID] = append(kids[x.ForkOf.SessionID], i)
		} else {
			roots = append(roots, i)
		}
	}
	all, names, depth := make([]ops.SessionOut, 0, len(list)), make([]string, 0, len(list)), make([]int, 0, len(list))
	seen := make([]bool, len(list))
	var walk func(i, d int)
	walk = func(i, d int) {
		if seen[i] {
			return
		}
		seen[i] = true
		all, names, depth = append(all, list[i]), append(names, titles[i]), append(depth, d)
		for _, k := range kids[list[i].SessionID] {
			walk(k, d+1)
		}
	}
	for _, i := range roots {
		walk(i, 0)
	}
	for i := range list { // forks of forks in a cycle: listed all the same
		walk(i, 0)
	}
	return all, names, depth
}

// Waits reports whether key k acts on the sessions listed while the
// list, or its ranking for the filter as typed, is still on its way:
// enter would open, and ctrl+x delete, another session than the one the
// filter picks.
func (p *Sessions) Waits(k tea.KeyPressMsg) bool {
	if p.loaded && p.ranked == p.seq {
		return false
	}
	for _, b := range []key.Binding{p.keys.Open, p.keys.Up, p.keys.Down, p.keys.Rename, p.keys.Delete} {
		if slices.Contains(b.Keys(), k.String()) {
			return true
		}
	}
	return false
}

// SetDates gives the dates of the sessions' first and last messages.
func (p *Sessions) SetDates(dates map[string][2]time.Time) { p.dates = dates }

// Refused shows why the last rename or delete was refused; "" clears it.
func (p *Sessions) Refused(reason string) { p.said = reason }

// Current is the session under the cursor; ok is false when none is
// listed.
func (p *Sessions) Current() (ops.SessionOut, bool) {
	if p.cursor >= len(p.shown) {
		return ops.SessionOut{}, false
	}
	return p.all[p.shown[p.cursor]], true
}

// Shown is the sessions listed, ranked by the filter.
func (p *Sessions) Shown() []ops.SessionOut {
	out := make([]ops.SessionOut, len(p.shown))
	for k, i := range p.shown {
		out[k] = p.all[i]
	}
	return out
}

// Filter is the filter as typed.
func (p *Sessions) Filter() string { return p.filter.Value() }

// refilter asks for the sessions matching the filter as it is now.
func (p *Sessions) refilter() tea.Cmd {
	p.seq++
	seq, titles, q := p.seq, p.titles, p.filter.Value()
	return func() tea.Msg {
		shown, match := rankTitles(titles, q)
		return sessionsFilteredMsg{p, seq, shown, match}
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

// HandleMsg takes the filter's results as they come, and the list's
// keys; every other key goes to the filter.
func (p *Sessions) HandleMsg(msg tea.Msg) Action {
	switch msg := msg.(type) {
	case sessionsFilteredMsg:
		if msg.seq == p.seq {
			p.shown, p.match, p.ranked = msg.shown, msg.match, msg.seq
			p.cursor = min(p.cursor, max(len(p.shown)-1, 0))
			if p.keep != "" {
				for k, i := range p.shown {
					if p.all[i].SessionID == p.keep {
						p.cursor = k
					}
				}
				p.keep = ""
			}
			for _, b := range []*key.Binding{&p.keys.Open, &p.keys.Rename, &p.keys.Delete} {
				b.SetEnabled(len(p.shown) > 0)
			}
		}
		return nil
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, p.keys.Rename):
			p.said = ""
			s, _ := p.Current()
			return ActionOpen{NewRename(p.styles, s)}
		case key.Matches(msg, p.keys.Delete):
			p.said = ""
			s, _ := p.Current()
			return ActionOpen{NewConfirmDelete(s)}
		case key.Matches(msg, p.keys.Close):
			return ActionClose{}
		case key.Matches(msg, p.keys.Down):
			p.cursor = min(p.cursor+1, max(len(p.shown)-1, 0))
			return nil
		case key.Matches(msg, p.keys.Up):
			p.cursor = max(p.cursor-1, 0)
			return nil
		case key.Matches(msg, p.keys.Open):
			s, _ := p.Current()
			return ActionOpenSession{ID: s.SessionID}
		case msg.Code == tea.KeyEnter:
			return nil // nothing listed to open; the filter takes no newline
		}
	}
	var cmd tea.Cmd
	before := p.filter.Value()
	p.filter, cmd = p.filter.Update(msg)
	if p.filter.Value() != before && p.all != nil {
		return ActionCmd{tea.Batch(cmd, p.refilter())}
	}
	return cmdAction(cmd)
}

// View draws a window of the filtered list around the cursor.
func (p *Sessions) View(width int, st *themes.Styles) string {
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
		meta := p.meta(s, w)
		if p.changed[s.SessionID] {
			prefix = prefix[:len(prefix)-1] + "●" // written to since it was last opened
		}
		// Titles take what the columns leave, all cut to the same width.
		titleW := max(w-4-ansi.StringWidth(prefix)-2-ansi.StringWidth(meta), 8)
		if d := p.depth[i]; d > 0 {
			prefix += strings.Repeat("  ", d-1) + "└ "
			titleW = max(titleW-2*d, 8)
		}
		cut := ansi.Truncate(p.titles[i], titleW, "…")
		title := Highlight(cut, p.match[i], style, st.Search.Match) + strings.Repeat(" ", titleW-ansi.StringWidth(cut))
		lines = append(lines, prefix+title+"  "+st.List.Meta.Render(meta))
	}
	if len(p.shown) == 0 && p.ranked == p.seq && p.seq > 0 {
		lines = append(lines, st.Thread.Empty.Render("no session matches"))
	}
	note := "type to filter"
	if len(p.changed) > 0 {
		note = "● written to since last opened · " + note
	}
	lines = append(lines, Hint(st, note, p.keys.ShortHelp()))
	if p.said != "" {
		lines = append(lines, said(st.Status.Error, p.said, w-4))
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

// maxPlace is the widest the room column gets; a longer room and
// interface are cut.
const maxPlace = 24

// place is where a session's conversation happens, as the room column
// shows it: "room (interface)", the room alone, or "(interface)"; ""
// for a session with neither (create_session's room and interface).
func place(s ops.SessionOut) string {
	room, iface := termsafe.Line(s.Room), termsafe.Line(s.Interface)
	switch {
	case room != "" && iface != "":
		return room + " (" + iface + ")"
	case room != "":
		return room
	case iface != "":
		return "(" + iface + ")"
	}
	return ""
}

// metaCol is one of a session's columns and where it goes in the line.
type metaCol struct {
	text  string
	order int // left to right
}

// meta is a session's columns beside its title: where it came from, its
// room and interface (when any session listed has them), the dates of
// its first and last messages, how many messages and tokens. On a narrow
// screen the least useful go first, so the title keeps room.
func (p *Sessions) meta(s ops.SessionOut, w int) string {
	tokens, effective := english.Thousands(s.Tokens), s.Tokens
	if s.EffectiveTokens != nil && *s.EffectiveTokens != s.Tokens {
		tokens += " → " + english.Thousands(*s.EffectiveTokens)
		effective = *s.EffectiveTokens
	}
	source := s.Source
	if source == "" {
		source = "weft"
	}
	switch n := p.forks[s.SessionID]; {
	case s.ForkOf != nil:
		source = fmt.Sprintf("fork at %d", s.ForkOf.Index)
	case n > 0:
		source += ", " + english.Count(n, "fork")
	}
	cols := []metaCol{ // the most useful first
		{fmt.Sprintf("%7s %s", english.Thousands(s.MessageCount), unit(s.MessageCount, "msg")), 3},
		{fmt.Sprintf("%-15s", spanText(p.dates[s.SessionID])), 2},
	}
	if p.placeW > 0 {
		cut := ansi.Truncate(place(s), p.placeW, "…")
		cols = append(cols, metaCol{cut + strings.Repeat(" ", p.placeW-ansi.StringWidth(cut)), 1})
	}
	cols = append(cols,
		metaCol{fmt.Sprintf("%13s %s", tokens, unit(effective, "token")), 4},
		metaCol{fmt.Sprintf("%-11s", ansi.Truncate(termsafe.Line(source), 11, "…")), 0},
	)
	for n := len(cols); n > 0; n-- {
		meta := joinCols(cols[:n])
		if w-4-2-2-ansi.StringWidth(meta) >= 24 || n == 1 {
			return meta
		}
	}
	return ""
}

// joinCols lays the columns kept out as they read best: source, room,
// dates, messages, tokens.
func joinCols(cols []metaCol) string {
	cols = slices.Clone(cols)
	slices.SortFunc(cols, func(a, b metaCol) int { return a.order - b.order })
	texts := make([]string, len(cols))
	for i, c := range cols {
		texts[i] = c.text
	}
	return strings.Join(texts, "  ")
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
