package reads

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"weft/ops"
	"weft/ops/search"

	"weft/internal/fuzzy"
	"weft/model"
	"weft/ops/assemble"
	"weft/store"
)

// SearchArgs are search_session_history's arguments.
type SearchArgs struct {
	SessionID string   `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Query     string   `json:"query" jsonschema:"text to look for"`
	Mode      string   `json:"mode,omitempty" jsonschema:"substring (default: case-insensitive, in thread order) or fuzzy (characters in order, best first)"`
	View      string   `json:"view,omitempty" jsonschema:"effective (default) or raw (the stored messages; indices are stored positions)"`
	Limit     *int     `json:"limit,omitempty" jsonschema:"at most this many matches a page (default 50, at most 1000); total_matches counts them all, and next_cursor gives those after"`
	Whole     bool     `json:"whole,omitempty" jsonschema:"give each matching message whole (long bodies still cut to fit max_tokens) instead of a snippet around the hit"`
	MaxTokens *int     `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit); matches that do not fit are left out, counted, with a next_cursor"`
	Cursor    string   `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the matches it left out"`
	Tags      []string `json:"tags,omitempty" jsonschema:"only matches in items that carry any of these tags (an item passes if it carries one of them; case ignored); total_matches counts those. Not with view=raw. A tag no item carries is refused"`
}

// SearchMatch is one search hit: where it is and a few lines around it,
// or with whole the message.
type SearchMatch struct {
	Index     int          `json:"index"`
	ID        model.ItemID `json:"id"`
	Role      model.Role   `json:"role"`
	CreatedAt string       `json:"created_at"`
	// Line is the line of the content the hit is on, from 1.
	Line int `json:"line"`
	// Snippet is the hit's line and the lines around it, long lines cut
	// around the hit (…), with the hit between ** and **.
	Snippet string `json:"snippet,omitempty"`
	// Message is the matching message, with whole.
	Message *MessageOut `json:"message,omitempty"`
}

// SearchResult is search_session_history's result (seed 001).
type SearchResult struct {
	Query        string        `json:"query"`
	TotalMatches int           `json:"total_matches"`
	Matches      []SearchMatch `json:"matches"`
	Fit
}

// searchSessionHistory searches the thread's content: snippets around
// the hits (whole messages with whole), within a budget.
func searchSessionHistory(s *ops.Service, _ context.Context, a SearchArgs) (SearchResult, error) {
	const tool = "search_session_history"
	if strings.TrimSpace(a.Query) == "" {
		return SearchResult{}, ops.Invalidf("query is empty: give the text to look for")
	}
	mode, err := ops.ChoiceArg("mode", a.Mode, ops.SearchModes())
	if err != nil {
		return SearchResult{}, err
	}
	fuzzyMode := mode == ops.SearchFuzzy
	raw, err := viewArg(a.View)
	if err != nil {
		return SearchResult{}, err
	}
	limit := 50
	if a.Limit != nil {
		if *a.Limit < 0 || *a.Limit > 1000 {
			return SearchResult{}, ops.Invalidf("limit %d is outside 0..1000", *a.Limit)
		}
		limit = *a.Limit
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return SearchResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return SearchResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return SearchResult{}, err
	}
	v := snap.View
	pass, err := tagPass(v, raw, a.Tags)
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Query: a.Query, Matches: []SearchMatch{}}
	// An ASCII substring is looked for in the session's text kept in
	// memory, lower-cased once; other searches read the store.
	var found []int
	inMemory := !fuzzyMode && fuzzy.CanSubstring(a.Query)
	if inMemory {
		if found, err = search.Substring(s, snap, a.Query, raw); err != nil {
			return SearchResult{}, err
		}
	}
	err = s.Store().View(func(tx store.Tx) error {
		// Every match is found, and limit cuts a page of them: a cursor
		// reaches those after it, however many there are.
		var all []int
		if inMemory {
			all, res.TotalMatches = found, len(found)
		} else if raw {
			all, res.TotalMatches, err = search.Raw(tx, v.SessionID, a.Query, fuzzyMode, 0)
		} else {
			all, res.TotalMatches, err = search.View(tx, v, a.Query, fuzzyMode, 0)
		}
		if err != nil {
			return err
		}
		if pass != nil {
			all = slices.DeleteFunc(slices.Clone(all), func(i int) bool { return !pass(i) })
			res.TotalMatches = len(all)
		}
		id := func(k int) string {
			if raw {
				return string(model.MessageID(uint64(all[k] + 1)))
			}
			return string(v.ID(v.Items[all[k]]))
		}
		// Fuzzy hits come best first, and an appended message can rank
		// anywhere: any write makes a fuzzy search's cursor stale.
		place := place(snap, tool, a, fuzzyMode)
		start, err := cur.resume(place, len(all), id)
		if err != nil {
			return err
		}
		end := len(all)
		if limit > 0 {
			end = min(end, start+limit)
		}
		hits := all[start:end]
		var bodies, metas []int
		if a.Whole {
			bodies, metas = make([]int, len(hits)), make([]int, len(hits))
			for k, i := range hits {
				n := 0
				if raw {
					if i < len(snap.Heads) {
						n = int(snap.Heads[i].Tokens)
					}
				} else {
					n = assemble.Tokens(v, snap.Heads, i)
				}
				bodies[k], metas[k] = n+n/6, planMeta+20
			}
		}
		pk := newPacker(budget, countJSON(res), bodies, metas)
		find := search.NewHitFinder(a.Query, fuzzyMode)
		for k, i := range hits {
			if pk.full {
				pk.skip(len(hits) - k)
				break
			}
			o, err := rangeItem(tx, v, i, raw)
			if err != nil {
				return err
			}
			at, size := find.In(o.Content)
			m := SearchMatch{Index: i, ID: o.ID, Role: o.Role, CreatedAt: o.CreatedAt, Line: 1 + strings.Count(o.Content[:at], "\n")}
			if !a.Whole {
				m.Snippet = search.Snippet(o.Content, at, size)
				if pk.take(countJSON(m)) {
					res.Matches = append(res.Matches, m)
				}
				continue
			}
			n := 0
			if raw {
				n = o.Tokens
			} else {
				n = assemble.Tokens(v, snap.Heads, i)
			}
			// The match's own fields go beside the message's.
			meta := countJSON(m) + 4
			pk.room -= meta
			if !packOne(pk, &o, n, bodyAt{index: i, raw: raw}, 0) {
				pk.room += meta
				continue
			}
			m.Message = &o
			res.Matches = append(res.Matches, m)
		}
		// The matches after the page are left out as those that did not
		// fit are: counted, and the cursor reads on.
		why := "did not fit"
		if pk.omitted == 0 && end < len(all) {
			why = fmt.Sprintf("are past limit=%d", limit)
		} else if end < len(all) {
			why = fmt.Sprintf("did not fit or are past limit=%d", limit)
		}
		pk.skip(len(all) - end)
		var next *readCursor
		if given := start + pk.taken; pk.omitted > 0 && given > 0 {
			next = place.cursor(id(given - 1))
		}
		res.Fit = pk.fit(next, fmt.Sprintf("%d matches %s: call %s again with the same arguments and cursor=next_cursor", pk.omitted, why, tool))
		return nil
	})
	return res, err
}

// tagPass is the reads' tags argument: nil without tags, else whether
// the item at an index of v carries any of them. Tags belong to the
// items of the effective thread, so they do not go with view=raw; a tag
// no item carries is refused (ops.CheckTags).
func tagPass(v *model.View, raw bool, tags []string) (func(i int) bool, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	if raw {
		return nil, errTagsRaw()
	}
	if err := ops.CheckTags(v, "tags", tags); err != nil {
		return nil, err
	}
	m := v.MatchTags(tags)
	return func(i int) bool { return i >= 0 && i < len(v.Items) && m.Carries(v.Items[i]) }, nil
}

// errTagsRaw refuses tags with view=raw.
func errTagsRaw() error {
	return ops.Invalidf("tags pick items of the effective thread: leave view=raw out (the stored messages carry no tags of their own)")
}
