package reads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"weft/model"
	"weft/ops"
	"weft/store"
)

// ListSessionsArgs are list_sessions' arguments.
type ListSessionsArgs struct {
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many sessions, most recently updated first; 0 means all"`
	Interface string `json:"interface,omitempty" jsonschema:"only the sessions of this interface (cli, matrix, ...), exactly as create_session was given it"`
	Since     string `json:"since,omitempty" jsonschema:"only the sessions last updated at or after this time: ISO 8601 (2026-01-26T07:30:00, zone optional: local if omitted), a bare date (its midnight) or time, or relative (-2h, 3 days ago, yesterday 15:00)"`
	Until     string `json:"until,omitempty" jsonschema:"only the sessions last updated at or before this time, in the forms since takes"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit); sessions that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the sessions it left out"`
}

// ListSessionsResult is list_sessions' result.
type ListSessionsResult struct {
	Sessions []ops.SessionOut `json:"sessions"`
	// Total counts the sessions listed, those left out for the budget
	// or the limit included: with a filter, those it picks.
	Total int `json:"total"`
	Fit
}

// listSessions lists sessions, most recently updated first. In a damaged
// file, a session whose thread cannot be read is still listed, from its
// record, with Unreadable saying why; one whose record cannot be read is
// listed last, by its ID alone, unless a filter is given, which such a
// record cannot be known to pass.
func listSessions(s *ops.Service, _ context.Context, a ListSessionsArgs) (ListSessionsResult, error) {
	const tool = "list_sessions"
	if a.Limit < 0 {
		return ListSessionsResult{}, ops.Invalidf("limit %d is negative; use 0 for all sessions or a positive number", a.Limit)
	}
	filter, err := filterArgs(s, a.Interface, a.Since, a.Until)
	if err != nil {
		return ListSessionsResult{}, err
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
	err = s.Store().View(func(tx store.Tx) error {
		sessions, bad = tx.AllSessions()
		return nil
	})
	if err != nil {
		return ListSessionsResult{}, err
	}
	if filter.active() {
		sessions, bad = filter.pick(sessions), nil
	}
	res := ListSessionsResult{Sessions: []ops.SessionOut{}, Total: len(sessions) + len(bad)}
	res.Sessions, res.Fit, err = packSessions(s, tool, a, cur, budget, countJSON(res), sessions, bad, a.Limit)
	return res, err
}

// packSessions gives sessions, most recently updated first, then the
// records that cannot be read (bad) by their IDs, from cur on, within
// budget, for a result whose frame (its list empty) counts frame
// tokens; limit (0: none) keeps the first of them. The cursor it gives
// belongs to tool and its arguments args.
func packSessions(s *ops.Service, tool string, args any, cur *readCursor, budget, frame int, sessions []model.Session, bad []error, limit int) ([]ops.SessionOut, Fit, error) {
	var ids, why []string
	for _, x := range sessions {
		ids = append(ids, x.ID)
	}
	for _, err := range bad {
		var ce store.Corrupt
		if errors.As(err, &ce) {
			ids, why = append(ids, ce.CorruptSession()), append(why, err.Error())
		}
	}
	// A write to any session moves it to the top of the list: the cursor
	// is good while every session is at the version it was.
	versions := make([]uint64, len(ids))
	for i := range sessions {
		versions[i] = sessions[i].Version
	}
	place := readPlace{tool: tool, args: hashArgs(args), state: listState(ids, versions), strict: true}
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	start, err := cur.resume(place, len(ids), func(k int) string { return ids[k] })
	if err != nil {
		return nil, Fit{}, err
	}
	out := []ops.SessionOut{}
	pk := newPacker(budget, frame, nil, nil)
	for k := start; k < len(ids); k++ {
		var o ops.SessionOut
		if k < len(sessions) {
			if o, err = listed(s, sessions[k]); err != nil {
				return nil, Fit{}, err
			}
		} else {
			o = ops.SessionOut{SessionID: ids[k], ActiveTags: []string{}, Unreadable: why[k-len(sessions)]}
		}
		if !pk.take(countJSON(o)) {
			pk.skip(len(ids) - k - 1)
			break
		}
		out = append(out, o)
	}
	var next *readCursor
	if given := start + pk.taken; pk.omitted > 0 && given > 0 {
		next = place.cursor(ids[given-1])
	}
	return out, pk.fit(next, fmt.Sprintf("%d sessions did not fit: call %s again with cursor=next_cursor", pk.omitted, tool)), nil
}

// sessionFilter picks sessions by their interface and by when they were
// last updated (list_sessions, search_sessions).
type sessionFilter struct {
	iface        string
	since, until time.Time // zero: open on that side
}

// filterArgs reads the interface, since and until arguments; a time that
// cannot be read, or a range that holds no time, is an invalid argument.
func filterArgs(s *ops.Service, iface, since, until string) (sessionFilter, error) {
	var f sessionFilter
	var err error
	if _, f.iface, err = ops.RoomArgs("", iface); err != nil {
		return f, err
	}
	if strings.TrimSpace(since) != "" {
		if f.since, err = parseTime(s, "since", since); err != nil {
			return f, err
		}
	}
	if strings.TrimSpace(until) != "" {
		if f.until, err = parseTime(s, "until", until); err != nil {
			return f, err
		}
	}
	if !f.since.IsZero() && !f.until.IsZero() && f.since.After(f.until) {
		return f, ops.Invalidf("since %s is after until %s: no session can be updated between them; give since before until", ops.FormatTime(f.since), ops.FormatTime(f.until))
	}
	return f, nil
}

// active reports whether the filter leaves any session out.
func (f sessionFilter) active() bool {
	return f.iface != "" || !f.since.IsZero() || !f.until.IsZero()
}

// pick is the sessions the filter keeps, in their order.
func (f sessionFilter) pick(sessions []model.Session) []model.Session {
	var out []model.Session
	for _, x := range sessions {
		switch {
		case f.iface != "" && x.Interface != f.iface:
		case !f.since.IsZero() && x.UpdatedAt.Before(f.since):
		case !f.until.IsZero() && x.UpdatedAt.After(f.until):
		default:
			out = append(out, x)
		}
	}
	return out
}

// SessionByRoomArgs are get_session_by_room's arguments (seed 004's
// getConversationByRoom).
type SessionByRoomArgs struct {
	Room      string `json:"room" jsonschema:"the room or channel, exactly as create_session was given it"`
	Interface string `json:"interface,omitempty" jsonschema:"the interface (cli, matrix, ...): the room's one session on it, as session_id; left out: every session of the room, each with its interface"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit); sessions that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the sessions it left out"`
}

// SessionByRoomResult is get_session_by_room's result.
type SessionByRoomResult struct {
	Room      string `json:"room"`
	Interface string `json:"interface,omitempty"`
	// SessionID is the pair's session, when an interface was asked for.
	SessionID string `json:"session_id,omitempty"`
	// Sessions are the room's (on the interface, when one was asked
	// for), most recently updated first; Total counts them.
	Sessions []ops.SessionOut `json:"sessions"`
	Total    int              `json:"total"`
	Fit
}

// getSessionByRoom finds the sessions of a room, or its one session on
// an interface. A room with none (on the interface) is not found.
func getSessionByRoom(s *ops.Service, _ context.Context, a SessionByRoomArgs) (SessionByRoomResult, error) {
	const tool = "get_session_by_room"
	room, iface, err := ops.RoomArgs(a.Room, a.Interface)
	if err != nil {
		return SessionByRoomResult{}, err
	}
	if room == "" {
		return SessionByRoomResult{}, ops.Invalidf("room is empty: name the room (list_sessions shows each session's room)")
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return SessionByRoomResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return SessionByRoomResult{}, err
	}
	var sessions []model.Session
	if err := s.Store().View(func(tx store.Tx) (err error) {
		sessions, err = tx.RoomSessions(room)
		return err
	}); err != nil {
		return SessionByRoomResult{}, err
	}
	if len(sessions) == 0 {
		return SessionByRoomResult{}, ops.NotFoundf("room %q has no session: create_session room=%q interface=NAME makes its conversation on an interface", room, room)
	}
	if iface != "" {
		all := sessions
		sessions = sessionFilter{iface: iface}.pick(all)
		if len(sessions) == 0 {
			return SessionByRoomResult{}, ops.NotFoundf("room %q has no session on interface %q (it has %s): create_session room=%q interface=%q makes one", room, iface, interfacesOf(all), room, iface)
		}
	}
	res := SessionByRoomResult{Room: room, Interface: iface, Sessions: []ops.SessionOut{}, Total: len(sessions)}
	if iface != "" {
		res.SessionID = sessions[0].ID // the most recently updated, were there several
	}
	res.Sessions, res.Fit, err = packSessions(s, tool, a, cur, budget, countJSON(res), sessions, nil, 0)
	return res, err
}

// interfacesOf lists the sessions' interfaces, once each, in words.
func interfacesOf(sessions []model.Session) string {
	var names []string
	for _, x := range sessions {
		name := strconv.Quote(x.Interface)
		if x.Interface == "" {
			name = "no interface"
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
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
