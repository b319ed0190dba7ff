package listen

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"weft/ops/httpx"
)

// Handler serves o.Faces on one mux, behind one guard (Host and Origin
// checks, the bearer token, the body cap, the read timeout) and CORS for
// o.Origins: what Listen serves, for callers that bind their own
// listener (tests).
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	mounts := map[string]*httpx.Mount{}
	var serves []string
	for _, f := range o.Faces {
		for i := range f.Mounts {
			m := &f.Mounts[i]
			mux.Handle(m.Pattern, m.Handler)
			mounts[m.Pattern] = m
			if m.Serves != "" {
				serves = append(serves, m.Serves)
			}
		}
	}
	nothing := fmt.Sprintf("weft serves %s", list(serves))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, http.StatusNotFound, fmt.Sprintf("nothing at %s: %s", r.URL.Path, nothing))
	})
	// A client's token is read without the blanks around it (bearer), so
	// the listener's is too.
	token := strings.TrimSpace(o.Token)
	origins := originSet(o.Origins)
	g := &guard{mux: mux, mounts: mounts, token: tokenHash(token), hasToken: token != "", origins: origins, readTimeout: cmp.Or(o.ReadTimeout, httpx.ReadTimeout)}
	return cors{next: g, origins: origins}
}

// list says "a, b and c", or "a, b, and c" when an item has an "and" of
// its own.
func list(items []string) string {
	switch len(items) {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	}
	last := " and "
	for _, it := range items {
		if strings.Contains(it, " and ") {
			last = ", and "
		}
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// guard checks what every request must pass before any face sees it,
// by the rules of the mount the request goes to.
type guard struct {
	mux      *http.ServeMux
	mounts   map[string]*httpx.Mount
	token    [sha256.Size]byte
	hasToken bool
	origins  map[string]bool
	// readTimeout is the grace a request body has (httpx.TimedBody).
	readTimeout time.Duration
}

func tokenHash(t string) [sha256.Size]byte { return sha256.Sum256([]byte(t)) }

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hasBody := r.Body != nil && r.Body != http.NoBody
	if hasBody {
		// Timed from now, before any refusal: see httpx.TimedBody.
		r.Body = httpx.TimedBody(w, r.Body, g.readTimeout)
	}
	_, pattern := g.mux.Handler(r)
	m := g.mounts[pattern]
	if m == nil {
		m = &httpx.Mount{}
	}
	refuse := func(w http.ResponseWriter, status int, msg string) { httpx.WriteError(w, status, msg) }
	if m.Refuse != nil {
		refuse = func(w http.ResponseWriter, status int, msg string) { m.Refuse(w, r, status, msg) }
	}
	if msg := g.foreign(r); msg != "" {
		refuse(w, http.StatusForbidden, msg)
		return
	}
	if g.hasToken {
		// Hashing first makes the comparison constant-time in the
		// length too. Where Authorization is someone else's, the token
		// comes in a header of its own.
		got, ok := bearer(r)
		if m.TokenHeader != "" {
			got = strings.TrimSpace(r.Header.Get(m.TokenHeader))
			ok = got != ""
		}
		if h := tokenHash(got); !ok || subtle.ConstantTimeCompare(h[:], g.token[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
			refuse(w, http.StatusUnauthorized, tokenRefusal(m, ok))
			return
		}
	}
	limit := cmp.Or(m.MaxBody, httpx.MaxBodyBytes)
	if r.ContentLength > limit {
		if m.TooLarge != nil {
			m.TooLarge(w, r)
		} else {
			httpx.WriteTooLarge(w)
		}
		return
	}
	if hasBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	g.mux.ServeHTTP(w, r)
}

// tokenRefusal says why a request without the right token is refused
// (given: it sent one), and what to send.
func tokenRefusal(m *httpx.Mount, given bool) string {
	switch {
	case m.TokenHeader != "" && given:
		return "wrong " + m.TokenHeader + ": send the --token or WEFT_TOKEN this weft was started with"
	case m.TokenHeader != "" && m.TokenWhy != "":
		return "this weft needs its token: send " + m.TokenHeader + ": TOKEN (the --token or WEFT_TOKEN it was started with; " + m.TokenWhy + ")"
	case m.TokenHeader != "":
		return "this weft needs its token: send " + m.TokenHeader + ": TOKEN (the --token or WEFT_TOKEN it was started with)"
	case given:
		return "wrong bearer token: send the --token or WEFT_TOKEN this weft was started with"
	}
	return "this weft needs a bearer token: send Authorization: Bearer TOKEN (the --token or WEFT_TOKEN it was started with)"
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// foreign says why a request comes from somewhere it must not, or "".
//
// A browser page on another site must not reach the listener, not even
// with GET (an MCP GET opens an event stream): its Origin must be the
// listener's own. DNS rebinding makes a foreign page same-origin with a
// foreign Host name, so a listener on loopback also insists that Host
// names loopback. Clients outside browsers send no Origin and pass.
func (g *guard) foreign(r *http.Request) string {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if isLoopbackHostPort(local.String()) && !isLoopbackHostPort(r.Host) {
			return fmt.Sprintf("Host %q is not this listener's loopback address", r.Host)
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		if origin := r.Header.Get("Origin"); origin == "" || !g.origins[strings.ToLower(origin)] {
			return "cross-site browser requests are refused"
		}
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	if g.origins[strings.ToLower(origin)] {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Sprintf("Origin %q is not this listener's", origin)
	}
	if !sameHost(u, r.Host) {
		return fmt.Sprintf("Origin %q is not this listener's (%s)", origin, r.Host)
	}
	return ""
}

// sameHost reports whether an origin names the host:port the request was
// sent to.
func sameHost(origin *url.URL, host string) bool {
	oh, op := origin.Hostname(), origin.Port()
	if op == "" {
		op = map[string]string{"http": "80", "https": "443"}[origin.Scheme]
	}
	rh, rp, err := net.SplitHostPort(host)
	if err != nil {
		rh, rp = host, "80"
	}
	return strings.EqualFold(oh, strings.Trim(rh, "[]")) && op == rp
}

// isLoopbackHostPort reports whether host[:port] names the loopback
// interface.
func isLoopbackHostPort(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return isLoopbackHost(strings.Trim(host, "[]"))
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
