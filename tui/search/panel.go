// Package search is the thread's search panel (/): the query as typed,
// its hits, fuzzy or exact, and the hits marked in the thread itself.
// Matching runs in commands the root makes of a Query, through the
// Service; a Result for an older query is dropped, so typing never
// waits. Hits are items, not places: each keeps its item's ID, and its
// index is found again in every view that loads (Resolve).
package search

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
	"weft/ops/search"
	"weft/themes"
	"weft/tui/dialog"
)

// Limit is the most hits a fuzzy search lists, the best first.
const Limit = 200

// ExactLimit bounds the hits an exact search lists (and n steps
// through); the search still counts them all.
const ExactLimit = 10_000

// Panel is the search: the panel while it is open, and the hits of the
// last query, which n and N go through and the thread marks, after it
// closes.
type Panel struct {
	open  bool
	keys  keys
	input textinput.Model
	seq   int // of the latest query sent
	query string
	hits  []search.LineHit // Index: where the hit's item is now; -1 when an edit since hides it
	ids   []model.ItemID   // the hits' items
	sel   int
	err   error
	// state is what the last result learned: a query extending it is
	// matched only where it can still match and reach the best.
	state *search.FuzzyState
	// shown is the seq of the query whose hits are listed; jumpTo, when
	// not 0, the seq whose best hit enter asked for before it came.
	shown  int
	jumpTo int
	// exact is the mode asked for (substring, not fuzzy); ranExact the
	// mode of the query sent last. The hits shown are for hitsQuery in
	// the mode hitsExact, total of them in all (exact hits are a
	// thread-order prefix of them); place is the hit gone to last, as
	// the status bar counts it (marks.go).
	exact, ranExact bool
	hitsQuery       string
	hitsExact       bool
	total           int
	place           hitPlace
	marks           markCache
}

// keys is the search panel's keys; every other key types into the
// query. Jump and the moves are on only while there are matches, and
// with none enter closes the panel as esc does.
type keys struct {
	Jump, Next, Prev, Close, Mode key.Binding
}

func defaultKeys() keys {
	return keys{
		Jump:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "jumps")),
		Next:  key.NewBinding(key.WithKeys("down", "ctrl+n", "tab"), key.WithHelp("↓", "next match")),
		Prev:  key.NewBinding(key.WithKeys("up", "ctrl+p", "shift+tab"), key.WithHelp("↑", "previous match")),
		Close: key.NewBinding(key.WithKeys("esc", "enter"), key.WithHelp("esc", "closes")),
		Mode:  key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "exact")),
	}
}

// ShortHelp is what the panel's hint lists while the query is empty.
func (k keys) ShortHelp() []key.Binding { return []key.Binding{k.Jump, k.Close, k.Mode} }

// syncKeys switches the keys on and off for the matches shown.
func (p *Panel) syncKeys() {
	has := len(p.hits) > 0
	p.keys.Jump.SetEnabled(has)
	p.keys.Next.SetEnabled(has)
	p.keys.Prev.SetEnabled(has)
	if p.exact {
		p.keys.Mode.SetHelp("ctrl+s", "fuzzy")
	} else {
		p.keys.Mode.SetHelp("ctrl+s", "exact")
	}
}

// Open shows the panel on the last query, ready to type on; the command
// is the input's.
func (p *Panel) Open(st *themes.Styles) tea.Cmd {
	in := dialog.NewTextInput(st)
	in.Prompt = "/ "
	in.SetValue(p.query)
	in.CursorEnd()
	p.input = in
	p.open = true
	p.keys = defaultKeys()
	p.ranExact = p.exact
	p.syncKeys()
	return p.input.Focus()
}

// IsOpen reports whether the panel shows, taking the keys.
func (p *Panel) IsOpen() bool { return p.open }

// Query is a search for the root to run, in a command, through the
// Service; what comes back goes to Take.
type Query struct {
	Seq   int
	Text  string
	Exact bool
	// State is what the last fuzzy result learned, to narrow this one.
	State *search.FuzzyState
}

// Next is the search the query as typed asks for, when it differs (in
// text or mode) from the last one sent; ok is false when there is none
// to run, a blank query clearing the hits.
func (p *Panel) Next() (q Query, ok bool) {
	text := p.input.Value()
	if text == p.query && p.exact == p.ranExact {
		return Query{}, false
	}
	p.seq++
	p.query, p.ranExact = text, p.exact
	if strings.TrimSpace(text) == "" {
		p.hits, p.ids, p.sel, p.state, p.place = nil, nil, 0, nil, hitPlace{}
		p.syncKeys()
		return Query{}, false
	}
	return Query{Seq: p.seq, Text: text, Exact: p.exact, State: p.state}, true
}

// Result is what a search found.
type Result struct {
	Seq   int // the Query's
	Query string
	Hits  []search.LineHit
	IDs   []model.ItemID // the hits' items, named in the view searched
	State *search.FuzzyState
	Err   error
	Exact bool
	Total int // hits in all: an exact search lists ExactLimit of them at most
}

// Take shows a result, unless a later query was sent since, and finds
// its hits in v, the view shown (the search read an older one, maybe).
// jump reports that enter asked for the best of these hits before they
// came: the root goes to it (or says none matched).
func (p *Panel) Take(r Result, v *model.View) (jump bool) {
	// A stale answer is not shown, but what it learned still narrows
	// the next search if the query goes on from it.
	if r.State != nil && !p.exact && strings.HasPrefix(p.query, r.Query) && (p.state == nil || len(r.Query) >= len(p.state.Query())) {
		p.state = r.State
	}
	if r.Seq != p.seq {
		return false
	}
	p.hits, p.ids, p.err, p.sel, p.shown = r.Hits, r.IDs, r.Err, 0, r.Seq
	p.hitsQuery, p.hitsExact, p.total, p.place = r.Query, r.Exact, r.Total, hitPlace{}
	p.marks.reset()
	p.Resolve(v)
	p.syncKeys()
	if p.jumpTo == r.Seq {
		p.jumpTo = 0
		return true
	}
	return false
}

// Resolve finds each hit's item in v, the view shown; a hit whose item
// an operation now hides gets index -1.
func (p *Panel) Resolve(v *model.View) {
	if v == nil {
		return
	}
	for k := range p.hits {
		if k < len(p.ids) {
			p.hits[k].Index = v.IndexOf(p.ids[k])
		}
	}
}

// HandleKey takes a key while the panel is open: it moves among the
// hits, closes the panel, switches the mode or types into the query.
// goTo is the hit enter asks to go to, or -1; the root then runs the
// search Next asks for, if any.
func (p *Panel) HandleKey(msg tea.KeyPressMsg) (goTo int, cmd tea.Cmd) {
	if msg.String() == "enter" && p.shown != p.seq && strings.TrimSpace(p.query) != "" {
		// The hits for what was typed last are still on their way:
		// enter goes to the best of those, not of an older query's.
		p.open, p.jumpTo = false, p.seq
		return -1, nil
	}
	switch {
	case key.Matches(msg, p.keys.Jump):
		p.open = false
		return p.sel, nil
	case key.Matches(msg, p.keys.Close):
		p.open = false
	case key.Matches(msg, p.keys.Next):
		p.sel = min(p.sel+1, len(p.hits)-1)
	case key.Matches(msg, p.keys.Prev):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, p.keys.Mode):
		p.exact = !p.exact // the same query, in the other mode
		p.syncKeys()
	default:
		p.input, cmd = p.input.Update(msg)
	}
	return -1, cmd
}

// Jumping reports whether enter asked for the best hit of a query whose
// hits are still on their way.
func (p *Panel) Jumping() bool { return p.jumpTo != 0 }

// Hits are the hits listed, the best first (an exact search's in thread
// order); each Index is where its item is in the view shown, -1 where an
// operation hides it.
func (p *Panel) Hits() []search.LineHit { return p.hits }

// Hit is hit k with its item; named is false for a result that named no
// items, whose index is all there is.
func (p *Panel) Hit(k int) (h search.LineHit, id model.ItemID, named bool) {
	if k >= len(p.ids) {
		return p.hits[k], "", false
	}
	return p.hits[k], p.ids[k], true
}

// Query is the query sent last.
func (p *Panel) Query() string { return p.query }

// Value is the query as typed.
func (p *Panel) Value() string { return p.input.Value() }

// SetValue replaces the query as typed; Next then asks for its search.
func (p *Panel) SetValue(s string) { p.input.SetValue(s) }

// Exact reports whether the exact mode is asked for.
func (p *Panel) Exact() bool { return p.exact }

// HitsExact reports whether the hits shown are an exact search's.
func (p *Panel) HitsExact() bool { return p.hitsExact }

// Err is why the last search failed, or nil.
func (p *Panel) Err() error { return p.err }

// Seq numbers the query sent last.
func (p *Panel) Seq() int { return p.seq }

// State is what the last fuzzy result learned, kept to narrow the next.
func (p *Panel) State() *search.FuzzyState { return p.state }

// View is the panel's lines for a screen width wide: the input, with
// what the search says beside it, and a window of the hits.
func (p *Panel) View(width int, st *themes.Styles) []string {
	// Beside the input: an error, else what to do while the query is
	// empty, else how many matched.
	var info string
	switch {
	case p.err != nil:
		info = st.Status.Error.Render(p.err.Error())
	case strings.TrimSpace(p.input.Value()) == "":
		info = dialog.Hint(st, "type to search the whole thread", p.keys.ShortHelp())
	case p.hitsExact && p.total > len(p.hits):
		info = st.Dialog.Hint.Render(fmt.Sprintf("exact: the first %s of %s", english.Thousands(len(p.hits)), english.Count(p.total, "match")))
	case p.hitsExact:
		info = st.Dialog.Hint.Render("exact: " + english.Count(len(p.hits), "match"))
	case len(p.hits) == Limit:
		info = st.Dialog.Hint.Render(fmt.Sprintf("best %d matches", Limit))
	default:
		info = st.Dialog.Hint.Render(english.Count(len(p.hits), "match"))
	}
	if strings.TrimSpace(p.input.Value()) != "" && p.err == nil {
		info += st.Dialog.Hint.Render(dialog.HintSeparator + p.keys.Mode.Help().Key + " " + p.keys.Mode.Help().Desc)
	}
	lines := []string{p.input.View() + "  " + info}
	shown := min(len(p.hits), 8)
	from := min(max(p.sel-shown/2, 0), max(len(p.hits)-shown, 0))
	for i := from; i < from+shown; i++ {
		h := p.hits[i]
		prefix, style := "  ", st.Search.Result
		if i == p.sel {
			prefix, style = "▸ ", st.Search.Active
		}
		var line string
		if termsafe.Safe(h.Line) {
			text, offsets := hitWindow(strings.TrimSpace(h.Line), trimOffsets(h.Line, h.Matched), width-12)
			line = dialog.Highlight(text, offsets, style, st.Search.Match)
		} else {
			// The line carries control characters, shown as pictures
			// (termsafe); the match offsets no longer fit it.
			line = style.Render(termsafe.Line(strings.TrimSpace(h.Line)))
		}
		line = ansi.Truncate(line, width-12, "…")
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
