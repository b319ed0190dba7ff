package tui

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
	textsearch "weft/ops/search"
	"weft/tui/dialog"
)

// search is the fuzzy search: typing runs matching in a command; results
// that come back for an older query are dropped, so typing never waits.
type search struct {
	open  bool
	keys  searchKeys
	input textinput.Model
	seq   int // of the latest query sent
	query string
	hits  []textsearch.LineHit // Index: where the hit's item is now; -1 when an edit since hides it
	ids   []model.ItemID       // the hits' items
	sel   int
	err   error
	// state is what the last result learned: a query extending it is
	// matched only where it can still match and reach the best.
	state *textsearch.FuzzyState
	// shown is the seq of the query whose hits are listed; jumpTo, when
	// not 0, the seq whose best hit enter asked for before it came.
	shown  int
	jumpTo int
	// exact is the mode asked for (substring, not fuzzy); ranExact the
	// mode of the query sent last. The hits shown are for hitsQuery in
	// the mode hitsExact, total of them in all (exact hits are a
	// thread-order prefix of them); place is the hit gone to last, as
	// the status bar counts it (searchmarks.go).
	exact, ranExact bool
	hitsQuery       string
	hitsExact       bool
	total           int
	place           hitPlace
}

// searchKeys is the search panel's keys; every other key types into the
// query. Jump and the moves are on only while there are matches, and
// with none enter closes the panel as esc does.
type searchKeys struct {
	Jump, Next, Prev, Close, Mode key.Binding
}

func defaultSearchKeys() searchKeys {
	return searchKeys{
		Jump:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "jumps")),
		Next:  key.NewBinding(key.WithKeys("down", "ctrl+n", "tab"), key.WithHelp("↓", "next match")),
		Prev:  key.NewBinding(key.WithKeys("up", "ctrl+p", "shift+tab"), key.WithHelp("↑", "previous match")),
		Close: key.NewBinding(key.WithKeys("esc", "enter"), key.WithHelp("esc", "closes")),
		Mode:  key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "exact")),
	}
}

// ShortHelp is what the panel's hint lists while the query is empty.
func (k searchKeys) ShortHelp() []key.Binding { return []key.Binding{k.Jump, k.Close, k.Mode} }

// syncKeys switches the keys on and off for the matches shown.
func (s *search) syncKeys() {
	has := len(s.hits) > 0
	s.keys.Jump.SetEnabled(has)
	s.keys.Next.SetEnabled(has)
	s.keys.Prev.SetEnabled(has)
	if s.exact {
		s.keys.Mode.SetHelp("ctrl+s", "fuzzy")
	} else {
		s.keys.Mode.SetHelp("ctrl+s", "exact")
	}
}

type searchResultMsg struct {
	sid   string // the session searched: a result for another is dropped
	seq   int
	query string
	hits  []textsearch.LineHit
	ids   []model.ItemID // the hits' items, named in the view searched
	state *textsearch.FuzzyState
	err   error
	exact bool
	total int
}

const searchLimit = 200

func (m *Model) openSearch() tea.Cmd {
	in := dialog.NewTextInput(m.styles)
	in.Prompt = "/ "
	in.SetValue(m.search.query)
	in.CursorEnd()
	m.search.input = in
	m.search.open = true
	m.search.keys = defaultSearchKeys()
	m.search.ranExact = m.search.exact
	m.search.syncKeys()
	// The session's text for searches is read while the operator types
	// the first characters (a second or two on a million messages); an
	// error shows with the search's own answer.
	svc, sid := m.svc, m.sid
	prepare := func() tea.Msg {
		_ = textsearch.Prepare(svc, sid)
		return nil
	}
	return tea.Batch(m.search.input.Focus(), prepare)
}

// runSearch matches the current query in a command.
func (m *Model) runSearch() tea.Cmd {
	s := &m.search
	q := s.input.Value()
	if q == s.query && s.exact == s.ranExact {
		return nil
	}
	s.seq++
	s.query, s.ranExact = q, s.exact
	if strings.TrimSpace(q) == "" {
		s.hits, s.ids, s.sel, s.state, s.place = nil, nil, 0, nil, hitPlace{}
		s.syncKeys()
		return nil
	}
	seq, svc, sid, prev := s.seq, m.svc, m.sid, s.state
	if s.exact {
		return func() tea.Msg {
			hits, ids, total, err := textsearch.SubstringLines(svc, sid, q, exactLimit)
			return searchResultMsg{sid: sid, seq: seq, query: q, hits: hits, ids: ids, err: err, exact: true, total: total}
		}
	}
	return func() tea.Msg {
		hits, state, err := textsearch.FuzzyLines(svc, sid, q, prev, searchLimit)
		ids := make([]model.ItemID, len(hits))
		for k, h := range hits {
			ids[k] = state.ItemID(h.Index)
		}
		return searchResultMsg{sid: sid, seq: seq, query: q, hits: hits, ids: ids, state: state, err: err, total: len(hits)}
	}
}

func (m *Model) searchResult(msg searchResultMsg) tea.Cmd {
	s := &m.search
	if msg.sid != m.sid {
		return nil // searched in the session shown before a switch
	}
	// A stale answer is not shown, but what it learned still narrows
	// the next search if the query goes on from it.
	if msg.state != nil && !s.exact && strings.HasPrefix(s.query, msg.query) && (s.state == nil || len(msg.query) >= len(s.state.Query())) {
		s.state = msg.state
	}
	if msg.seq != s.seq {
		return nil
	}
	s.hits, s.ids, s.err, s.sel, s.shown = msg.hits, msg.ids, msg.err, 0, msg.seq
	s.hitsQuery, s.hitsExact, s.total, s.place = msg.query, msg.exact, msg.total, hitPlace{}
	m.feat.marks.reset()
	m.resolveHits() // searched in a view that may be older than the one shown
	s.syncKeys()
	if s.jumpTo == msg.seq {
		// enter came before these hits: go to the best of them now.
		s.jumpTo = 0
		if len(s.hits) > 0 {
			return m.gotoHit(0)
		}
		return m.flash("no match for "+strconv.Quote(s.query), false)
	}
	return nil
}

func (m *Model) searchKey(msg tea.KeyPressMsg) tea.Cmd {
	s := &m.search
	if msg.String() == "enter" && s.shown != s.seq && strings.TrimSpace(s.query) != "" {
		// The hits for what was typed last are still on their way:
		// enter goes to the best of those, not of an older query's.
		s.open, s.jumpTo = false, s.seq
		return nil
	}
	switch {
	case key.Matches(msg, s.keys.Jump):
		s.open = false
		return m.gotoHit(s.sel)
	case key.Matches(msg, s.keys.Close):
		s.open = false
		return nil
	case key.Matches(msg, s.keys.Next):
		s.sel = min(s.sel+1, len(s.hits)-1)
		return nil
	case key.Matches(msg, s.keys.Prev):
		s.sel = max(s.sel-1, 0)
		return nil
	case key.Matches(msg, s.keys.Mode):
		s.exact = !s.exact
		s.syncKeys()
		return m.runSearch() // the same query, in the other mode
	}
	var cmd tea.Cmd
	s.input, cmd = s.input.Update(msg)
	return tea.Batch(cmd, m.runSearch())
}

// searchView is the search panel: the input and the best results.
func (m *Model) searchView() []string {
	s := &m.search
	st := m.styles
	// Beside the input: an error, else what to do while the query is
	// empty, else how many matched.
	var info string
	switch {
	case s.err != nil:
		info = st.Status.Error.Render(s.err.Error())
	case strings.TrimSpace(s.input.Value()) == "":
		info = dialog.Hint(st, "type to search the whole thread", s.keys.ShortHelp())
	case s.hitsExact && s.total > len(s.hits):
		info = st.Dialog.Hint.Render(fmt.Sprintf("exact: the first %s of %s", english.Thousands(len(s.hits)), english.Count(s.total, "match")))
	case s.hitsExact:
		info = st.Dialog.Hint.Render("exact: " + english.Count(len(s.hits), "match"))
	case len(s.hits) == searchLimit:
		info = st.Dialog.Hint.Render(fmt.Sprintf("best %d matches", searchLimit))
	default:
		info = st.Dialog.Hint.Render(english.Count(len(s.hits), "match"))
	}
	if strings.TrimSpace(s.input.Value()) != "" && s.err == nil {
		info += st.Dialog.Hint.Render(dialog.HintSeparator + s.keys.Mode.Help().Key + " " + s.keys.Mode.Help().Desc)
	}
	lines := []string{s.input.View() + "  " + info}
	shown := min(len(s.hits), 8)
	from := min(max(s.sel-shown/2, 0), max(len(s.hits)-shown, 0))
	for i := from; i < from+shown; i++ {
		h := s.hits[i]
		prefix, style := "  ", st.Search.Result
		if i == s.sel {
			prefix, style = "▸ ", st.Search.Active
		}
		var line string
		if termsafe.Safe(h.Line) {
			text, offsets := hitWindow(strings.TrimSpace(h.Line), trimOffsets(h.Line, h.Matched), m.width-12)
			line = dialog.Highlight(text, offsets, style, st.Search.Match)
		} else {
			// The line carries control characters, shown as pictures
			// (termsafe); the match offsets no longer fit it.
			line = style.Render(termsafe.Line(strings.TrimSpace(h.Line)))
		}
		line = ansi.Truncate(line, m.width-12, "…")
		where := fmt.Sprintf("%6d ", h.Index)
		if h.Index < 0 {
			where = "hidden " // an operation made since the search hides it
		}
		lines = append(lines, prefix+st.Thread.ID.Render(where)+line)
	}
	return lines
}

// hitWindow is the part of a hit's line that shows its match within
// width cells: the line itself when the match's first character is in
// the first two thirds of it, else the line from a little before the
// match, after "…", the offsets moved with it.
func hitWindow(line string, offsets []int, width int) (string, []int) {
	if len(offsets) == 0 || width < 12 || ansi.StringWidth(line[:min(offsets[0], len(line))]) < width*2/3 {
		return line, offsets
	}
	// Start a quarter of the width before the match, on a rune's start.
	cut := offsets[0]
	for back := 0; cut > 0 && back < width/4; back++ {
		_, size := utf8.DecodeLastRuneInString(line[:cut])
		cut -= size
	}
	const more = "…"
	out := make([]int, 0, len(offsets))
	for _, o := range offsets {
		if o >= cut {
			out = append(out, o-cut+len(more))
		}
	}
	return more + line[cut:], out
}

// trimOffsets shifts match offsets for the leading space TrimSpace drops.
func trimOffsets(line string, offsets []int) []int {
	lead := len(line) - len(strings.TrimLeft(line, " \t"))
	out := make([]int, 0, len(offsets))
	for _, o := range offsets {
		if o >= lead {
			out = append(out, o-lead)
		}
	}
	return out
}
