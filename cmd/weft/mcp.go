package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/mcpserver"
	"weft/ops/proxy"
	"weft/ops/relay"
	"weft/ops/tools"
	"weft/store"
	"weft/store/boltstore"
)

// listenConfig is what the root flags say about the embedded listener.
type listenConfig struct {
	addr  string // --mcp-addr; empty means the default
	off   bool   // --no-mcp
	token string // --token, else $WEFT_TOKEN: the bearer token agents must send
	// origins are the browser origins allowed to call, with CORS
	// (--allow-origin).
	origins []string
	// maxResult is --max-result-tokens (mcpserver.Options.MaxResultTokens).
	maxResult int
	// upstreams are where the listener's context proxy sends requests.
	upstreams proxy.Upstreams
	// logger is the TUI's log file; nil logs nothing.
	logger *slog.Logger
}

// options are the listener's options over svc, with the faces it
// serves: every flag the listener takes reaches it through here,
// whichever command starts it. The MCP server is given back too, for
// the TUI to count its agents.
func (lc listenConfig) options(svc *ops.Service) (listen.Options, *mcpserver.Server) {
	srv := mcpserver.New(tools.Local{Service: svc}, mcpserver.Options{Logger: lc.logger, MaxResultTokens: lc.maxResult})
	px := proxy.New(svc, proxy.Options{Upstreams: lc.upstreams, Logger: lc.logger})
	return listen.Options{
		Addr: lc.addr, Token: lc.token, Origins: lc.origins, Logger: lc.logger,
		AddrFile: addrFileOf(svc.Store().Path()), Entry: httpx.MCPPath,
		Faces: []httpx.Face{srv.Face(), relay.HolderFace(svc, lc.logger), px.Face()},
	}, srv
}

// embedded is the TUI's listener, as its status bar shows it: where
// agents connect, and how many are connected.
type embedded struct {
	*listen.Listener
	mcp *mcpserver.Server
}

// Agents counts the MCP sessions connected now.
func (e embedded) Agents() int { return e.mcp.Agents() }

// start starts the embedded listener, or returns nil when it is off. It
// logs to the TUI's log file, never the screen the TUI owns.
func (lc listenConfig) start(svc *ops.Service) (*embedded, error) {
	if lc.off {
		return nil, nil
	}
	o, srv := lc.options(svc)
	l, err := listen.Listen(o)
	if errors.Is(err, listen.ErrNeedsToken) {
		return nil, fmt.Errorf("the MCP listener: %w (give a token with --token or WEFT_TOKEN, or --no-mcp starts without the listener)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("the MCP listener: %w (--no-mcp starts without it)", err)
	}
	return &embedded{l, srv}, nil
}

// mcpCommand is weft mcp.
func (a *app) mcpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio, for clients that launch it",
		Long: `mcp speaks MCP over standard input and output, for clients that launch their servers; diagnostics go to stderr.

When another weft holds the file, mcp relays to that weft's listener (it needs the token that weft requires: --token or $WEFT_TOKEN). Otherwise it also listens on a free loopback port (unless --no-mcp), so that a second weft mcp on the same file can relay to it.`,
		Example: `
claude mcp add weft -- weft --db ~/threads.db mcp`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("mcp takes no arguments (got %q): MCP clients launch weft --db FILE mcp", args[0])
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveMCP(cmd.Context(), a.db, a.lockTimeout(), a.listen(), a.stderr)
		},
	}
	a.describeFlag(cmd, "mcp-addr", "where weft mcp listens for other wefts to relay to it (default: a free loopback port)")
	a.describeFlag(cmd, "no-mcp", "do not listen for other wefts")
	a.describeFlag(cmd, "token", "bearer token of that listener, and for the weft this one relays to (default $WEFT_TOKEN)")
	a.describeFlag(cmd, "allow-origin", "a browser `ORIGIN` (scheme://host[:port]) allowed to call that listener, with CORS; repeatable")
	a.describeFlag(cmd, "upstream-anthropic", "where that listener's context proxy sends Messages API requests")
	a.describeFlag(cmd, "upstream-openai", "where that listener's context proxy sends Chat Completions and Responses requests")
	a.hideFlags(cmd, "theme")
	return cmd
}

// serveMCP serves MCP over stdin and stdout. When another weft holds the
// database it relays to that weft's listener instead; otherwise it also
// listens on a free loopback port (unless lc.off) so that a second weft
// mcp on the same file can relay to it. It waits up to timeout (0: the
// store's default) for another process to let go of the file.
func serveMCP(ctx context.Context, db string, timeout time.Duration, lc listenConfig, stderr io.Writer) error {
	// stdout is the protocol: diagnostics go to stderr, warnings only.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	st, err := openStore(db, boltstore.Options{Timeout: timeout})
	if errors.Is(err, store.ErrInUse) {
		url := listen.ReadAddrFile(db)
		if url == "" {
			return fmt.Errorf("%w; it does not listen for agents (started with --no-mcp?), so weft mcp cannot relay to it", err)
		}
		// The weft relayed to may stop, or start again on another port:
		// the relay follows the address file, and takes the file over
		// once nobody holds it.
		var (
			mu   sync.Mutex
			held *heldFile
		)
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			held.close()
		}()
		remote, err := relay.Dial(url, relay.Options{
			Token:      lc.token,
			Rediscover: func() string { return listen.ReadAddrFile(db) },
			Takeover: func() (*ops.Service, error) {
				st, err := boltstore.Open(db, boltstore.Options{Timeout: heldWait})
				if err != nil {
					return nil, err
				}
				svc := newService(st, logger)
				mu.Lock()
				held = &heldFile{st: st, l: listenForOthers(svc, lc, logger)}
				mu.Unlock()
				return svc, nil
			},
			Logger: logger,
		})
		if err != nil {
			return fmt.Errorf("%s.addr: %w", db, err)
		}
		return mcpserver.New(remote, mcpserver.Options{Logger: logger, MaxResultTokens: lc.maxResult}).ServeStdio(ctx)
	}
	if err != nil {
		return err
	}
	held := &heldFile{st: st}
	defer held.close()
	svc := newService(st, logger)
	held.l = listenForOthers(svc, lc, logger)
	return mcpserver.New(tools.Local{Service: svc}, mcpserver.Options{Logger: logger, MaxResultTokens: lc.maxResult}).ServeStdio(ctx)
}

// heldFile is the file weft mcp opened, with its listener for other
// wefts (nil when it has none).
type heldFile struct {
	st store.Store
	l  *listen.Listener
}

// close lets the file go, the listener first; a nil heldFile holds
// nothing.
func (h *heldFile) close() {
	if h == nil {
		return
	}
	if h.l != nil {
		_ = h.l.Close()
	}
	_ = h.st.Close()
}

// listenForOthers listens on a free loopback port (unless lc.off) so
// that a second weft mcp on the same file can relay to this one; nil
// when it does not.
func listenForOthers(svc *ops.Service, lc listenConfig, logger *slog.Logger) *listen.Listener {
	if lc.off {
		return nil
	}
	if lc.addr == "" {
		lc.addr = "127.0.0.1:0"
	}
	lc.logger = logger
	o, _ := lc.options(svc)
	l, err := listen.Listen(o)
	if err != nil {
		// Relaying is a convenience for other wefts; serving this client
		// matters more.
		logger.Warn("not listening for other wefts", "error", err)
		return nil
	}
	return l
}
