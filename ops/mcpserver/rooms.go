package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/reads"
)

// The rooms and search resources (seed 004's conversations://room/:roomId
// and conversations://search): get_session_by_room and search_sessions
// as resources, fitted and paged as the session resources are
// (resources_fit.go). The room or the query is one path segment,
// percent-encoded as a template's simple expansion gives it: every byte
// but letters, digits and -._~ (weft://rooms/%21general%3Aexample.org).
const (
	URIRoomTemplate   = uriRooms + "{room}{?max_tokens,cursor}"
	URISearchTemplate = uriSearch + "{query}{?max_tokens,cursor}"

	uriRooms  = "weft://rooms/"
	uriSearch = "weft://search/"
)

func (s *Server) addRoomResources(fits string) {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: URIRoomTemplate, Name: "room", Title: "Room", MIMEType: resMIME,
		Description: "The sessions of a room (create_session's room), most recently updated first: each one's ID, title, interface, message count, tokens and latest update. " +
			"The room is percent-encoded (weft://rooms/%21general%3Aexample.org); a room with no session is not found. get_session_by_room with interface gives a room's one session on an interface." + fits,
	}, s.readRoom)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: URISearchTemplate, Name: "search", Title: "Search sessions", MIMEType: resMIME,
		Description: "search_sessions as a resource: the sessions whose title or effective thread holds the query (case-insensitive, percent-encoded: weft://search/rate%20limiter), title matches first, with snippets. " +
			"search_sessions itself also filters by interface and time." + fits,
	}, s.readSearch)
}

// roomRead is weft://rooms/{room}: get_session_by_room, with the URI
// that reads on.
type roomRead struct {
	reads.SessionByRoomResult
	NextURI string `json:"next_uri,omitempty"`
}

// searchRead is weft://search/{query}: search_sessions, with the URI
// that reads on.
type searchRead struct {
	reads.SearchSessionsResult
	NextURI string `json:"next_uri,omitempty"`
}

func (r *roomRead) page() (any, *reads.Fit, *string) {
	return &r.SessionByRoomResult, &r.Fit, &r.NextURI
}

func (r *searchRead) page() (any, *reads.Fit, *string) {
	return &r.SearchSessionsResult, &r.Fit, &r.NextURI
}

func (s *Server) readRoom(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readListing(ctx, req.Params.URI, "get_session_by_room", &roomRead{}, func(r resourceURI, max *int) (any, string) {
		return reads.SessionByRoomArgs{Room: r.ref, MaxTokens: max, Cursor: r.cursor}, uriRooms + segment(r.ref)
	})
}

func (s *Server) readSearch(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readListing(ctx, req.Params.URI, "search_sessions", &searchRead{}, func(r resourceURI, max *int) (any, string) {
		return reads.SearchSessionsArgs{Query: r.ref, MaxTokens: max, Cursor: r.cursor}, uriSearch + segment(r.ref)
	})
}

// pathRef reads the room or the query out of a rooms or search URI's
// path: one segment after prefix, percent-decoded, not blank.
func pathRef(path, prefix, what, example string) (string, error) {
	ref, err := url.PathUnescape(strings.TrimPrefix(path, prefix))
	if err != nil || strings.TrimSpace(ref) == "" {
		return "", invalidResource("%s does not name a %s: use %s with the %s percent-encoded (%s)", path, what, prefix+"{"+what+"}", what, example)
	}
	return ref, nil
}

// segment percent-encodes s as a URI template's simple expansion does:
// every byte but the unreserved ones (letters, digits, -._~), so that
// the URI matches the template it came from.
func segment(s string) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// roomValues are the file's rooms that begin with prefix (any case),
// percent-encoded for a URI, for completing a rooms URI's {room}; the
// total counts them all.
func (s *Server) roomValues(ctx context.Context, prefix string) ([]string, int, error) {
	var list reads.ListSessionsResult
	if err := s.callTool(ctx, "list_sessions", reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)}, &list); err != nil {
		return nil, 0, err
	}
	var rooms []string
	seen := map[string]bool{}
	for _, x := range list.Sessions {
		if x.Room != "" && !seen[x.Room] && strings.HasPrefix(strings.ToLower(x.Room), strings.ToLower(prefix)) {
			seen[x.Room] = true
			rooms = append(rooms, x.Room)
		}
	}
	total := len(rooms)
	values := make([]string, 0, min(total, maxCompletions))
	for _, room := range rooms[:min(total, maxCompletions)] {
		values = append(values, segment(room))
	}
	return values, total, nil
}
