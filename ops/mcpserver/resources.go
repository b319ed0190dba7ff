package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/formats"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
)

// Resource URIs. Templates take a session ID (an exact ID, a unique ID
// prefix or a title, as session_id does everywhere) and, in the query,
// a budget and a cursor (resources_fit.go).
const (
	URISessions        = "weft://sessions"
	URIRecent          = "weft://sessions/recent"
	URISessionTemplate = "weft://sessions/{id}{?max_tokens,cursor}"
	URIContextTemplate = "weft://sessions/{id}/context{?max_tokens,cursor}"
)

const (
	resMIME = "application/json"
	// recentSessions and recentMessages bound weft://sessions/recent: a
	// glance at what was worked on last, not a dump.
	recentSessions = 10
	recentMessages = 5
	// sessionTurns is how many turns of context weft://sessions/{id}
	// gives: the latest raw turns, then summaries for the rest.
	sessionTurns = 40
)

// sessionsResource describes weft://sessions.
func sessionsResource() *mcp.Resource {
	return &mcp.Resource{
		URI: URISessions, Name: "sessions", Title: "Sessions", MIMEType: resMIME,
		Description: "Every session, most recently updated first, with message counts, tokens, operation counts and versions.",
	}
}

func (s *Server) addResources() {
	s.mcp.AddResource(sessionsResource(), s.readSessions)
	s.mcp.AddResource(&mcp.Resource{
		URI: URIRecent, Name: "recent", Title: "Recent sessions", MIMEType: resMIME,
		Description: fmt.Sprintf("The %d most recently updated sessions, each with its last %d messages of the effective thread.", recentSessions, recentMessages),
	}, s.readRecent)
	fits := fmt.Sprintf(" Fitted to max_tokens (default %d; 0 for no limit): what did not fit is counted, with a next_uri that reads on.", reads.DefaultMaxTokens)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: uriSessionsQuery, Name: "sessions-page", Title: "Sessions, paged", MIMEType: resMIME,
		Description: "Every session, as " + URISessions + " gives them." + fits,
	}, s.readSessions)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: uriRecentQuery, Name: "recent-fitted", Title: "Recent sessions, fitted", MIMEType: resMIME,
		Description: "The recent sessions, as " + URIRecent + " gives them, fitted to max_tokens (default " + fmt.Sprint(reads.DefaultMaxTokens) + "; 0 for no limit).",
	}, s.readRecent)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: URISessionTemplate, Name: "session", Title: "Session", MIMEType: resMIME,
		Description: fmt.Sprintf("A session: its details and about %d turns of context (the latest unsummarized turns, then summaries for the rest).", sessionTurns) + fits,
	}, s.readSession)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: URIContextTemplate, Name: "session-context", Title: "Session startup context", MIMEType: resMIME,
		Description: "A session's startup package, by recency: the 2 latest summaries and the unsummarized turns, the latest first." + fits,
	}, s.readContext)
	s.addRoomResources(fits)
}

// callTool runs a registry tool through the backend, its result into
// out (a pointer to the tool's result type).
func (s *Server) callTool(ctx context.Context, name string, args, out any) error {
	tool, ok := tools.Lookup(name)
	if !ok {
		return fmt.Errorf("this weft has no tool %s", name)
	}
	return s.backend.Invoke(ctx, tool, args, out)
}

// resourceResult wraps a value as a resource's JSON contents.
func resourceResult(uri string, v any) (*mcp.ReadResourceResult, error) {
	b, err := formats.Encode(v)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: resMIME, Text: string(b)}}}, nil
}

// resourceError turns a refused read into a JSON-RPC error that keeps the
// message: a missing session is "not found" with the reason, not a bare
// code.
func resourceError(uri string, err error) error {
	var opsErr *ops.Error
	if !errors.As(err, &opsErr) {
		return err
	}
	// A missing resource is invalid params too, as MCP has it (SEP-2164).
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: opsErr.Msg, Data: data}
}

func (s *Server) readSessions(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readListing(ctx, req.Params.URI, "list_sessions", &sessionsRead{}, func(r resourceURI, max *int) (any, string) {
		return reads.ListSessionsArgs{MaxTokens: max, Cursor: r.cursor}, URISessions
	})
}

// listing is a listing resource's result: the tool's (result, whose Fit
// is fit), with the URI that reads on.
type listing interface {
	page() (result any, fit *reads.Fit, nextURI *string)
}

// readListing reads a listing resource (the sessions, a room's, a
// search's) at uri: tool, given the arguments args makes for the page
// the URI asks for within its budget, fills out, which gets the URI of
// the next page (from the base args gives).
func (s *Server) readListing(ctx context.Context, uri, tool string, out listing, args func(r resourceURI, max *int) (any, string)) (*mcp.ReadResourceResult, error) {
	r, err := parseResourceURI(uri)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	budget, err := r.budget()
	if err != nil {
		return nil, resourceError(uri, err)
	}
	a, base := args(r, inner(budget))
	res, fit, next := out.page()
	if err := s.callTool(ctx, tool, a, res); err != nil {
		return nil, resourceError(uri, err)
	}
	*next = r.nextURI(base, fit.NextCursor)
	fit.MaxTokens = budget
	reads.SettleTokens(out, &fit.ResultTokens)
	return resourceResult(uri, out)
}

func (s *Server) readRecent(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	r, err := parseResourceURI(uri)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	out, err := s.readRecentFit(ctx, r)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	return resourceResult(uri, out)
}

// sessionRef reads the session reference out of a templated URI.
func sessionRef(uri, suffix string) (string, error) {
	rest, ok := strings.CutPrefix(uri, URISessions+"/")
	if !ok {
		return "", &ops.Error{Kind: ops.ErrInvalid, Msg: fmt.Sprintf("%s is not a session resource (weft://sessions/ID)", uri)}
	}
	rest = strings.TrimSuffix(rest, suffix)
	ref, err := url.PathUnescape(rest)
	if err != nil || ref == "" || strings.Contains(ref, "/") {
		return "", &ops.Error{Kind: ops.ErrInvalid, Msg: fmt.Sprintf("%s does not name a session: use weft://sessions/ID%s", uri, suffix)}
	}
	return ref, nil
}

// findSession returns a session's details by ID, ID prefix or title.
func (s *Server) findSession(ctx context.Context, ref string) (ops.SessionOut, error) {
	var list reads.ListSessionsResult
	if err := s.callTool(ctx, "list_sessions", reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)}, &list); err != nil {
		return ops.SessionOut{}, err
	}
	id := ref
	if !hasSession(list.Sessions, id) {
		// Let the service resolve a prefix or title, with its own error
		// when nothing matches.
		var res reads.ListOperationsResult
		if err := s.callTool(ctx, "list_operations", reads.ListOperationsArgs{SessionID: ref, ActiveOnly: true}, &res); err != nil {
			return ops.SessionOut{}, err
		}
		id = res.SessionID
	}
	for _, info := range list.Sessions {
		if info.SessionID == id {
			return info, nil
		}
	}
	return ops.SessionOut{}, &ops.Error{Kind: ops.ErrNotFound, Msg: fmt.Sprintf("session %q not found (weft://sessions lists them)", ref)}
}

func hasSession(list []ops.SessionOut, id string) bool {
	for _, info := range list {
		if info.SessionID == id {
			return true
		}
	}
	return false
}

func (s *Server) readSession(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	r, err := parseResourceURI(uri)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	switch r.kind {
	case resRecent:
		return s.readRecent(ctx, req)
	case resContext:
		return s.readContext(ctx, req)
	}
	budget, err := r.budget()
	if err != nil {
		return nil, resourceError(uri, err)
	}
	info, err := s.findSession(ctx, r.ref)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	turns := sessionTurns
	var thread reads.ConversationContextResult
	if err := s.callTool(ctx, "get_conversation_context", reads.ConversationContextArgs{SessionID: info.SessionID, Turns: &turns, MaxTokens: inner(budget), Cursor: r.cursor}, &thread); err != nil {
		return nil, resourceError(uri, err)
	}
	base := URISessions + "/" + url.PathEscape(info.SessionID)
	out := struct {
		Session ops.SessionOut                  `json:"session"`
		Context reads.ConversationContextResult `json:"context"`
		More    string                          `json:"more"`
		NextURI string                          `json:"next_uri,omitempty"`
		// MaxTokens and ResultTokens are the resource's: the context's
		// Fit says how it was fitted in what the session left.
		MaxTokens    int `json:"max_tokens"`
		ResultTokens int `json:"result_tokens"`
	}{Session: info, Context: thread, More: "get_message_range, get_turns_since and search_session_history read the rest; " + base + "/context is the startup package",
		NextURI: r.nextURI(base, thread.NextCursor), MaxTokens: budget}
	reads.SettleTokens(&out, &out.ResultTokens)
	return resourceResult(uri, out)
}

func (s *Server) readContext(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	r, err := parseResourceURI(uri)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	budget, err := r.budget()
	if err != nil {
		return nil, resourceError(uri, err)
	}
	info, err := s.findSession(ctx, r.ref)
	if err != nil {
		return nil, resourceError(uri, err)
	}
	var pkg reads.StartupContextResult
	if err := s.callTool(ctx, "get_startup_context", reads.StartupContextArgs{SessionID: info.SessionID, MaxTokens: inner(budget), Cursor: r.cursor}, &pkg); err != nil {
		return nil, resourceError(uri, err)
	}
	out := struct {
		Session ops.SessionOut `json:"session"`
		reads.StartupContextResult
		NextURI string `json:"next_uri,omitempty"`
	}{info, pkg, r.nextURI(URISessions+"/"+url.PathEscape(info.SessionID)+"/context", pkg.NextCursor)}
	out.MaxTokens = budget
	reads.SettleTokens(&out, &out.ResultTokens)
	return resourceResult(uri, out)
}

// The startup prompt (seed 003): recency, not search.

func (s *Server) addPrompts() {
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:  "startup",
		Title: "Startup context",
		Description: "Reconstruct where a conversation stands, by recency rather than search: " +
			"the latest summaries and ALL unsummarized turns of a session.",
		Arguments: []*mcp.PromptArgument{
			{Name: "session_id", Description: "the session (ID, ID prefix or title); default: the one open in weft's TUI, else the most recently updated"},
			{Name: "summaries", Description: "how many of the latest summaries to include (default 2)"},
			{Name: "max_tokens", Description: fmt.Sprintf("fit the package in about this many tokens (default %d; 0 for no limit): the summaries and the latest turns first, long bodies cut with a marker saying how to read on", reads.DefaultMaxTokens)},
		},
	}, s.startupPrompt)
}

func (s *Server) startupPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := reads.StartupContextArgs{SessionID: strings.TrimSpace(req.Params.Arguments["session_id"])}
	if v := strings.TrimSpace(req.Params.Arguments["summaries"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("summaries %q is not a whole number: give how many summaries to include (default 2)", v)}
		}
		args.Summaries = &n
	}
	if v := strings.TrimSpace(req.Params.Arguments["max_tokens"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("max_tokens %q is not a whole number: give a budget of %d or more tokens (default %d; 0 for no limit)", v, reads.MinMaxTokens, reads.DefaultMaxTokens)}
		}
		args.MaxTokens = &n
	}
	var info ops.SessionOut
	var err error
	if args.SessionID != "" {
		info, err = s.findSession(ctx, args.SessionID)
	} else {
		info, err = s.defaultSession(ctx)
	}
	if err != nil {
		return nil, resourceError("prompt startup", err)
	}
	args.SessionID = info.SessionID
	var pkg reads.StartupContextResult
	if err := s.callTool(ctx, "get_startup_context", args, &pkg); err != nil {
		return nil, resourceError("prompt startup", err)
	}
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("Startup context of %q: %d summaries and %d unsummarized turns", info.Title, len(pkg.Summaries), pkg.UnsummarizedCount),
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: startupText(info, pkg)}}},
	}, nil
}

// defaultSession is the session tools use when given none: the service
// decides (the TUI's, else the latest), and list_operations reports it.
func (s *Server) defaultSession(ctx context.Context) (ops.SessionOut, error) {
	var res reads.ListOperationsResult
	if err := s.callTool(ctx, "list_operations", reads.ListOperationsArgs{ActiveOnly: true}, &res); err != nil {
		return ops.SessionOut{}, err
	}
	return s.findSession(ctx, res.SessionID)
}

// startupText lays the startup package out as one message: the summaries
// oldest first, then every unsummarized turn in thread order.
func startupText(info ops.SessionOut, pkg reads.StartupContextResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Startup context for %q (session %s, version %d): the %d latest summaries and %d of the %d unsummarized turns, by recency.\n",
		info.Title, info.SessionID, info.Version, len(pkg.Summaries), len(pkg.Unsummarized), pkg.UnsummarizedCount)
	if !pkg.Complete {
		fmt.Fprintf(&b, "Fitted to %d tokens: %d left out, %d cut short. %s\n", pkg.MaxTokens, pkg.Omitted, pkg.Cut, pkg.Next)
	}
	if len(pkg.Summaries) > 0 {
		b.WriteString("\n## Summaries\n")
		for _, sm := range pkg.Summaries {
			fmt.Fprintf(&b, "\n[summary %s · %s – %s · %d messages]\n%s\n", sm.ID, shortTime(sm.TimeSpanStart), shortTime(sm.TimeSpanEnd), sm.MessageCount, strings.TrimSpace(sm.Content))
		}
	}
	fmt.Fprintf(&b, "\n## Unsummarized turns (%d)\n", pkg.UnsummarizedCount)
	if len(pkg.Unsummarized) == 0 {
		b.WriteString("\nNone: everything is summarized.\n")
	}
	for _, m := range pkg.Unsummarized {
		name := ""
		if m.Name != "" {
			name = " (" + m.Name + ")"
		}
		fmt.Fprintf(&b, "\n[%d · %s%s · %s]\n%s\n", m.Index, m.Role, name, shortTime(m.CreatedAt), strings.TrimSpace(m.Content))
	}
	return b.String()
}

// shortTime shows an RFC 3339 time to the minute, in UTC as stored.
func shortTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04Z")
}
