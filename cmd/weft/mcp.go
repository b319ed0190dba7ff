package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"weft/ops"
	"weft/ops/mcpserver"
	"weft/store"
)

// listenConfig is what the root flags say about the embedded listener.
type listenConfig struct {
	addr string // --mcp-addr; empty means the default
	off  bool   // --no-mcp
}

// start starts the embedded listener, or returns nil when it is off. It
// logs nothing: the TUI owns the screen.
func (lc listenConfig) start(svc *ops.Service) (*mcpserver.Listener, error) {
	if lc.off {
		return nil, nil
	}
	l, err := mcpserver.Listen(svc, mcpserver.ListenOptions{Addr: lc.addr, Token: os.Getenv("WEFT_TOKEN")})
	if errors.Is(err, mcpserver.ErrNeedsToken) {
		return nil, fmt.Errorf("the MCP listener: %w (give a token with --token or WEFT_TOKEN, or --no-mcp starts without the listener)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("the MCP listener: %w (--no-mcp starts without it)", err)
	}
	return l, nil
}

// cmdMCP serves MCP over stdin and stdout. When another weft holds the
// database it relays to that weft's listener instead; otherwise it also
// listens on a free loopback port (unless --no-mcp) so that a second
// weft mcp on the same file can relay to it.
func cmdMCP(ctx context.Context, db string, args []string, lc listenConfig, stderr io.Writer) error {
	if len(args) > 0 {
		return usageErr("mcp takes no arguments (got %q): MCP clients launch weft --db FILE mcp", args[0])
	}
	// stdout is the protocol: diagnostics go to stderr, warnings only.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// A weft that left its address is most likely running: find out
	// quickly rather than wait the whole lock timeout to relay to it.
	var timeout time.Duration
	if mcpserver.ReadAddrFile(db) != "" {
		timeout = 200 * time.Millisecond
	}
	st, err := store.Open(db, store.Options{Timeout: timeout})
	if errors.Is(err, store.ErrInUse) {
		url := mcpserver.ReadAddrFile(db)
		if url == "" {
			return fmt.Errorf("%w; it does not listen for agents (started with --no-mcp?), so weft mcp cannot relay to it", err)
		}
		relay, err := mcpserver.NewRelay(url, os.Getenv("WEFT_TOKEN"), mcpserver.Options{Logger: logger})
		if err != nil {
			return fmt.Errorf("%s.addr: %w", db, err)
		}
		return relay.ServeStdio(ctx)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	svc := newService(st)
	if !lc.off {
		if lc.addr == "" {
			lc.addr = "127.0.0.1:0"
		}
		l, err := mcpserver.Listen(svc, mcpserver.ListenOptions{Addr: lc.addr, Token: os.Getenv("WEFT_TOKEN"), Logger: logger})
		if err != nil {
			// Relaying is a convenience for other wefts; serving this
			// client matters more.
			logger.Warn("not listening for other wefts", "error", err)
		} else {
			defer l.Close()
		}
	}
	return mcpserver.New(svc, mcpserver.Options{Logger: logger}).ServeStdio(ctx)
}
