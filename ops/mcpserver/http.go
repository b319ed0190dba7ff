package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/httpx"
	"weft/ops/reads"
	"weft/ops/sessionmatch"
	"weft/ops/tools"
)

const (
	// SessionTimeout closes MCP sessions that sent nothing for this long,
	// so clients that vanish without a DELETE do not pile up.
	SessionTimeout = 30 * time.Minute
)

// Face is what this server serves on the listener (ops/listen):
//
//	/mcp             MCP over Streamable HTTP
//	POST /api/TOOL   the tool's arguments as a JSON body; its JSON result
//	GET  /api        the tools, with their argument schemas
//	GET  /healthz    liveness, version and counts
//	GET  /events     the writes, for the wefts relaying to this one
//	POST /sessions/page, /sessions/match   session records, for their pickers
//
// When the listener closes, the server ends its MCP sessions and streams
// of events, which would hold it open.
func (s *Server) Face() httpx.Face {
	timeout := s.sessionTimeout
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
	return httpx.Face{
		Mounts: []httpx.Mount{
			{Pattern: httpx.MCPPath, Handler: checkJSONRPC(s.endingSessions(kept)), Serves: httpx.MCPPath + " (MCP)"},
			{Pattern: httpx.APIPath, Handler: http.HandlerFunc(s.serveTool), Serves: "POST /api/TOOL"},
			{Pattern: "/api", Handler: http.HandlerFunc(s.serveToolList), Serves: "GET /api"},
			{Pattern: "/healthz", Handler: http.HandlerFunc(s.serveHealth), Serves: "GET /healthz"},
			{Pattern: httpx.EventsPath, Handler: http.HandlerFunc(s.serveEvents)},
			{Pattern: httpx.SessionsPagePath, Handler: serveRead(s, sessionmatch.PageOf)},
			{Pattern: httpx.SessionsMatchPath, Handler: serveRead(s, sessionmatch.Match)},
		},
		Closing: s.endStreams,
	}
}

// endStreams ends the streams of events and the MCP sessions, whose
// streams would hold a listener's shutdown open.
func (s *Server) endStreams() {
	s.closeOnce.Do(func() { close(s.closing) })
	for ss := range s.mcp.Sessions() {
		s.closeSession(ss)
	}
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
	ctx, err := apiContext(r)
	if err != nil {
		httpx.WriteError(w, httpx.StatusOf(err), err.Error())
		return
	}
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

// schema is the layout version of the store the backend holds (0 for a
// backend that holds none).
func (s *Server) schema() uint32 {
	if sc, ok := s.backend.(interface{ Schema() uint32 }); ok {
		return sc.Schema()
	}
	return 0
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpx.WriteError(w, http.StatusMethodNotAllowed, "use GET /healthz")
		return
	}
	var list reads.ListSessionsResult
	if err := s.callTool(r.Context(), "list_sessions", reads.ListSessionsArgs{Limit: 1}, &list); err != nil {
		httpx.WriteJSON(w, http.StatusServiceUnavailable, struct {
			health
			Error string `json:"error"`
		}{health{Version: Version(), Schema: s.schema(), Tools: len(tools.All())}, err.Error()})
		return
	}
	httpx.WriteJSON(w, http.StatusOK, health{OK: true, Version: Version(), Schema: s.schema(), Tools: len(tools.All()), Sessions: list.Total, Agents: s.Agents()})
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
