// Package mcpserver is weft's protocol face: the tools of the registry
// (ops/tools) over MCP (stdio and Streamable HTTP), the plain HTTP API
// that mirrors them (POST /api/<tool>), and what the wefts relaying to
// this one read (/events, /sessions/page, /sessions/match). Its HTTP
// paths are a Face the listener (ops/listen) serves.
//
// Every way in goes through one tools.Backend: in-process over an
// *ops.Service (tools.Local), or, for a weft mcp that finds the file held
// by a running weft, over that weft's HTTP API (ops/relay's Remote).
// Tools decode their arguments with tools.Tool.Decode, so MCP, HTTP and
// weft call give the same errors for the same mistakes.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/httpx"
	"weft/ops/summary"
	"weft/ops/tools"
)

// Server is weft's MCP server over one backend. It is safe for concurrent
// use; one Server serves any number of MCP sessions and HTTP requests.
type Server struct {
	mcp     *mcp.Server
	backend tools.Backend
	logger  *slog.Logger
	news    *news
	// closing is closed when the listener serving this server closes,
	// to end the streams that would hold its shutdown open.
	closing   chan struct{}
	closeOnce sync.Once
	calls     callsInFlight
	// sessionTimeout is Options.SessionTimeout.
	sessionTimeout time.Duration
	// maxResultTokens is Options.MaxResultTokens.
	maxResultTokens int
}

// Options configure a Server.
type Options struct {
	// Logger receives the server's diagnostics; nil discards them. On
	// stdio, stdout is the protocol: never log there.
	Logger *slog.Logger
	// SessionTimeout overrides SessionTimeout for idle MCP sessions over
	// HTTP; negative means never.
	SessionTimeout time.Duration
	// MaxResultTokens is a read's budget when its call gives no
	// max_tokens, for every client; 0: the budget that fits the client
	// that called (resultCapFor).
	MaxResultTokens int
}

// New returns a server exposing every tool of the registry, the session
// resources and the startup prompt, over b: tools.Local over a Service,
// or the weft that holds the file (a relay).
func New(b tools.Backend, opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{backend: b, logger: logger, closing: make(chan struct{}), sessionTimeout: opts.SessionTimeout, maxResultTokens: opts.MaxResultTokens}
	sopts := &mcp.ServerOptions{
		Instructions:      serverInstructions,
		Logger:            logger,
		CompletionHandler: s.complete,
	}
	s.addNews(sopts)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "weft", Title: "weft", Version: Version()}, sopts)
	s.mcp.AddReceivingMiddleware(encodeToolResults, errorCodes, s.newsMiddleware, s.sessionResources)
	for _, t := range tools.All() {
		s.mcp.AddTool(mcpTool(t), s.toolHandler(t))
	}
	s.addResources()
	s.addPrompts()
	return s
}

const serverInstructions = `weft holds LLM conversation threads and reversible edits over them (tag, digest, revise, snip, resequence, insert).
Indices are 0-based positions in the effective thread (the stored messages with the active operations applied); ranges are inclusive.
session_id is optional everywhere: the default is the session open in weft's TUI, else the most recently updated one.
Pass expected_version (from any result's version) to have an edit refused, rather than misapplied, when the thread changed meanwhile.`

// MCP returns the underlying SDK server, for transports this package does
// not wire itself.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Agents counts the MCP sessions connected now.
func (s *Server) Agents() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}

func (s *Server) serve(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // asked to stop: not a failure
	}
	return err
}

// Version is weft's version as the build recorded it: the module version
// of an installed release, else "dev+<commit>" (".dirty" with changes)
// for a build from a checkout, else "dev".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	// A build from a checkout: the commit it was built from.
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev+" + rev[:min(len(rev), 12)]
	if dirty {
		v += ".dirty"
	}
	return v
}

// mcpTool describes a registry tool to MCP clients.
func mcpTool(t *tools.Tool) *mcp.Tool {
	sc := schemasOf(t)
	tool := &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		Annotations: &mcp.ToolAnnotations{
			Title:           toolTitle(t.Name),
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: new(t.Destructive),
			IdempotentHint:  t.Idempotent,
			OpenWorldHint:   new(t.OpenWorld),
		},
	}
	if sc.err != nil {
		// A type the generator cannot describe still gets a usable tool:
		// Decode checks the arguments either way.
		tool.InputSchema = &jsonschema.Schema{Type: "object"}
	} else {
		tool.InputSchema = sc.input
		if sc.output != nil {
			tool.OutputSchema = sc.output
		}
	}
	return tool
}

// toolTitle makes a display title from a tool name: get_turns_since ->
// "Get turns since".
func toolTitle(name string) string {
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// toolHandler adapts a registry tool to MCP: the calling client is the
// author of any edit, and a client that can sample lends its model.
func (s *Server) toolHandler(t *tools.Tool) mcp.ToolHandler {
	hasOutput := schemasOf(t).output != nil
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, done := s.inFlight(ctx, req.Session)
		defer done()
		ctx = s.callContext(ctx, req)
		sp := newSampling(req)
		if sp != nil {
			ctx = summary.WithSampler(ctx, sp.sample)
		}
		out, value, err := s.backend.Call(s.withClientCap(ctx, req), t, req.Params.Arguments)
		if sp != nil && len(sp.pending) > 0 {
			// The tool asked the client's model for something it has not
			// answered yet: ask, and the client calls again with the
			// answers (the result of this run is dropped).
			return &mcp.CallToolResult{InputRequests: sp.pending}, nil
		}
		if err != nil {
			logFailure(s.logger, ctx, t.Name, err)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		// The result goes twice on the wire, as text and as structured
		// content: a tool with an output schema must give the structured
		// content, and the spec asks for its JSON as text too, for the
		// clients that read only text. A client feeds its model one of
		// them: Claude Code 2.1.330 the structured content, over stdio and
		// over HTTP (measured with .ci/claude-code and the two made to
		// differ; its issues say the same, anthropics/claude-code#55677),
		// other clients the text. Both are the same JSON, so whichever a
		// client feeds, the model sees the result once, and a read's
		// max_tokens and result_tokens (ops/fit.go) count exactly that. The
		// wire carries twice as much; a client's cap counts what reaches
		// the model.
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}
		if hasOutput {
			// The value, where the backend has it, is encoded again into
			// the same bytes as out (the same encoder, the same options:
			// toolWire) in half the time the check of out as raw JSON
			// takes.
			res.StructuredContent = out
			if value != nil {
				res.StructuredContent = value
			}
		}
		return res, nil
	}
}

// clientName is the name the client gave in initialize, cleaned for the
// operation log; "mcp" when it gave none.
func clientName(req *mcp.CallToolRequest) string {
	if info := req.ClientInfo(); info != nil {
		if name := httpx.CleanAuthor(info.Name); name != "" {
			return name
		}
	}
	return "mcp"
}

// defaultSampleTokens is the completion budget when a tool asks for none.
const defaultSampleTokens = 1024

// multiRoundTripVersion is the first protocol version in which a server
// may not send requests of its own while serving one: it returns input
// requests, and the client calls again with the answers.
const multiRoundTripVersion = "2026-07-28"

// errNeedsSample stops a tool that asked the client's model for a text the
// client has not given yet.
var errNeedsSample = errors.New("waiting for the client's model")

// sampling lends a tool call the client's model.
//
// Clients of protocol versions before 2026-07-28 are asked directly
// (sampling/createMessage while the call is open). Later clients cannot be:
// the first run of the tool records what it asks, the call returns those
// as input requests, and the client calls again with the answers, which
// the next run finds in order. Tools must therefore ask before they write.
type sampling struct {
	session   *mcp.ServerSession
	multi     bool
	responses mcp.InputResponseMap
	asked     int
	pending   mcp.InputRequestMap
}

// newSampling returns the call's sampling, or nil when the client did not
// declare the capability.
func newSampling(req *mcp.CallToolRequest) *sampling {
	caps := req.ClientCapabilities()
	//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
	if caps == nil || caps.Sampling == nil || req.Session == nil {
		return nil
	}
	return &sampling{
		session:   req.Session,
		multi:     req.ProtocolVersion() >= multiRoundTripVersion,
		responses: req.Params.InputResponses,
	}
}

func (sp *sampling) sample(ctx context.Context, prompt string, maxTokens int) (string, string, error) {
	if maxTokens <= 0 {
		maxTokens = defaultSampleTokens
	}
	//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
	params := &mcp.CreateMessageParams{
		//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}},
		MaxTokens: int64(maxTokens),
	}
	if !sp.multi {
		//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
		res, err := sp.session.CreateMessage(unrelatedOnceDone{ctx}, params)
		if err != nil {
			return "", "", fmt.Errorf("the client's model did not answer: %w", err)
		}
		return sampledText(res.Content, res.Model)
	}
	key := fmt.Sprintf("sample-%d", sp.asked)
	sp.asked++
	//lint:ignore SA1019 sampling lends tools the client's model; the SDK has no successor to it
	if res, ok := sp.responses[key].(*mcp.CreateMessageWithToolsResult); ok {
		var content mcp.Content
		if len(res.Content) > 0 {
			content = res.Content[0]
		}
		return sampledText(content, res.Model)
	}
	if sp.pending == nil {
		sp.pending = mcp.InputRequestMap{}
	}
	sp.pending[key] = params
	return "", "", errNeedsSample
}

func sampledText(c mcp.Content, model string) (string, string, error) {
	text, ok := c.(*mcp.TextContent)
	if !ok || strings.TrimSpace(text.Text) == "" {
		return "", "", fmt.Errorf("the client's model answered without text (%T)", c)
	}
	return text.Text, model, nil
}
