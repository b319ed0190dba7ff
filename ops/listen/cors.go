package listen

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"weft/ops/httpx"
)

// CORS for browser-based clients. A page on an origin the listener was
// told to allow (--allow-origin) may call it: its preflight is answered
// with what MCP over HTTP sends (the session and protocol headers,
// Last-Event-ID to resume a stream, the bearer token), and its answers
// carry Access-Control-Allow-Origin and expose Mcp-Session-Id, without
// which a page cannot continue the session it started. Any other origin
// gets no CORS headers at all, and the guard refuses it as before; the
// token is still required of an allowed origin's calls, only not of its
// preflight, which browsers send without one.

const (
	corsMethods = "GET, POST, DELETE, OPTIONS"
	corsHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, " + httpx.AuthorHeader
	corsExpose  = "Mcp-Session-Id, WWW-Authenticate"
	// corsMaxAge is how long, in seconds, a browser may keep a preflight's
	// answer.
	corsMaxAge = "600"
)

// ErrBadOrigin refuses an allowed origin that is not one.
var ErrBadOrigin = errors.New("not an origin")

// CheckOrigin returns o as browsers send it in Origin (scheme://host or
// scheme://host:port, lower case, without a default port or a slash at
// the end), or an error wrapping ErrBadOrigin that says what an origin
// is.
func CheckOrigin(o string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q %s; give scheme://host[:port], e.g. http://localhost:5173", ErrBadOrigin, o, why)
	}
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(o), "/"))
	switch {
	case err != nil:
		return bad("does not parse")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("is not http:// or https://")
	case u.Host == "" || u.Hostname() == "":
		return bad("has no host")
	case u.User != nil, u.Path != "", u.RawQuery != "", u.Fragment != "", u.Opaque != "":
		return bad("is more than an origin")
	}
	host := strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	return u.Scheme + "://" + host, nil
}

// originSet is the set of allowed origins, as browsers send them; what is
// not an origin is left out (Listen refuses it before).
func originSet(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, o := range list {
		if o, err := CheckOrigin(o); err == nil {
			m[o] = true
		}
	}
	return m
}

// cors answers the preflights of allowed origins and marks their answers;
// everything else goes to next (the guard) untouched.
type cors struct {
	next    http.Handler
	origins map[string]bool
}

func (c cors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || !c.origins[strings.ToLower(origin)] {
		c.next.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", corsMethods)
		h.Set("Access-Control-Allow-Headers", corsHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.Set("Access-Control-Expose-Headers", corsExpose)
	c.next.ServeHTTP(w, r)
}
