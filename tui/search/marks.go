package search

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"

	"weft/internal/english"
	"weft/model"
)

// Search hits are marked in the thread itself, not only in the search's
// list: an exact search marks every place its text shows on the screen;
// a fuzzy one marks the matched characters of each hit's line, in the
// items it found. Marks are drawn line by line as the screen is, on the
// lines shown only, so a frame costs what it did plus a look at the
// lines on the screen. n and N say which hit the cursor is on ("match
// 3/17") in the status bar.

// hitPlace is the hit gone to last: its item and its place among the
// hits shown, in thread order.
type hitPlace struct {
	id    model.ItemID
	n, of int
	more  bool // the search found more than it lists
}

// markCache keeps, for a fuzzy search, which of an item's rendered lines
// shows its hit (-1: none), so a frame does not look for it again.
type markCache struct {
	byID map[model.ItemID]int // hit index by item, for the hits shown
	line map[markLineKey]int
}

type markLineKey struct {
	id    model.ItemID
	lines int // the row's rendered lines: a width or unfolding changes them
	first string
}

// reset forgets what was kept: new hits came.
func (c *markCache) reset() { c.byID, c.line = nil, nil }

// Marking reports whether hits are to be marked in the thread.
func (p *Panel) Marking() bool {
	return len(p.hits) > 0 && strings.TrimSpace(p.hitsQuery) != ""
}

// Mark marks the hits on l, line i of a row's rendered lines (the
// header, line 0, is never marked). row is asked, only when a fuzzy
// search needs them, for the item the row shows (ok false for none) and
// its rendered lines.
func (p *Panel) Mark(i int, l string, row func() (id model.ItemID, lines []string, ok bool), match lipgloss.Style) string {
	if i == 0 || !p.Marking() {
		return l
	}
	if p.hitsExact {
		return markSpans(l, foldSpans(ansi.Strip(l), p.hitsQuery), match)
	}
	id, lines, ok := row()
	if !ok {
		return l
	}
	c := &p.marks
	if c.byID == nil {
		c.byID = make(map[model.ItemID]int, len(p.ids))
		for k, hid := range p.ids {
			if _, seen := c.byID[hid]; !seen {
				c.byID[hid] = k
			}
		}
	}
	k, ok := c.byID[id]
	if !ok {
		return l
	}
	key := markLineKey{id: id, lines: len(lines), first: lines[0]}
	li, ok := c.line[key]
	if !ok {
		li = FindLine(lines, p.hits[k].Line)
		if c.line == nil {
			c.line = map[markLineKey]int{}
		}
		c.line[key] = li
	}
	if i != li {
		return l
	}
	plain := ansi.Strip(l)
	found := fuzzy.Find(p.hitsQuery, []string{plain})
	if len(found) == 0 {
		return l
	}
	var spans [][2]int
	for _, b := range found[0].MatchedIndexes {
		_, size := utf8.DecodeRuneInString(plain[b:])
		spans = append(spans, [2]int{b, b + size})
	}
	return markSpans(l, spans, match)
}

// markSpans styles byte spans of a styled line's plain text (ascending,
// not overlapping); lipgloss ranges are in cells, so each is converted.
func markSpans(l string, spans [][2]int, st lipgloss.Style) string {
	if len(spans) == 0 {
		return l
	}
	plain := ansi.Strip(l)
	ranges := make([]lipgloss.Range, 0, len(spans))
	for _, sp := range spans {
		start := ansi.StringWidth(plain[:sp[0]])
		ranges = append(ranges, lipgloss.NewRange(start, start+ansi.StringWidth(plain[sp[0]:sp[1]]), st))
	}
	return lipgloss.StyleRanges(l, ranges...)
}

// foldSpans finds every place q shows in s, case ignored, as byte spans.
func foldSpans(s, q string) [][2]int {
	qr := []rune(q)
	if len(qr) == 0 {
		return nil
	}
	var out [][2]int
	for i := 0; i < len(s); {
		j, k := i, 0
		for k < len(qr) && j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if r != qr[k] && unicode.ToLower(r) != unicode.ToLower(qr[k]) {
				break
			}
			j += size
			k++
		}
		if k == len(qr) {
			out = append(out, [2]int{i, j})
			i = j
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return out
}

// FindLine finds the rendered line (past the header) that shows the
// start of a matched source line, or -1. Rendering wraps lines and
// takes markdown's marks away, so both are compared without them.
func FindLine(lines []string, source string) int {
	key := []rune(plainWords(source))
	if len(key) == 0 {
		return -1
	}
	key = key[:min(len(key), 24)]
	for i := 1; i < len(lines); i++ {
		if strings.Contains(plainWords(ansi.Strip(lines[i])), string(key)) {
			return i
		}
	}
	return -1
}

// plainWords is a line's words and nothing else: no markdown marks, no
// list bullets, single spaces.
func plainWords(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case strings.ContainsRune("*_`#>|~•", r):
			return ' '
		case unicode.IsSpace(r):
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// Place records hit k as the one gone to, with its place among the hits
// shows keeps (the filter's), in thread order.
func (p *Panel) Place(k int, shows func(index int) bool) {
	if k >= len(p.hits) || k >= len(p.ids) {
		p.place = hitPlace{}
		return
	}
	at := p.hits[k].Index
	pl := hitPlace{id: p.ids[k], more: p.total > len(p.hits)}
	for _, h := range p.hits {
		if h.Index < 0 || !shows(h.Index) {
			continue
		}
		pl.of++
		if h.Index < at {
			pl.n++
		}
	}
	pl.n++
	p.place = pl
}

// Status is the status bar's "3/17" while the cursor is on the item of
// the hit gone to last, else "". cursor is asked, only when a hit was
// gone to, for the item under the cursor (ok false for none).
func (p *Panel) Status(cursor func() (model.ItemID, bool)) string {
	pl := p.place
	if pl.id == "" || len(p.hits) == 0 {
		return ""
	}
	if id, ok := cursor(); !ok || id != pl.id {
		return ""
	}
	of := english.Thousands(pl.of)
	if pl.more {
		of += "+"
	}
	return fmt.Sprintf("%s/%s", english.Thousands(pl.n), of)
}
