package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"weft/ops"

	"weft/internal/fuzzy"
	"weft/model"
	"weft/store"
)

// The TUI's exact search and its filter: line-level and item-level reads
// of a whole thread, made in the TUI's commands (never in its Update),
// beside FuzzyLines.

// SubstringLines finds the items of the effective thread that contain
// query (case ignored) and, in each, the first line that does: at most
// limit hits (0: all), in thread order, each with the matched characters'
// byte offsets in its line, and with its item's ID, so the hit can be
// found again after an edit. total counts every item that matched.
func SubstringLines(s *ops.Service, ref, query string, limit int) (hits []LineHit, ids []model.ItemID, total int, err error) {
	if strings.TrimSpace(query) == "" {
		return nil, nil, 0, ops.Invalidf("query is empty: give the text to look for")
	}
	snap, err := s.Snapshot(ref)
	if err != nil {
		return nil, nil, 0, err
	}
	v := snap.View
	if fuzzy.CanSubstring(query) {
		hits, total, err = substringLines(s, snap, query, limit)
	} else {
		hits, total, err = foldLines(s, v, query, limit)
	}
	if err != nil {
		return nil, nil, 0, err
	}
	ids = make([]model.ItemID, len(hits))
	for k, h := range hits {
		ids[k] = v.ID(v.Items[h.Index])
	}
	return hits, ids, total, nil
}

// foldLines is SubstringLines's hits for any query: every item's text
// matched on every core, then only the hits kept read for their line.
func foldLines(s *ops.Service, v *model.View, query string, limit int) (hits []LineHit, total int, err error) {
	err = s.Store().View(func(tx *store.Tx) error {
		docs, err := viewDocs(tx, v)
		if err != nil {
			return err
		}
		found, n := fuzzy.Substring(docs, query, limit)
		total = n
		at := make(map[int]int, len(found)) // item index -> place in found
		for k, i := range found {
			at[i] = k
		}
		hits = make([]LineHit, len(found))
		for _, d := range docs {
			if k, ok := at[d.Index]; ok {
				hits[k] = lineHit(d, query)
			}
		}
		return nil
	})
	return hits, total, err
}

// maxHitLine bounds a hit's line, as FuzzyLines does.
const maxHitLine = 512

// lineHit is the first line of a doc holding query, with the matched
// characters' offsets; a long line is cut to a window around the match.
func lineHit(d fuzzy.Doc, query string) LineHit {
	h := LineHit{Index: d.Index}
	for rest := string(d.Text); rest != ""; {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		line = strings.TrimRight(line, "\r")
		start, end := foldIndex(line, query)
		if start < 0 {
			continue
		}
		if len(line) > maxHitLine {
			from := RuneBack(line, max(start-maxHitLine/4, 0))
			to := RuneBack(line, min(from+maxHitLine, len(line)))
			line, start, end = line[from:to], start-from, min(end-from, to-from)
		}
		h.Line = line
		for i := start; i < end; {
			h.Matched = append(h.Matched, i)
			_, size := utf8.DecodeRuneInString(line[i:])
			i += size
		}
		return h
	}
	return h // the match spans lines (the query has a line break): no line to show
}

// foldIndex finds query in s, case ignored (Unicode simple folding),
// and returns the byte span it takes in s, or -1, -1.
func foldIndex(s, query string) (int, int) {
	q := []rune(query)
	for i := 0; i < len(s); {
		j, k := i, 0
		for k < len(q) && j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if r != q[k] && !foldsEqual(r, q[k]) {
				break
			}
			j += size
			k++
		}
		if k == len(q) {
			return i, j
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return -1, -1
}

// foldsEqual reports whether two runes are the same letter, case ignored.
func foldsEqual(a, b rune) bool {
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// ItemFilter picks items of an effective thread by role, tag or author.
// A field left empty picks every item; an item must satisfy every field
// given, and, within a field, any of its values.
type ItemFilter struct {
	Roles []model.Role
	Tags  []string // an item carries the tag (case ignored)
	// Authors match, case ignored and as a part ("claude" finds
	// "claude-code"), a stored message's name or the author of the
	// operation that made a synthetic item.
	Authors []string
}

// Empty reports whether the filter picks every item.
func (f ItemFilter) Empty() bool { return len(f.Roles)+len(f.Tags)+len(f.Authors) == 0 }

// FilterItems returns the indices, in order, of the items of view v that
// f picks. Roles come from the thread's heads, kept in memory; names are
// read from the store only when the filter asks for authors.
func FilterItems(s *ops.Service, v *model.View, f ItemFilter) ([]int, error) {
	snap, err := s.Snapshot(v.SessionID)
	if err != nil {
		return nil, err
	}
	heads := snap.Heads
	var names []string // by seq-1, only with authors
	var opAuthor map[string]string
	if len(f.Authors) > 0 {
		opAuthor = make(map[string]string, len(snap.Ops))
		for _, op := range snap.Ops {
			opAuthor[op.ID] = op.Author
		}
		names = make([]string, len(v.Where))
		err = s.Store().View(func(tx *store.Tx) error {
			return tx.Messages(v.SessionID, 1, uint64(len(v.Where)), func(m model.Message) error {
				if m.Seq >= 1 && m.Seq <= uint64(len(names)) {
					names[m.Seq-1] = m.Name
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	var out []int
	for i, it := range v.Items {
		var role model.Role
		var author string
		if it.Seq > 0 {
			if it.Seq <= uint64(len(heads)) {
				role = model.RoleFromCode(heads[it.Seq-1].Role)
			}
			if names != nil {
				author = names[it.Seq-1]
			}
		} else {
			syn := &v.Synth[it.Synth]
			role, author = syn.Role, opAuthor[syn.OpID]
		}
		if f.picks(role, v.Tags(it), author) {
			out = append(out, i)
		}
	}
	return out, nil
}

// picks reports whether an item of this role, tags and author passes.
func (f ItemFilter) picks(role model.Role, tags []string, author string) bool {
	anyOf := func(n int, ok func(int) bool) bool {
		if n == 0 {
			return true
		}
		for k := range n {
			if ok(k) {
				return true
			}
		}
		return false
	}
	return anyOf(len(f.Roles), func(k int) bool { return f.Roles[k] == role }) &&
		anyOf(len(f.Tags), func(k int) bool {
			for _, t := range tags {
				if strings.EqualFold(t, f.Tags[k]) {
					return true
				}
			}
			return false
		}) &&
		anyOf(len(f.Authors), func(k int) bool {
			return author != "" && strings.Contains(strings.ToLower(author), strings.ToLower(f.Authors[k]))
		})
}
