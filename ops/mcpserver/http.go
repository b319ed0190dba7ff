package mcpserver

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/tools"
)

const (
	// SessionTimeout closes MCP sessions that sent nothing for this long,
	// so clients that vanish without a DELETE do not pile up.
	SessionTimeout = 30 * time.Minute
)

// HandlerOptions configure Handler.
type HandlerOptions struct {
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN).
	Token string
	// Origins are extra browser origins allowed to call (scheme://host:port),
	// with CORS (cors.go); a page served by the listener itself is always
	// allowed.
	Origins []string
	// SessionTimeout overrides SessionTimeout; negative means never.
	SessionTimeout time.Duration
	// ReadTimeout overrides httpx.ReadTimeout for request bodies.
	ReadTimeout time.Duration
	// Upstreams are where the context proxy (/v1/...) sends requests.
	Upstreams Upstreams
}

// Handler serves, behind one guard (Host and Origin checks, the bearer
// token, the body cap, the read timeout):
//
//	/mcp             MCP over Streamable HTTP
//	POST /api/TOOL   the tool's arguments as a JSON body; its JSON result
//	GET  /api        the tools, with their argument schemas
//	GET  /healthz    liveness, version and counts
//	POST /outline    {"session_id"}: what weft show prints around the messages (Outline)
//	POST /export     ExportArgs as JSON: the export, streamed; notes as trailers
//	POST /import     ?format=F&session=S, the file as the body: an ImportReport
//	/v1/...          the context proxy (proxy.go), also under /s/SESSION/
//
// The last three are how a second weft on a held file runs weft show,
// export and import through the weft that holds it.
func (s *Server) Handler(o HandlerOptions) http.Handler {
	timeout := o.SessionTimeout
	switch {
	case timeout == 0:
		timeout = SessionTimeout
	case timeout < 0:
		timeout = 0
	}
	// Sessions expire by weft's clock, not the SDK's (sessions.go).
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: httpx.MaxBodyBytes,
		Logger:              s.logger,
		EventStore:          mcp.NewMemoryEventStore(nil),
	})
	keeper := newSessionKeeper(s, timeout)
	kept := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { keeper.serve(mcpHandler, codedWriter{w}, r) })
	mux := http.NewServeMux()
	mux.Handle("/mcp", checkJSONRPC(s.endingSessions(kept)))
	mux.HandleFunc("/api", s.serveToolList)
	mux.HandleFunc(httpx.APIPath, s.serveTool)
	mux.HandleFunc("/healthz", s.serveHealth)
	mux.HandleFunc(httpx.EventsPath, s.serveEvents)
	mux.HandleFunc(outlinePath, s.serveOutline)
	mux.HandleFunc(exportPath, s.serveExport)
	mux.HandleFunc(importPath, s.serveImport)
	mux.HandleFunc(httpx.SessionsPagePath, serveRead(s, (*ops.Service).SessionPage))
	mux.HandleFunc(httpx.SessionsMatchPath, serveRead(s, (*ops.Service).MatchSessions))
	proxy := newProxy(s, o.Upstreams)
	mux.Handle("/v1/", proxy)
	mux.Handle("/s/", proxy)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, http.StatusNotFound, fmt.Sprintf("nothing at %s: weft serves /mcp (MCP), POST /api/TOOL, GET /api, GET /healthz, POST /outline, /export and /import, and the context proxy at /v1/messages and /v1/chat/completions", r.URL.Path))
	})
	// A client's token is read without the blanks around it (bearer), so
	// the listener's is too.
	token := strings.TrimSpace(o.Token)
	origins := originSet(o.Origins)
	g := &guard{next: mux, token: tokenHash(token), hasToken: token != "", origins: origins, readTimeout: cmp.Or(o.ReadTimeout, httpx.ReadTimeout)}
	return cors{next: g, origins: origins}
}

// guard checks what every request must pass before any handler runs.
type guard struct {
	next     http.Handler
	token    [sha256.Size]byte
	hasToken bool
	origins  map[string]bool
	// readTimeout is the grace a request body has (see timedBody).
	readTimeout time.Duration
}

func tokenHash(t string) [sha256.Size]byte { return sha256.Sum256([]byte(t)) }

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hasBody := r.Body != nil && r.Body != http.NoBody
	if hasBody {
		// Timed from now, before any refusal: see timedBody.
		r.Body = httpx.TimedBody(w, r.Body, g.readTimeout)
	}
	proxied := isProxyPath(r.URL.Path)
	refuse := httpx.WriteError
	if proxied {
		// The proxy's clients read errors in their provider's shape.
		refuse = func(w http.ResponseWriter, status int, msg string) { proxyError(w, proxyAPIOf(r), status, msg) }
	}
	if msg := g.foreign(r); msg != "" {
		refuse(w, http.StatusForbidden, msg)
		return
	}
	if g.hasToken {
		// Hashing first makes the comparison constant-time in the
		// length too. On the proxy's paths Authorization is the
		// client's key for its provider: the token comes in its own
		// header.
		got, ok := bearer(r)
		if proxied {
			got = strings.TrimSpace(r.Header.Get(ProxyTokenHeader))
			ok = got != ""
		}
		if h := tokenHash(got); !ok || subtle.ConstantTimeCompare(h[:], g.token[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
			msg := "this weft needs a bearer token: send Authorization: Bearer TOKEN (the --token or WEFT_TOKEN it was started with)"
			switch {
			case proxied && ok:
				msg = "wrong " + ProxyTokenHeader + ": send the --token or WEFT_TOKEN this weft was started with"
			case proxied:
				msg = "this weft needs its token: send " + ProxyTokenHeader + ": TOKEN (the --token or WEFT_TOKEN it was started with; Authorization goes to the provider)"
			case ok:
				msg = "wrong bearer token: send the --token or WEFT_TOKEN this weft was started with"
			}
			refuse(w, http.StatusUnauthorized, msg)
			return
		}
	}
	// An imported file is read as it comes: it may be far larger than
	// any other body.
	limit := int64(httpx.MaxBodyBytes)
	switch {
	case r.URL.Path == importPath:
		limit = MaxImportBytes
	case proxied:
		limit = MaxProxyBodyBytes
	}
	if r.ContentLength > limit {
		if proxied {
			proxyBodyError(w, proxyAPIOf(r), &http.MaxBytesError{Limit: limit})
			return
		}
		writeTooLargeFor(w, r.URL.Path)
		return
	}
	if hasBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	g.next.ServeHTTP(w, r)
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

// writeTooLargeFor refuses a body over the cap of the path it was sent
// to.
func writeTooLargeFor(w http.ResponseWriter, path string) {
	if path == importPath {
		httpx.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the file is larger than %d GB, more than a running weft takes: split it, or close that weft and import it directly", MaxImportBytes>>30))
		return
	}
	httpx.WriteTooLarge(w)
}

func (s *Server) serveTool(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, httpx.APIPath)
	if name == "" {
		s.serveToolList(w, r)
		return
	}
	tool, ok := tools.Lookup(name)
	if !ok {
		httpx.WriteError(w, http.StatusNotFound, fmt.Sprintf("no tool %q: GET /api lists the tools", name))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpx.WriteError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: call a tool with POST and its arguments as a JSON body", r.Method, r.URL.Path))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		httpx.BodyReadError(w, err)
		return
	}
	ctx := apiContext(r)
	out, _, err := s.backend.Call(ctx, tool, body)
	if err != nil {
		status := httpx.StatusOf(err)
		if status == http.StatusInternalServerError {
			logFailure(s.logger, ctx, name, err)
		}
		httpx.WriteError(w, status, err.Error())
		return
	}
	httpx.WriteJSONBody(w, http.StatusOK, out)
}

// toolInfo describes a tool at GET /api.
type toolInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Arguments   []string `json:"arguments"`
	ReadOnly    bool     `json:"read_only"`
	Destructive bool     `json:"destructive"`
	Idempotent  bool     `json:"idempotent"`
	OpenWorld   bool     `json:"open_world"`
	InputSchema any      `json:"input_schema"`
	Path        string   `json:"path"`
}

func (s *Server) serveToolList(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpx.WriteError(w, http.StatusMethodNotAllowed, "GET /api lists the tools; call one with POST /api/TOOL")
		return
	}
	all := tools.All()
	out := struct {
		Tools []toolInfo `json:"tools"`
	}{make([]toolInfo, 0, len(all))}
	for _, t := range all {
		args := t.ArgNames()
		if args == nil {
			args = []string{}
		}
		out.Tools = append(out.Tools, toolInfo{
			Name: t.Name, Description: t.Description, Arguments: args,
			ReadOnly: t.ReadOnly, Destructive: t.Destructive, Idempotent: t.Idempotent, OpenWorld: t.OpenWorld,
			InputSchema: mcpTool(t).InputSchema, Path: httpx.APIPath + t.Name,
		})
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// health is GET /healthz's answer.
type health struct {
	OK       bool   `json:"ok"`
	Version  string `json:"version"`
	Schema   uint32 `json:"schema"`
	Tools    int    `json:"tools"`
	Sessions int    `json:"sessions"`
	Agents   int    `json:"agents"`
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpx.WriteError(w, http.StatusMethodNotAllowed, "use GET /healthz")
		return
	}
	var list ops.ListSessionsResult
	if err := s.callTool(r.Context(), "list_sessions", ops.ListSessionsArgs{Limit: 1}, &list); err != nil {
		httpx.WriteJSON(w, http.StatusServiceUnavailable, struct {
			health
			Error string `json:"error"`
		}{health{Version: Version(), Schema: ops.SchemaVersion, Tools: len(tools.All())}, err.Error()})
		return
	}
	httpx.WriteJSON(w, http.StatusOK, health{OK: true, Version: Version(), Schema: ops.SchemaVersion, Tools: len(tools.All()), Sessions: list.Total, Agents: s.Agents()})
}

// checkJSONRPC answers a POST to /mcp whose body is not a JSON-RPC message
// the SDK can take with a JSON-RPC error (the SDK answers such bodies in
// plain text), so every client can read why; good messages go on to the
// SDK unchanged. What the SDK still refuses in plain text (an unknown
// method, a missing "params", a batch under a protocol without batches)
// is turned into a JSON-RPC error too.
func checkJSONRPC(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost && r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				httpx.BodyReadError(w, err)
				return
			}
			if p := jsonrpcProblem(body); p != nil {
				httpx.WriteJSONBody(w, http.StatusBadRequest, jsonrpcError(p.id, p.code, p.msg))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		sw := &sdkRefusal{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		switch {
		case !sw.refused:
		case sw.status == http.StatusNotFound:
			// A session that is not (or no longer) there: the client
			// starts a new one.
			httpx.WriteJSONBody(w, http.StatusNotFound, jsonrpcError(callID(body), codeSessionNotFound,
				"session not found: it ended or expired (send initialize, without Mcp-Session-Id, to start a new one)"))
		default:
			code, msg := sdkRefusalError(strings.TrimSpace(sw.text.String()))
			httpx.WriteJSONBody(w, http.StatusBadRequest, jsonrpcError(callID(body), code, msg))
		}
	})
}

// sdkNotHandled starts the SDK's refusal of a method it does not serve
// (its jsonrpc2.ErrNotHandled, which it does not export).
const sdkNotHandled = "JSON RPC not handled"

// sdkRefusalError turns the text of a plain-text 400 of the SDK's into a
// JSON-RPC error code and message.
func sdkRefusalError(text string) (int, string) {
	if rest, ok := strings.CutPrefix(text, sdkNotHandled+": "); ok {
		method := strings.TrimSuffix(rest, " unsupported")
		return jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %s is not a method of this MCP server", method)
	}
	if text == "" {
		text = "the request was refused"
	}
	return jsonrpc.CodeInvalidRequest, "invalid request: " + text
}

// callID is the id of a body that is one request, or nil.
func callID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || idProblem(m.ID) != "" {
		return nil
	}
	return m.ID
}

// sdkRefusal holds back a plain-text 400 of the SDK's, so that checkJSONRPC
// can answer it as a JSON-RPC error; anything else goes straight through.
//
// It also adds weft's retry time to the priming events of the SDK's
// streams (withRetry).
type sdkRefusal struct {
	http.ResponseWriter
	wroteHeader bool
	refused     bool
	status      int
	text        bytes.Buffer
}

func (w *sdkRefusal) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if (code == http.StatusBadRequest || code == http.StatusNotFound) && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.refused, w.status = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sdkRefusal) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.refused {
		if w.text.Len() < 4096 {
			w.text.Write(p)
		}
		return len(p), nil
	}
	if _, err := w.ResponseWriter.Write(withRetry(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// FlushError flushes what went through (http.ResponseController finds it);
// a refusal held back stays held.
func (w *sdkRefusal) FlushError() error {
	if w.refused {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the connection's own writer.
func (w *sdkRefusal) Unwrap() http.ResponseWriter { return w.ResponseWriter }
