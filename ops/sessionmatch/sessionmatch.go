// Package sessionmatch says how well what someone typed names a
// session (its ID, its title, a word of it, its characters in order),
// and which titles name one session alone, as a session_id reads them.
package sessionmatch

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"weft/model"
)

// How well a session matches a query, best first.
const (
	Exact       = iota // the ID, or the whole title (case aside)
	IDPrefix           // the start of the ID
	TitlePrefix        // the start of the title
	WordPrefix         // the start of a word of the title
	InTitle            // somewhere in the title
	InOrder            // the query's characters in order in the title
	NoMatch            // no match at all
)

// Rank is how well session x matches q (lower case, trimmed): one of
// the constants above, NoMatch when it does not.
func Rank(x *model.Session, q string) int {
	if q == "" {
		return Exact
	}
	id, title := strings.ToLower(x.ID), strings.ToLower(x.Title)
	switch {
	case id == q || title == q:
		return Exact
	case strings.HasPrefix(id, q):
		return IDPrefix
	case strings.HasPrefix(title, q):
		return TitlePrefix
	}
	// Any occurrence may start a word, not only the first.
	for j := 0; ; j++ {
		k := strings.Index(title[j:], q)
		if k < 0 {
			break
		}
		j += k
		if r, _ := utf8.DecodeLastRuneInString(title[:j]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return WordPrefix
		}
	}
	if strings.Contains(title, q) {
		return InTitle
	}
	if inOrder(title, q) {
		return InOrder
	}
	return NoMatch
}

// inOrder reports whether the runes of q appear in s in order.
func inOrder(s, q string) bool {
	rest := []rune(q)
	for _, r := range s {
		if len(rest) == 0 {
			break
		}
		if r == rest[0] {
			rest = rest[1:]
		}
	}
	return len(rest) == 0
}

// Names knows which titles name one session, as session_id reads
// them (resolveLocked: an exact ID, a unique ID prefix of four characters
// or more, then an exact title).
type Names struct {
	ids    []string // sorted
	titles map[string]int
}

// NewNames knows the names of sessions.
func NewNames(sessions []model.Session) Names {
	n := Names{ids: make([]string, len(sessions)), titles: make(map[string]int, len(sessions))}
	for i, x := range sessions {
		n.ids[i] = x.ID
		n.titles[x.Title]++
	}
	slices.Sort(n.ids)
	return n
}

// Only reports whether title, given as a session_id, names the
// session id and no other.
func (n Names) Only(title, id string) bool {
	if strings.TrimSpace(title) != title || title == "" || n.titles[title] != 1 {
		return false
	}
	// An ID, or the start of one, is read as an ID first.
	i, _ := slices.BinarySearch(n.ids, title)
	if i < len(n.ids) && (n.ids[i] == title || (len(title) >= 4 && strings.HasPrefix(n.ids[i], title))) {
		return false
	}
	return true
}
