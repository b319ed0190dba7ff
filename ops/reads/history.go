package reads

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"weft/ops"
	"weft/ops/search"

	"weft/formats"
	"weft/formats/export"
	"weft/internal/english"
	"weft/internal/fuzzy"
	"weft/model"
	"weft/ops/assemble"
	"weft/store"
)

// SearchSessionsArgs are search_sessions' arguments (seed 004).
type SearchSessionsArgs struct {
	Query     string `json:"query" jsonschema:"text to look for, case-insensitive, in every session's title and effective thread"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"at most this many sessions (default 20, at most 200); total_sessions counts them all"`
	Interface string `json:"interface,omitempty" jsonschema:"search only the sessions of this interface (cli, matrix, ...), exactly as create_session was given it"`
	Since     string `json:"since,omitempty" jsonschema:"search only the sessions last updated at or after this time: ISO 8601 (2026-01-26T07:30:00, zone optional: local if omitted), a bare date (its midnight) or time, or relative (-2h, 3 days ago, yesterday 15:00)"`
	Until     string `json:"until,omitempty" jsonschema:"search only the sessions last updated at or before this time, in the forms since takes"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit); sessions that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the sessions it left out"`
}

// SessionSnippet is a message of a session that matched, with the text
// around the match.
type SessionSnippet struct {
	Index     int          `json:"index"`
	ID        model.ItemID `json:"id"`
	Role      model.Role   `json:"role"`
	CreatedAt string       `json:"created_at"`
	Snippet   string       `json:"snippet"`
}

// SessionMatch is a session that matched, and what in it did.
type SessionMatch struct {
	Session ops.SessionOut `json:"session"`
	// Matched says what matched: "title", "content" or both.
	Matched        []string         `json:"matched"`
	ContentMatches int              `json:"content_matches"`
	Snippets       []SessionSnippet `json:"snippets"`
}

// SearchSessionsResult is search_sessions' result.
type SearchSessionsResult struct {
	Query         string         `json:"query"`
	Searched      int            `json:"searched"`
	TotalSessions int            `json:"total_sessions"`
	Sessions      []SessionMatch `json:"sessions"`
	Fit
}

// searchSnippets is how many matching messages a session shows.
const searchSnippets = 3

// searchSessions finds the sessions whose title or effective thread
// contains the query: title matches first, then by how many messages
// match, then the most recently updated.
func searchSessions(s *ops.Service, _ context.Context, a SearchSessionsArgs) (SearchSessionsResult, error) {
	const tool = "search_sessions"
	query := strings.TrimSpace(a.Query)
	if query == "" {
		return SearchSessionsResult{}, ops.Invalidf("query is empty: give the text to look for in titles and messages")
	}
	limit := 20
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > 200 {
			return SearchSessionsResult{}, ops.Invalidf("limit %d is outside 1..200 (default 20)", *a.Limit)
		}
		limit = *a.Limit
	}
	filter, err := filterArgs(s, a.Interface, a.Since, a.Until)
	if err != nil {
		return SearchSessionsResult{}, err
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return SearchSessionsResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return SearchSessionsResult{}, err
	}
	sessions, err := s.Store().Sessions()
	if err != nil {
		return SearchSessionsResult{}, err
	}
	if filter.active() {
		sessions = filter.pick(sessions)
	}
	res := SearchSessionsResult{Query: query, Searched: len(sessions), Sessions: []SessionMatch{}}
	title := fuzzy.NewMatcher(query)
	var found []SessionMatch
	for _, x := range sessions {
		snap, err := s.Snapshot(x.ID)
		if err != nil {
			return SearchSessionsResult{}, err
		}
		m := SessionMatch{Session: ops.SessionOutOf(snap.Info), Matched: []string{}, Snippets: []SessionSnippet{}}
		if title.Match([]byte(snap.Info.Title)) {
			m.Matched = append(m.Matched, "title")
		}
		err = s.Store().View(func(tx store.Tx) error {
			hits, total, err := search.View(tx, snap.View, query, false, searchSnippets)
			if err != nil || total == 0 {
				return err
			}
			m.Matched = append(m.Matched, "content")
			m.ContentMatches = total
			for _, i := range hits {
				o, err := itemOut(tx, snap.View, i)
				if err != nil {
					return err
				}
				m.Snippets = append(m.Snippets, SessionSnippet{
					Index: o.Index, ID: o.ID, Role: o.Role, CreatedAt: o.CreatedAt,
					Snippet: sessSnippet(o.Content, query),
				})
			}
			return nil
		})
		if err != nil {
			return SearchSessionsResult{}, err
		}
		if len(m.Matched) > 0 {
			found = append(found, m)
		}
	}
	// Sessions come most recently updated first; a stable sort keeps
	// that order among equals.
	slices.SortStableFunc(found, func(a, b SessionMatch) int {
		at, bt := a.Matched[0] == "title", b.Matched[0] == "title"
		switch {
		case at != bt && at:
			return -1
		case at != bt:
			return 1
		}
		return b.ContentMatches - a.ContentMatches
	})
	res.TotalSessions = len(found)
	if len(found) > limit {
		found = found[:limit]
	}
	id := func(k int) string { return found[k].Session.SessionID }
	// A write to any session can move it in the list: the cursor is
	// good while every session is at the version it was.
	ids, versions := make([]string, len(sessions)), make([]uint64, len(sessions))
	for i, x := range sessions {
		ids[i], versions[i] = x.ID, x.Version
	}
	place := readPlace{tool: tool, args: hashArgs(a), state: listState(ids, versions), strict: true}
	start, err := cur.resume(place, len(found), id)
	if err != nil {
		return SearchSessionsResult{}, err
	}
	pk := newPacker(budget, countJSON(res), nil, nil)
	for k, m := range found[start:] {
		if !pk.take(countJSON(m)) {
			pk.skip(len(found) - start - k - 1)
			break
		}
		res.Sessions = append(res.Sessions, m)
	}
	var next *readCursor
	if given := start + pk.taken; pk.omitted > 0 && given > 0 {
		next = place.cursor(id(given - 1))
	}
	res.Fit = pk.fit(next, fmt.Sprintf("%d sessions did not fit: call %s again with the same arguments and cursor=next_cursor", pk.omitted, tool))
	return res, nil
}

// sessSnippet is the text around the first match of query in content,
// on one line, about 160 characters.
func sessSnippet(content, query string) string {
	const around = 70
	lower := strings.ToLower(content)
	i := strings.Index(lower, strings.ToLower(query))
	if i < 0 || len(lower) != len(content) {
		i = 0 // case folding changed lengths: show the start
	}
	start, end := i, i+len(query)
	for k := 0; k < around && start > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(content[:start])
		start -= size
	}
	for k := 0; k < around && end < len(content); k++ {
		_, size := utf8.DecodeRuneInString(content[end:])
		end += size
	}
	end = min(end, len(content))
	out := strings.Join(strings.Fields(content[start:end]), " ")
	if start > 0 {
		out = "…" + out
	}
	if end < len(content) {
		out += "…"
	}
	return out
}

// SessionHistoryArgs are get_session_history's arguments (seed 004).
type SessionHistoryArgs struct {
	SessionID string   `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Format    string   `json:"format,omitempty" jsonschema:"text (default: one line of time and role per message, then its content), markdown, or json (the messages with IDs, times, tokens and tags)"`
	View      string   `json:"view,omitempty" jsonschema:"effective (default: with the operations applied) or raw (the stored messages)"`
	Limit     *int     `json:"limit,omitempty" jsonschema:"only the latest N items (default: all, at most 5000)"`
	MaxTokens *int     `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): the latest items first, long bodies cut with a marker saying how to read on; earlier items that do not fit are left out, counted, with a next_cursor"`
	Cursor    string   `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the earlier items it left out"`
	Tags      []string `json:"tags,omitempty" jsonschema:"only the items that carry any of these tags (an item passes if it carries one of them; case ignored); text and json give each its index in the effective thread, for edits; limit counts those items. Not with view=raw. A tag no item carries is refused"`
}

// SessionHistoryResult is get_session_history's result.
type SessionHistoryResult struct {
	Session ops.SessionOut `json:"session"`
	Format  string         `json:"format"`
	View    string         `json:"view"`
	// Total items in the view; Count of them given, from index
	// FirstIndex on; LeftOut the earlier ones not given. With tags,
	// Tagged counts the items that carry them, and Count and LeftOut
	// count only those.
	Total      int  `json:"total"`
	Tagged     *int `json:"tagged,omitempty"`
	Count      int  `json:"count"`
	FirstIndex int  `json:"first_index"`
	LeftOut    int  `json:"left_out"`
	// Text for text and markdown; Messages for json.
	Text     string       `json:"text,omitempty"`
	Messages []MessageOut `json:"messages,omitempty"`
	Note     string       `json:"note,omitempty"`
	Fit
}

// maxHistory bounds the items one get_session_history gives.
const maxHistory = 5000

// getSessionHistory returns a session's thread, formatted: the latest
// items when it is long, and within a budget the latest that fit.
func getSessionHistory(s *ops.Service, _ context.Context, a SessionHistoryArgs) (SessionHistoryResult, error) {
	const tool = "get_session_history"
	format, err := formatArg(a.Format, ops.HistoryFormats()...)
	if err != nil {
		if a.Format == "openai" || a.Format == "anthropic" {
			return SessionHistoryResult{}, ops.Invalidf("format %q is not text, markdown or json: for the thread as a provider takes it, use assemble_context format=%s", a.Format, a.Format)
		}
		return SessionHistoryResult{}, err
	}
	raw, err := viewArg(a.View)
	if err != nil {
		return SessionHistoryResult{}, err
	}
	limit := 0
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > maxHistory {
			return SessionHistoryResult{}, ops.Invalidf("limit %d is outside 1..%d; for more, page through the thread with get_message_range", *a.Limit, maxHistory)
		}
		limit = *a.Limit
	}
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return SessionHistoryResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return SessionHistoryResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return SessionHistoryResult{}, err
	}
	v := snap.View
	res := SessionHistoryResult{Session: ops.SessionOutOf(snap.Info), Format: format, View: "effective"}
	total := v.Len()
	if raw {
		res.View, total = "raw", snap.Info.MessageCount
	}
	// The pool is the items to give from: every one, or with tags those
	// that carry them.
	pool := span(0, total)
	if pass, err := tagPass(v, raw, a.Tags); err != nil {
		return SessionHistoryResult{}, err
	} else if pass != nil {
		pool = slices.DeleteFunc(pool, func(i int) bool { return !pass(i) })
		n := len(pool)
		res.Tagged = &n
	}
	count := len(pool)
	switch {
	case limit > 0:
		count = min(count, limit)
	case count > maxHistory && res.Tagged != nil:
		res.Note = fmt.Sprintf("%d items carry those tags; these are the latest %d: page through the rest with get_message_range and the same tags", count, maxHistory)
		count = maxHistory
	case count > maxHistory:
		count = maxHistory
		res.Note = fmt.Sprintf("the thread has %d items; these are the latest %d: page through the rest with get_message_range", total, maxHistory)
	}
	// The order is newest first: what fits is the latest items, and a
	// cursor's place is how many of them were given.
	order := reversed(pool[len(pool)-count:])
	id := func(k int) string {
		if raw {
			return string(model.MessageID(uint64(order[k] + 1)))
		}
		return string(v.ID(v.Items[order[k]]))
	}
	place := place(snap, tool, a, false)
	start, err := cur.resume(place, len(order), id)
	if err != nil {
		return SessionHistoryResult{}, err
	}
	rest := order[start:]
	bodies, metas := make([]int, len(rest)), make([]int, len(rest))
	for k, i := range rest {
		n := 0
		switch {
		case raw && i < len(snap.Heads):
			n = int(snap.Heads[i].Tokens)
		case !raw:
			n = assemble.Tokens(v, snap.Heads, i)
		}
		bodies[k], metas[k] = n+n/6, planMeta
		if format != "json" {
			metas[k] = 20
		}
	}
	frame := res
	if format == "json" {
		frame.Messages = []MessageOut{}
	}
	pk := newPacker(budget, countJSON(frame), bodies, metas)
	err = s.Store().View(func(tx store.Tx) error {
		if format == "json" {
			res.Messages, err = packHistory(tx, v, snap.Heads, rest, raw, pk)
			return err
		}
		items, given, err := packHistoryItems(tx, v, snap.Heads, rest, raw, pk)
		if err != nil {
			return err
		}
		if format == "markdown" {
			var b strings.Builder
			if err := export.WriteMarkdown(&b, snap.Info.Title, items); err != nil {
				return err
			}
			res.Text = b.String()
		} else {
			res.Text = sessText(v, items, given, raw)
		}
		return nil
	})
	if err != nil {
		return SessionHistoryResult{}, err
	}
	res.Count = pk.taken
	// The earliest item given is at this place of the pool; those before
	// it are left out.
	at := len(pool) - start - pk.taken
	res.Total, res.FirstIndex, res.LeftOut = total, total, at
	if at < len(pool) {
		res.FirstIndex = pool[at]
	}
	var next *readCursor
	if given := start + pk.taken; pk.omitted > 0 && given > 0 {
		next = place.cursor(id(given - 1))
	}
	res.Fit = pk.fit(next, fmt.Sprintf("%d earlier items did not fit: call %s again with the same arguments and cursor=next_cursor, or read them with get_message_range", pk.omitted, tool))
	return res, nil
}

// packHistory gives items (newest first) as messages, as the packer
// lets, in thread order.
func packHistory(tx store.Tx, v *model.View, heads []model.Head, order []int, raw bool, pk *packer) ([]MessageOut, error) {
	if !raw {
		out, err := packMessages(tx, v, heads, order, pk)
		byIndex(out)
		return out, err
	}
	out := []MessageOut{}
	for k, i := range order {
		if pk.full {
			pk.skip(len(order) - k)
			break
		}
		o, err := rangeItem(tx, v, i, true)
		if err != nil {
			return nil, err
		}
		if packOne(pk, &o, o.Tokens, bodyAt{index: i, raw: true}, 0) {
			out = append(out, o)
		}
	}
	byIndex(out)
	return out, nil
}

// packHistoryItems gives items (newest first) for a transcript, as the
// packer lets, in thread order, with their indices: a body over the
// packer's cap is cut, with its marker, and its parts dropped (the cut
// content stands for them).
func packHistoryItems(tx store.Tx, v *model.View, heads []model.Head, order []int, raw bool, pk *packer) ([]formats.Item, []int, error) {
	var out []formats.Item
	var at []int
	for k, i := range order {
		if pk.full {
			pk.skip(len(order) - k)
			break
		}
		var it formats.Item
		var n int
		if raw {
			m, err := tx.Message(v.SessionID, uint64(i+1))
			if err != nil {
				return nil, nil, err
			}
			it, n = ops.StoredItem(&m), m.Tokens
			if j := v.IndexOfSeq(m.Seq); j >= 0 {
				it.Tags = v.Tags(v.Items[j])
			}
		} else {
			items, _, err := ops.TextItems(tx, v, []int{i})
			if err != nil {
				return nil, nil, err
			}
			it, n = items[0], assemble.Tokens(v, heads, i)
		}
		n = textTokens(it.Content, n)
		whole := it
		ok := pk.takeShaped(func(capBody int) (int, bool) {
			it = whole
			m, cut := n, false
			if n > capBody {
				if head, kept, rest := cutText(it.Content, n, capBody); rest > 0 {
					it.Content = head + bodyAt{index: i, raw: raw}.contentMarker(rest, kept)
					it.Parts = nil
					m, cut = capBody+cutMarkerTokens, true
				}
			}
			return 30 + strTokens(it.Content, m), cut
		})
		if ok {
			out, at = append(out, it), append(at, i)
		}
	}
	slices.Reverse(out)
	slices.Reverse(at)
	return out, at, nil
}

// sessText is a plain transcript: for each item a line with its index
// (at, in the same order), time and role (and, for a summary, what it
// covers), then its content.
func sessText(v *model.View, items []formats.Item, at []int, raw bool) string {
	var b strings.Builder
	for k, it := range items {
		if k > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%d]", at[k])
		if !it.CreatedAt.IsZero() {
			b.WriteString(" " + it.CreatedAt.UTC().Format("2006-01-02 15:04"))
		}
		b.WriteString(" " + string(it.Role))
		if it.Name != "" {
			b.WriteString(" (" + it.Name + ")")
		}
		if it.Synthetic {
			if !raw && it.Summary {
				if i := v.IndexOf(it.ID); i >= 0 {
					sy := &v.Synth[v.Items[i].Synth]
					fmt.Fprintf(&b, " — summary of %s", english.Count(sy.MessageCount, "message"))
					if !sy.TimeSpanStart.IsZero() {
						b.WriteString(", " + formats.SpanText(sy.TimeSpanStart, sy.TimeSpanEnd))
					}
				}
			} else {
				fmt.Fprintf(&b, " — by %s %s", it.OpType, it.OpID)
			}
		}
		b.WriteString(":\n")
		b.WriteString(strings.TrimRight(it.Content, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}
