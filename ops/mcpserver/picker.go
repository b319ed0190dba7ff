package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/internal/english"
	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/sessionmatch"
	"weft/ops/tools"
)

// Picking a session in a client:
//
//   - completion/complete offers sessions for every session_id there is
//     to complete: the startup prompt's session_id and the {id} of the
//     session resource templates. MCP defines completion for prompt
//     arguments and resource template variables only (ref/prompt,
//     ref/resource): there is no reference to a tool's argument, so the
//     tools' session_id is not completed; a client picks one from the
//     sessions listed as resources, below, or from list_sessions.
//   - resources/list gives, after weft's fixed resources, one resource per
//     session (weft://sessions/{id}, with its title, counts and dates), a
//     page at a time, so @-mentions and attach menus can offer them.
//     notifications/resources/list_changed is sent when a session is
//     created, renamed or deleted (notify.go): what changes the list.
//
// Both read session records through the backend (ops.Service's
// SessionPage and MatchSessions; a relay asks the weft it relays to at
// /sessions/page and /sessions/match).

const (
	// maxCompletions is MCP's cap on the values of one completion.
	maxCompletions = 100
	// sessionsPage is how many sessions one page of resources/list gives.
	sessionsPage = 100
)

// service is the Service this server runs on, or nil for a relay.
func (s *Server) service() *ops.Service {
	if b, ok := s.backend.(tools.Local); ok {
		return b.Service
	}
	return nil
}

// serveRead answers a POST of read's arguments (JSON) with its result
// (JSON), read from the file this server holds: /sessions/page
// (sessionmatch.PageArgs, an sessionmatch.Page) and /sessions/match
// (sessionmatch.Args, an sessionmatch.Result).
func serveRead[A, R any](s *Server, read func(*ops.Service, context.Context, A) (R, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !httpx.PostOnly(w, r) {
			return
		}
		svc := s.service()
		if svc == nil {
			httpx.WriteError(w, http.StatusNotImplemented, r.URL.Path+" is not offered by a relay: ask the weft that holds the file")
			return
		}
		var args A
		if !httpx.ReadArgs(w, r, &args) {
			return
		}
		res, err := read(svc, r.Context(), args)
		if err != nil {
			httpx.WriteError(w, httpx.StatusOf(err), err.Error())
			return
		}
		httpx.WriteJSON(w, http.StatusOK, res)
	}
}

// complete answers completion/complete: sessions for a session_id, best
// first (ops.MatchSessions), at most maxCompletions of them with the
// total. A prompt argument gets the session's title where that names it
// and its ID where not (or where the user is typing an ID); a template's
// {id} gets IDs, which go into a URI as they are.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: completion/complete needs a ref (ref/prompt or ref/resource) and an argument"}
	}
	none := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	ids := false
	switch {
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "startup":
		if p.Argument.Name != "session_id" {
			return none, nil
		}
	case p.Ref.Type == "ref/resource" && slices.Contains([]string{sessionPath, contextPath}, templatePath(p.Ref.URI)):
		if p.Argument.Name != "id" {
			return none, nil // a budget or a cursor: nothing to offer
		}
		ids = true
	case p.Ref.Type == "ref/resource" && slices.Contains([]string{URISessions, URIRecent, templatePath(URISearchTemplate)}, templatePath(p.Ref.URI)):
		return none, nil // nothing in them to fill in but a budget or a cursor, or a query
	case p.Ref.Type == "ref/resource" && templatePath(p.Ref.URI) == templatePath(URIRoomTemplate):
		if p.Argument.Name != "room" {
			return none, nil
		}
		values, total, err := s.roomValues(ctx, p.Argument.Value)
		if err != nil {
			return nil, err
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: total, HasMore: total > len(values)}}, nil
	default:
		what := p.Ref.Name
		if p.Ref.Type == "ref/resource" {
			what = p.Ref.URI
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"invalid params: weft has no %s %q to complete: it completes the prompt startup's session_id, the {id} of %s and %s, and the {room} of %s",
			strings.TrimPrefix(p.Ref.Type, "ref/"), what, URISessionTemplate, URIContextTemplate, URIRoomTemplate)}
	}
	res, err := s.backend.MatchSessions(ctx, sessionmatch.Args{Query: p.Argument.Value, Limit: maxCompletions})
	if err != nil {
		return nil, err
	}
	values := make([]string, 0, len(res.Candidates))
	for _, c := range res.Candidates {
		if ids || c.ByID {
			values = append(values, c.SessionID)
		} else {
			values = append(values, c.Ref)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: res.Total, HasMore: res.Total > len(values)}}, nil
}

// sessionResources adds the sessions to resources/list, a page at a time:
// the first page is weft's fixed resources (the SDK's list) and the
// newest sessions; a cursor of weft's own gives the next sessions.
func (s *Server) sessionResources(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		p, _ := req.GetParams().(*mcp.ListResourcesParams)
		after, first := "", p == nil || p.Cursor == ""
		if !first {
			var ok bool
			if after, ok = readSessionsCursor(p.Cursor); !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: cursor %q is not one weft gave: give the nextCursor of the page before, or none for the first page", p.Cursor)}
			}
			// The SDK's list of fixed resources is the first page's; asked
			// without a cursor it still makes the result, with what a
			// result carries besides the resources.
			p.Cursor = ""
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		list, ok := res.(*mcp.ListResourcesResult)
		if !ok {
			return res, nil
		}
		if !first {
			list.Resources = []*mcp.Resource{}
		}
		page, err := s.backend.SessionPage(ctx, sessionmatch.PageArgs{After: after, Limit: sessionsPage})
		if err != nil {
			return nil, err
		}
		for _, info := range page.Sessions {
			list.Resources = append(list.Resources, sessionResource(info))
		}
		list.NextCursor = ""
		if page.Next != "" {
			list.NextCursor = sessionsCursor(page.Next)
		}
		return list, nil
	}
}

// The paths of the session templates, without their query.
var (
	sessionPath = templatePath(URISessionTemplate)
	contextPath = templatePath(URIContextTemplate)
)

// templatePath is a URI template without its query expression
// ({?max_tokens,cursor}), so that a client may name a template with or
// without it.
func templatePath(t string) string {
	if i := strings.Index(t, "{?"); i >= 0 && strings.HasSuffix(t, "}") {
		return t[:i]
	}
	return t
}

// sessionsCursorPrefix marks weft's cursors of resources/list.
const sessionsCursorPrefix = "sessions-after:"

func sessionsCursor(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(sessionsCursorPrefix + after))
}

func readSessionsCursor(cursor string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	after, ok := strings.CutPrefix(string(b), sessionsCursorPrefix)
	return after, ok && after != ""
}

// sessionResource describes a session as a resource.
func sessionResource(info ops.SessionOut) *mcp.Resource {
	title := info.Title
	if strings.TrimSpace(title) == "" {
		title = info.SessionID
	}
	r := &mcp.Resource{
		URI: URISessions + "/" + url.PathEscape(info.SessionID), Name: title, Title: title, MIMEType: resMIME,
	}
	if info.Unreadable != "" {
		r.Description = "A weft session whose record cannot be read: " + info.Unreadable
		return r
	}
	r.Description = fmt.Sprintf("A weft session: %s, %s; created %s, updated %s.",
		english.Count(info.MessageCount, "message"), english.Count(info.OpCount, "operation"), shortTime(info.CreatedAt), shortTime(info.UpdatedAt))
	r.Annotations = &mcp.Annotations{LastModified: info.UpdatedAt}
	return r
}
