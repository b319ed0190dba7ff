package reads

import (
	"context"
	"errors"
	"fmt"

	"weft/model"
	"weft/ops"
	"weft/store"
)

// ListSessionsArgs are list_sessions' arguments.
type ListSessionsArgs struct {
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many sessions, most recently updated first; 0 means all"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit); sessions that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the sessions it left out"`
}

// ListSessionsResult is list_sessions' result.
type ListSessionsResult struct {
	Sessions []ops.SessionOut `json:"sessions"`
	Total    int              `json:"total"`
	Fit
}

// listSessions lists sessions, most recently updated first. In a damaged
// file, a session whose thread cannot be read is still listed, from its
// record, with Unreadable saying why; one whose record cannot be read is
// listed last, by its ID alone.
func listSessions(s *ops.Service, _ context.Context, a ListSessionsArgs) (ListSessionsResult, error) {
	const tool = "list_sessions"
	if a.Limit < 0 {
		return ListSessionsResult{}, ops.Invalidf("limit %d is negative; use 0 for all sessions or a positive number", a.Limit)
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return ListSessionsResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return ListSessionsResult{}, err
	}
	var sessions []model.Session
	var bad []error
	err = s.Store().View(func(tx *store.Tx) error {
		sessions, bad = tx.AllSessions()
		return nil
	})
	if err != nil {
		return ListSessionsResult{}, err
	}
	res := ListSessionsResult{Sessions: []ops.SessionOut{}, Total: len(sessions) + len(bad)}
	// The list, most recently updated first, then the sessions whose
	// record cannot be read; limit keeps the first of them.
	var ids, why []string
	for _, x := range sessions {
		ids = append(ids, x.ID)
	}
	for _, err := range bad {
		var ce *store.CorruptError
		if errors.As(err, &ce) {
			ids, why = append(ids, ce.Session), append(why, err.Error())
		}
	}
	// A write to any session moves it to the top of the list: the cursor
	// is good while every session is at the version it was.
	versions := make([]uint64, len(ids))
	for i := range sessions {
		versions[i] = sessions[i].Version
	}
	place := readPlace{tool: tool, args: hashArgs(a), state: listState(ids, versions), strict: true}
	if a.Limit > 0 && len(ids) > a.Limit {
		ids = ids[:a.Limit]
	}
	start, err := cur.resume(place, len(ids), func(k int) string { return ids[k] })
	if err != nil {
		return ListSessionsResult{}, err
	}
	pk := newPacker(budget, countJSON(res), nil, nil)
	for k := start; k < len(ids); k++ {
		var out ops.SessionOut
		if k < len(sessions) {
			if out, err = listed(s, sessions[k]); err != nil {
				return ListSessionsResult{}, err
			}
		} else {
			out = ops.SessionOut{SessionID: ids[k], ActiveTags: []string{}, Unreadable: why[k-len(sessions)]}
		}
		if !pk.take(countJSON(out)) {
			pk.skip(len(ids) - k - 1)
			break
		}
		res.Sessions = append(res.Sessions, out)
	}
	var next *readCursor
	if given := start + pk.taken; pk.omitted > 0 && given > 0 {
		next = place.cursor(ids[given-1])
	}
	res.Fit = pk.fit(next, fmt.Sprintf("%d sessions did not fit: call %s again with cursor=next_cursor", pk.omitted, tool))
	return res, nil
}

// listed is a session as list_sessions gives it: with the effective
// thread's tokens, or why its thread cannot be read.
func listed(s *ops.Service, x model.Session) (ops.SessionOut, error) {
	out := ops.SessionOutOf(x)
	n := x.Tokens
	if x.OpCount > 0 {
		_, v, err := s.View(x.ID)
		switch {
		case unreadable(err):
			out.Unreadable = err.Error()
			return out, nil
		case err != nil:
			return ops.SessionOut{}, err
		}
		n = v.Tokens
	}
	out.EffectiveTokens = &n
	out.Proxy = s.ProxyStatsOf(x.ID)
	return out, nil
}

// unreadable reports whether err says the file is damaged where a session
// is kept, rather than that the request was wrong.
func unreadable(err error) bool {
	return errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrDamaged)
}
