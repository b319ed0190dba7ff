package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"weft/ops"
	"weft/ops/mcpserver"
)

// cmdServe serves MCP and the HTTP API without a TUI, logging to stderr,
// until SIGINT or SIGTERM.
func cmdServe(ctx context.Context, svc *ops.Service, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", mcpserver.DefaultAddr, "host:port to listen on (loopback unless a token is set)")
	token := fs.String("token", "", "bearer token clients must send (default $WEFT_TOKEN)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("serve takes no arguments (got %q): weft serve [--addr HOST:PORT] [--token T]", pos[0])
	}
	if *token == "" {
		*token = os.Getenv("WEFT_TOKEN")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = mcpserver.Serve(ctx, svc, mcpserver.ListenOptions{Addr: *addr, Token: *token, Logger: logger}, func(l *mcpserver.Listener) {
		if n := l.Notice(); n != "" {
			logger.Warn(n)
		}
		logger.Info("weft is serving", "db", svc.Store().Path(), "mcp", l.MCPURL(), "api", l.URL()+"/api/TOOL", "token", *token != "")
	})
	if errors.Is(err, mcpserver.ErrNeedsToken) {
		return fmt.Errorf("%w (--token T or WEFT_TOKEN)", err)
	}
	if err == nil {
		logger.Info("weft stopped")
	}
	return err
}
