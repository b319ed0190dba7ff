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

// Exact search by line: the first line of each item holding a query, a
// read of a whole thread made in a command (never in the TUI's Update),
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
	err = s.Store().View(func(tx store.Tx) error {
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
