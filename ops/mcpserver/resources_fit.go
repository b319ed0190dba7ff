package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"weft/formats"
	"weft/internal/tokens"
	"weft/ops"
	"weft/ops/reads"
)

// Resources are read results too, and fit a budget as the read tools do:
// a resource URI takes max_tokens (default reads.DefaultMaxTokens, 0 for
// no limit) and, where a read can page, cursor, in its query:
// weft://sessions/ID?max_tokens=8000, then weft://sessions/ID?cursor=...
// as next_uri says. The templates declare them ({?max_tokens,cursor}),
// so a client that expands templates can offer them.

// Templates of the resources with their query; the bare URIs still read
// with the defaults.
const (
	uriSessionsQuery = URISessions + "{?max_tokens,cursor}"
	uriRecentQuery   = URIRecent + "{?max_tokens}"
)

// resourceFrame is kept from a session resource's budget for what it
// adds around the read it wraps: the session's details, next_uri and
// the words beside them.
const resourceFrame = 400

// Kinds of resource a URI can name.
const (
	resSessions = "sessions"
	resRecent   = "recent"
	resSession  = "session"
	resContext  = "context"
	resRoom     = "room"   // weft://rooms/{room} (rooms.go)
	resSearch   = "search" // weft://search/{query}
)

// resourceURI is a resource URI, read: which resource, the session it
// names, and the query's max_tokens and cursor.
type resourceURI struct {
	kind      string
	ref       string // the session reference, for session and context; the room, the query
	maxTokens *int
	cursor    string
}

// parseResourceURI reads a resource URI; what it cannot read is an
// invalid argument that says what would be right.
func parseResourceURI(uri string) (resourceURI, error) {
	path, query, _ := strings.Cut(uri, "?")
	var r resourceURI
	switch {
	case path == URISessions:
		r.kind = resSessions
	case path == URIRecent:
		r.kind = resRecent
	case strings.HasPrefix(path, uriRooms):
		r.kind = resRoom
		ref, err := pathRef(path, uriRooms, "room", uriRooms+"%21general%3Aexample.org")
		if err != nil {
			return r, err
		}
		r.ref = ref
	case strings.HasPrefix(path, uriSearch):
		r.kind = resSearch
		ref, err := pathRef(path, uriSearch, "query", uriSearch+"rate%20limiter")
		if err != nil {
			return r, err
		}
		r.ref = ref
	default:
		r.kind = resSession
		suffix := ""
		if strings.HasSuffix(path, "/context") {
			r.kind, suffix = resContext, "/context"
		}
		ref, err := sessionRef(path, suffix)
		if err != nil {
			return r, err
		}
		r.ref = ref
		if ref == "recent" && r.kind == resSession {
			r.kind = resRecent // weft://sessions/recent?... matches the session template too
		}
	}
	if query == "" {
		return r, nil
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return r, invalidResource("%s: the query %q is not key=value&key=value (%v)", path, query, err)
	}
	for key, vals := range values {
		if len(vals) != 1 {
			return r, invalidResource("%s: %s is given %d times; give it once", path, key, len(vals))
		}
		switch {
		case key == "max_tokens":
			n, err := strconv.Atoi(vals[0])
			if err != nil {
				return r, invalidResource("%s: max_tokens %q is not a whole number: give a budget of %d or more tokens (default %d; 0 for no limit)", path, vals[0], reads.MinMaxTokens, reads.DefaultMaxTokens)
			}
			r.maxTokens = &n
		case key == "cursor" && r.kind != resRecent:
			r.cursor = vals[0]
		default:
			takes := "max_tokens and cursor"
			if r.kind == resRecent {
				takes = "max_tokens"
			}
			return r, invalidResource("%s takes %s in its query, not %q", path, takes, key)
		}
	}
	return r, nil
}

func invalidResource(format string, args ...any) error {
	return &ops.Error{Kind: ops.ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}

// budget is the resource's budget: max_tokens, or the default.
func (r resourceURI) budget() (int, error) {
	if r.maxTokens == nil {
		return reads.DefaultMaxTokens, nil
	}
	n := *r.maxTokens
	if n < 0 || (n > 0 && n < reads.MinMaxTokens+resourceFrame) {
		return 0, invalidResource("max_tokens %d is too small for a resource: give %d or more (default %d; 0 for no limit)", n, reads.MinMaxTokens+resourceFrame, reads.DefaultMaxTokens)
	}
	if n > reads.MaxMaxTokens {
		return 0, invalidResource("max_tokens %d is more than %d, more than any model takes: give less, or 0 for no limit", n, reads.MaxMaxTokens)
	}
	return n, nil
}

// inner is the budget of the read a session resource wraps.
func inner(budget int) *int {
	if budget == reads.NoLimit {
		return new(reads.NoLimit)
	}
	return new(budget - resourceFrame)
}

// nextURI is the URI that reads on from a read's next_cursor, keeping the
// max_tokens asked for; "" when there is nothing more.
func (r resourceURI) nextURI(base, cursor string) string {
	if cursor == "" {
		return ""
	}
	q := url.Values{"cursor": {cursor}}
	if r.maxTokens != nil {
		q.Set("max_tokens", strconv.Itoa(*r.maxTokens))
	}
	return base + "?" + q.Encode()
}

// sessionsRead is weft://sessions: list_sessions, with the URI that
// reads on.
type sessionsRead struct {
	reads.ListSessionsResult
	NextURI string `json:"next_uri,omitempty"`
}

func (r *sessionsRead) page() (any, *reads.Fit, *string) {
	return &r.ListSessionsResult, &r.Fit, &r.NextURI
}

// recentSession is a session with its latest messages.
type recentSession struct {
	ops.SessionOut
	Messages []reads.MessageOut `json:"latest_messages"`
	// LeftOut counts its latest messages not given for the budget.
	LeftOut int `json:"messages_left_out,omitempty"`
}

// recentRead is weft://sessions/recent.
type recentRead struct {
	Sessions []recentSession `json:"sessions"`
	Total    int             `json:"total"`
	reads.Fit
}

// readRecentFit reads the most recently updated sessions, each with its
// latest messages, within the budget: the room beside the list is shared
// among the sessions, the most recent first when it does not go round.
func (s *Server) readRecentFit(ctx context.Context, r resourceURI) (recentRead, error) {
	budget, err := r.budget()
	if err != nil {
		return recentRead{}, err
	}
	var list reads.ListSessionsResult
	if err := s.callTool(ctx, "list_sessions", reads.ListSessionsArgs{Limit: recentSessions, MaxTokens: new(reads.NoLimit)}, &list); err != nil {
		return recentRead{}, err
	}
	out := recentRead{Sessions: make([]recentSession, len(list.Sessions)), Total: list.Total}
	var withMessages []int
	for i, info := range list.Sessions {
		out.Sessions[i] = recentSession{SessionOut: info, Messages: []reads.MessageOut{}}
		if info.MessageCount > 0 && info.Unreadable == "" {
			withMessages = append(withMessages, i)
		}
	}
	share := reads.NoLimit
	if budget != reads.NoLimit && len(withMessages) > 0 {
		room := budget - countTokens(out) - resourceFrame
		n := min(len(withMessages), max(room, 0)/reads.MinMaxTokens)
		if n == 0 {
			return recentRead{}, invalidResource("max_tokens %d is too small for %s with %d sessions: give %d or more", budget, URIRecent, len(list.Sessions), budget-room+reads.MinMaxTokens)
		}
		for _, i := range withMessages[n:] {
			out.Sessions[i].LeftOut = min(recentMessages, out.Sessions[i].MessageCount)
			out.Omitted += out.Sessions[i].LeftOut
		}
		withMessages, share = withMessages[:n], room/n
	}
	for _, i := range withMessages {
		limit := recentMessages
		var h reads.SessionHistoryResult
		err := s.callTool(ctx, "get_session_history", reads.SessionHistoryArgs{SessionID: list.Sessions[i].SessionID, Format: "json", Limit: &limit, MaxTokens: new(share)}, &h)
		if err != nil {
			return recentRead{}, err
		}
		out.Sessions[i].Messages = h.Messages
		if out.Sessions[i].Messages == nil {
			out.Sessions[i].Messages = []reads.MessageOut{}
		}
		out.Sessions[i].LeftOut = h.Omitted
		out.Omitted += h.Omitted
		out.Cut += h.Cut
	}
	out.MaxTokens, out.Complete = budget, out.Omitted == 0 && out.Cut == 0
	if out.Omitted > 0 {
		out.Next = fmt.Sprintf("%d latest messages did not fit: read weft://sessions/ID for a session's context, or get_session_history session_id=ID", out.Omitted)
	}
	reads.SettleTokens(&out, &out.ResultTokens)
	return out, nil
}

// countTokens counts the tokens of v's JSON as a resource sends it.
func countTokens(v any) int {
	b, err := formats.Encode(v)
	if err != nil {
		return 0
	}
	return tokens.Count(string(b))
}
