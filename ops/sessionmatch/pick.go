package sessionmatch

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"weft/model"
	"weft/ops"
	"weft/store"
)

// Picking a session: what a client shows when its user is to choose one
// (MCP's completion of a session_id, the sessions a client lists as
// resources for @-mentions and attach menus). Both read session records
// only, never a thread.

// MaxPage bounds a page of SessionPage.
const MaxPage = 1000

// PageArgs ask for a page of sessions.
type PageArgs struct {
	// After is the Next of the page before; empty starts at the newest.
	After string `json:"after,omitempty"`
	// Limit is how many sessions (1..MaxPage).
	Limit int `json:"limit"`
}

// Page is a page of sessions, newest created first (by ID, which
// never changes: pages read one after the other list every session that
// was there throughout exactly once, whatever is written meanwhile).
type Page struct {
	Sessions []ops.SessionOut `json:"sessions"`
	// Next is where the next page starts (its After); empty after the
	// last page.
	Next string `json:"next,omitempty"`
}

// PageOf returns a page of sessions from their records: no thread is
// read, so a page costs the same on a file of ten thousand sessions as on
// one of ten. A session whose record cannot be read is listed by its ID,
// with Unreadable saying why.
func PageOf(s *ops.Service, _ context.Context, a PageArgs) (Page, error) {
	if a.Limit < 1 || a.Limit > MaxPage {
		return Page{}, ops.Invalidf("limit %d is outside 1..%d", a.Limit, MaxPage)
	}
	var page []store.SessionEntry
	var more bool
	err := s.Store().View(func(tx store.Tx) error {
		page, more = tx.SessionsBefore(a.After, a.Limit)
		return nil
	})
	if err != nil {
		return Page{}, err
	}
	res := Page{Sessions: make([]ops.SessionOut, 0, len(page))}
	for _, e := range page {
		if e.Err != nil {
			res.Sessions = append(res.Sessions, ops.SessionOut{SessionID: e.ID, ActiveTags: []string{}, Unreadable: e.Err.Error()})
			continue
		}
		res.Sessions = append(res.Sessions, ops.SessionOutOf(e.Session))
	}
	if more && len(page) > 0 {
		res.Next = page[len(page)-1].ID
	}
	return res, nil
}

// Args ask for the sessions that what a user typed may name.
type Args struct {
	// Query is what was typed so far: part of a title or of an ID.
	Query string `json:"query"`
	// Limit is how many matches to give, best first (1..MaxPage).
	Limit int `json:"limit"`
}

// Candidate is a session a query may name.
type Candidate struct {
	ops.SessionOut
	// Ref is the session_id to give for it: its title when that names it
	// and no other session, else its ID.
	Ref string `json:"ref"`
	// ByID is set when the query matched the ID rather than the title:
	// the user is typing an ID.
	ByID bool `json:"by_id,omitempty"`
}

// Result is the best matches, and how many there are in all.
type Result struct {
	Candidates []Candidate `json:"candidates"`
	Total      int         `json:"total"`
}

// Match returns the sessions a query may name, best first: an
// exact ID or title, then IDs and titles that begin with it, titles with a
// word that begins with it, titles that hold it, titles that hold its
// characters in order; among equals, the most recently updated first. An
// empty query matches every session. Case is ignored.
func Match(s *ops.Service, _ context.Context, a Args) (Result, error) {
	if a.Limit < 1 || a.Limit > MaxPage {
		return Result{}, ops.Invalidf("limit %d is outside 1..%d", a.Limit, MaxPage)
	}
	sessions, bad := allRecords(s)
	if len(sessions) == 0 && len(bad) > 0 {
		return Result{}, bad[0]
	}
	q := strings.ToLower(strings.TrimSpace(a.Query))
	type ranked struct {
		x    *model.Session
		rank int
	}
	var found []ranked
	for i := range sessions {
		if r := Rank(&sessions[i], q); r != NoMatch {
			found = append(found, ranked{&sessions[i], r})
		}
	}
	// sessions are most recently updated first: a stable sort by rank
	// keeps that order among equals.
	slices.SortStableFunc(found, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
	res := Result{Candidates: []Candidate{}, Total: len(found)}
	if len(found) == 0 {
		return res, nil
	}
	names := NewNames(sessions)
	for _, f := range found[:min(len(found), a.Limit)] {
		m := Candidate{SessionOut: ops.SessionOutOf(*f.x), Ref: f.x.ID, ByID: f.rank == IDPrefix || (f.rank == Exact && strings.EqualFold(f.x.ID, q))}
		if names.Only(f.x.Title, f.x.ID) {
			m.Ref = f.x.Title
		}
		res.Candidates = append(res.Candidates, m)
	}
	return res, nil
}

// allRecords reads every session's record, most recently updated first.
func allRecords(s *ops.Service) ([]model.Session, []error) {
	var sessions []model.Session
	var bad []error
	err := s.Store().View(func(tx store.Tx) error {
		sessions, bad = tx.AllSessions()
		return nil
	})
	if err != nil {
		return nil, []error{err}
	}
	return sessions, bad
}
