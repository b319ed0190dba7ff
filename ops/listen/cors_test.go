package listen

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
)

const appOrigin = "http://app.example:3000"

// accessHeaders are the response's Access-Control-* headers.
func accessHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out[k] = h.Get(k)
		}
	}
	return out
}

// listOf splits a comma-separated header value, lower-cased.
func listOf(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		out = append(out, strings.ToLower(strings.TrimSpace(s)))
	}
	return out
}

func TestCORSForAllowedOriginsOnly(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, _ := api(t, svc, Options{Token: "tok", Origins: []string{appOrigin}})
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"browser","version":"1"}}}`
	mcpPost := func(origin, token string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Origin": origin, "Sec-Fetch-Site": "cross-site"}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		return h
	}

	// A preflight from an allowed origin is answered, without the token
	// (browsers send none with it), with what MCP over HTTP needs.
	status, h, body := do(t, "OPTIONS", ts.URL+"/mcp", "", map[string]string{
		"Origin": appOrigin, "Sec-Fetch-Site": "cross-site", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id",
	})
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Fatalf("preflight: %d %v %s", status, accessHeaders(h), body)
	}
	for _, m := range []string{"get", "post", "delete"} {
		if !slices.Contains(listOf(h.Get("Access-Control-Allow-Methods")), m) {
			t.Errorf("preflight allows methods %q, not %s", h.Get("Access-Control-Allow-Methods"), m)
		}
	}
	for _, hd := range []string{"mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization", "content-type"} {
		if !slices.Contains(listOf(h.Get("Access-Control-Allow-Headers")), hd) {
			t.Errorf("preflight allows headers %q, not %s", h.Get("Access-Control-Allow-Headers"), hd)
		}
	}
	if !slices.Contains(listOf(h.Get("Vary")), "origin") {
		t.Errorf("preflight without Vary: Origin: %v", h)
	}

	// The call itself: the page may read the answer and the session ID.
	status, h, body = do(t, "POST", ts.URL+"/mcp", initialize, mcpPost(appOrigin, "tok"))
	if status != http.StatusOK || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize from the allowed origin: %d %s", status, body)
	}
	if h.Get("Access-Control-Allow-Origin") != appOrigin || !slices.Contains(listOf(h.Get("Access-Control-Expose-Headers")), "mcp-session-id") {
		t.Errorf("initialize from the allowed origin: CORS headers %v", accessHeaders(h))
	}
	// A refusal is readable too, so the page can say why.
	status, h, _ = do(t, "POST", ts.URL+"/mcp", initialize, mcpPost(appOrigin, ""))
	if status != http.StatusUnauthorized || h.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Errorf("no token from the allowed origin: %d %v", status, accessHeaders(h))
	}
	status, h, _ = do(t, "POST", ts.URL+"/api/list_sessions", "{}", map[string]string{"Origin": appOrigin, "Sec-Fetch-Site": "cross-site", "Authorization": "Bearer tok"})
	if status != http.StatusOK || h.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Errorf("/api from the allowed origin: %d %v", status, accessHeaders(h))
	}

	// Any other origin gets no CORS at all, and the guard refuses it.
	for _, origin := range []string{"https://evil.example", "http://app.example:3001", "null"} {
		status, h, _ := do(t, "OPTIONS", ts.URL+"/mcp", "", map[string]string{"Origin": origin, "Sec-Fetch-Site": "cross-site", "Access-Control-Request-Method": "POST"})
		if status != http.StatusForbidden || len(accessHeaders(h)) > 0 {
			t.Errorf("preflight from %s: %d %v", origin, status, accessHeaders(h))
		}
		status, h, _ = do(t, "POST", ts.URL+"/mcp", initialize, mcpPost(origin, "tok"))
		if status != http.StatusForbidden || len(accessHeaders(h)) > 0 {
			t.Errorf("POST from %s: %d %v", origin, status, accessHeaders(h))
		}
	}
	// Clients outside browsers, and the listener's own pages, need none.
	for _, origin := range []string{"", ts.URL} {
		status, h, _ := do(t, "POST", ts.URL+"/api/list_sessions", "{}", map[string]string{"Origin": origin, "Authorization": "Bearer tok"})
		if status != http.StatusOK || len(accessHeaders(h)) > 0 {
			t.Errorf("origin %q: %d %v", origin, status, accessHeaders(h))
		}
	}
}

func TestListenAllowsOrigins(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	l := listen(t, svc, Options{Addr: "127.0.0.1:0", Origins: []string{appOrigin + "/"}})
	status, h, _ := do(t, "OPTIONS", l.Addr(), "", map[string]string{"Origin": appOrigin, "Access-Control-Request-Method": "POST"})
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Errorf("preflight to a listener allowing %s: %d %v", appOrigin, status, accessHeaders(h))
	}
	for _, bad := range []string{"*", "app.example", "ftp://app.example", "http://app.example/path", "http://", ""} {
		l, err := Listen(faced(svc, Options{Addr: "127.0.0.1:0", Origins: []string{bad}}))
		if err == nil {
			l.Close()
			t.Errorf("Listen allowed the origin %q", bad)
		} else if !errors.Is(err, ErrBadOrigin) {
			t.Errorf("origin %q: %v, want ErrBadOrigin", bad, err)
		}
	}
}
