package tui

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

// exactLimit bounds the hits an exact search lists (and n steps
// through); the search still counts them all.
const exactLimit = 10_000

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

// marksOn reports whether hits are to be marked.
func (m *Model) marksOn() bool {
	return len(m.search.hits) > 0 && strings.TrimSpace(m.search.hitsQuery) != ""
}

// markLine marks the hits on line i of row r's rendered lines (the
// header, line 0, is never marked).
func (m *Model) markLine(r, i int, l string) string {
	if i == 0 || !m.marksOn() {
		return l
	}
	s := &m.search
	if s.hitsExact {
		return markSpans(l, foldSpans(ansi.Strip(l), s.hitsQuery), m.styles.Search.Match)
	}
	id, ok := m.rowItemID(r)
	if !ok {
		return l
	}
	c := &m.feat.marks
	if c.byID == nil {
		c.byID = make(map[model.ItemID]int, len(s.ids))
		for k, hid := range s.ids {
			if _, seen := c.byID[hid]; !seen {
				c.byID[hid] = k
			}
		}
	}
	k, ok := c.byID[id]
	if !ok {
		return l
	}
	lines := m.rowLines(r)
	key := markLineKey{id: id, lines: len(lines), first: lines[0]}
	li, ok := c.line[key]
	if !ok {
		li = findLine(lines, s.hits[k].Line)
		if c.line == nil {
			c.line = map[markLineKey]int{}
		}
		c.line[key] = li
	}
	if i != li {
		return l
	}
	plain := ansi.Strip(l)
	found := fuzzy.Find(s.hitsQuery, []string{plain})
	if len(found) == 0 {
		return l
	}
	var spans [][2]int
	for _, b := range found[0].MatchedIndexes {
		_, size := utf8.DecodeRuneInString(plain[b:])
		spans = append(spans, [2]int{b, b + size})
	}
	return markSpans(l, spans, m.styles.Search.Match)
}

// rowItemID is the ID of the item row r shows, if it shows one.
func (m *Model) rowItemID(r int) (model.ItemID, bool) {
	switch rw := m.rowAt(r); rw.kind {
	case rowItem:
		return m.view.ID(m.view.Items[rw.item]), true
	case rowHidden:
		return m.view.ID(m.view.Markers[rw.marker].Hidden[rw.item]), true
	}
	return "", false
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

// placeHit records hit k as the one gone to, with its place among the
// hits shown in thread order.
func (m *Model) placeHit(k int) {
	s := &m.search
	if k >= len(s.hits) || k >= len(s.ids) {
		s.place = hitPlace{}
		return
	}
	at := s.hits[k].Index
	p := hitPlace{id: s.ids[k], more: s.total > len(s.hits)}
	for _, h := range s.hits {
		if h.Index < 0 || !m.filterShows(h.Index) {
			continue
		}
		p.of++
		if h.Index < at {
			p.n++
		}
	}
	p.n++
	s.place = p
}

// hitStatus is the status bar's "match 3/17" while the cursor is on the
// hit gone to last, else "".
func (m *Model) hitStatus() string {
	p := m.search.place
	if p.id == "" || len(m.search.hits) == 0 {
		return ""
	}
	if id, ok := m.rowItemID(m.cursor); !ok || id != p.id {
		return ""
	}
	of := english.Thousands(p.of)
	if p.more {
		of += "+"
	}
	return fmt.Sprintf("%s/%s", english.Thousands(p.n), of)
}
