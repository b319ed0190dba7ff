package search

import (
	"strings"
	"unicode/utf8"

	"weft/internal/fuzzy"
)

// Search results show a few lines around a hit rather than the whole
// message: a 16 KB tool output that mentions the query once is one line
// of it to the agent, which reads the rest with get_message_range.

const (
	// snippetAround is how many bytes of the hit's line a snippet keeps
	// on either side of the hit.
	snippetAround = 100
	// snippetLine is how many bytes of a neighbouring line it keeps.
	snippetLine = 120
)

// HitFinder finds where in a message's content a search's query hit.
type HitFinder struct {
	query string
	fuzzy bool
	sub   *fuzzy.Matcher
}

// NewHitFinder finds query as a search of that mode does.
func NewHitFinder(query string, fuzzyMode bool) HitFinder {
	return HitFinder{query: query, fuzzy: fuzzyMode, sub: fuzzy.NewMatcher(query)}
}

// In returns the byte offset and length of the hit in content: the
// first occurrence of a substring query, the matched span of the best
// line of a fuzzy one; 0, 0 when it finds none (a content that matched
// only in a part).
func (f HitFinder) In(content string) (at, size int) {
	if !f.fuzzy {
		if i := f.sub.Index([]byte(content)); i >= 0 {
			return i, min(f.sub.Len(), len(content)-i)
		}
		return 0, 0
	}
	hits, _ := fuzzy.Lines([]fuzzy.Doc{{Index: 0, Text: []byte(content)}}, f.query, 1, nil, 0, nil)
	if len(hits) == 0 || len(hits[0].Matched) == 0 {
		return 0, 0
	}
	h := hits[0]
	line := strings.Index(content, h.Line)
	if line < 0 {
		return 0, 0
	}
	first, last := h.Matched[0], h.Matched[len(h.Matched)-1]
	_, lastSize := utf8.DecodeRuneInString(h.Line[last:])
	return line + first, last + lastSize - first
}

// Snippet is the line of content a hit (at, size) is on and the lines
// either side, long lines cut (…) around the hit, the hit between ** and
// **.
func Snippet(content string, at, size int) string {
	lineStart := strings.LastIndexByte(content[:at], '\n') + 1
	lineEnd := len(content)
	if i := strings.IndexByte(content[at+size:], '\n'); i >= 0 {
		lineEnd = at + size + i
	}
	var lines []string
	if lineStart > 0 {
		prev := content[:lineStart-1]
		lines = append(lines, cutLine(prev[strings.LastIndexByte(prev, '\n')+1:]))
	}
	from, to := RuneBack(content, max(lineStart, at-snippetAround)), RuneBack(content, min(lineEnd, at+size+snippetAround))
	var b strings.Builder
	if from > lineStart {
		b.WriteString("…")
	}
	b.WriteString(content[from:at])
	if size > 0 {
		b.WriteString("**" + content[at:at+size] + "**")
	}
	b.WriteString(content[at+size : max(to, at+size)])
	if to < lineEnd {
		b.WriteString("…")
	}
	lines = append(lines, b.String())
	if lineEnd < len(content) {
		next := content[lineEnd+1:]
		if i := strings.IndexByte(next, '\n'); i >= 0 {
			next = next[:i]
		}
		lines = append(lines, cutLine(next))
	}
	return strings.Join(lines, "\n")
}

// cutLine keeps the start of a long line.
func cutLine(s string) string {
	s = strings.TrimRight(s, "\r")
	if len(s) <= snippetLine {
		return s
	}
	return s[:RuneBack(s, snippetLine)] + "…"
}

// RuneBack moves a byte offset back to the start of the character it
// falls in.
func RuneBack(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
