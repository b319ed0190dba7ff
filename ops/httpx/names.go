package httpx

import (
	"net/http"
	"strings"
	"unicode"
)

// The names the weft that holds a file and the wefts relaying to it
// (ops/relay) agree on: mcpserver serves these paths, the relay calls
// them.
const (
	// DefaultPort is where weft listens unless told otherwise: agents
	// can be configured once.
	DefaultPort = 7433
	// MCPPath is where MCP is served over Streamable HTTP: the address
	// file names a listener by its URL with it.
	MCPPath = "/mcp"
	// APIPath is where the tools are called: POST APIPath + TOOL.
	APIPath = "/api/"
	// EventsPath streams the writes, one ops.Event of JSON a line.
	EventsPath = "/events"
	// SessionsPagePath and SessionsMatchPath read session records for
	// the pickers (ops.Service's SessionPage and MatchSessions).
	SessionsPagePath  = "/sessions/page"
	SessionsMatchPath = "/sessions/match"
	// AuthorHeader names the author of edits made through the listener;
	// without it they are recorded as "http".
	AuthorHeader = "X-Weft-Author"
	// OriginHeader carries the origin of the writes a relay sends (see
	// ops.WithOrigin), so the events it reads back tell its clients'
	// edits from those of others.
	OriginHeader = "X-Weft-Origin"
	// ResultCapHeader carries the cap (reads.Cap, as its String writes
	// it) that a tool's reads called without max_tokens fit: a relay
	// passes on its MCP client's.
	ResultCapHeader = "X-Weft-Result-Cap"
	// APIOrigin starts the origin of a write that came through the API
	// with an OriginHeader.
	APIOrigin = "api/"
)

// maxAuthor bounds an author name: it is shown in the TUI's feed and kept
// with every operation.
const maxAuthor = 64

// CleanAuthor keeps an author name printable and short.
func CleanAuthor(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if r := []rune(s); len(r) > maxAuthor {
		s = string(r[:maxAuthor])
	}
	return strings.TrimSpace(s)
}

// Author is the author a request's AuthorHeader names, cleaned, else
// "http".
func Author(r *http.Request) string {
	if a := CleanAuthor(r.Header.Get(AuthorHeader)); a != "" {
		return a
	}
	return "http"
}
