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

	"github.com/spf13/cobra"

	"weft/ops"
	"weft/ops/listen"
)

// serveCommand is weft serve.
func (a *app) serveCommand() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP and the HTTP API without a TUI",
		Long: `serve serves MCP (Streamable HTTP at /mcp) and the HTTP API (POST /api/TOOL with the arguments as the JSON body; GET /api lists the tools, GET /healthz answers health; POST /outline, /export and /import for what weft show, export and import do) on --addr, logging to stderr, until interrupted. The address is written next to the database as <db>.addr, so that every other weft command on the file goes through it.

It is also the context proxy: agents that point their model API at it (ANTHROPIC_BASE_URL=http://127.0.0.1:7433, OPENAI_BASE_URL=http://127.0.0.1:7433/v1) have their requests recognised as sessions, stored, and sent upstream (--upstream-anthropic, --upstream-openai) with the effective thread in place of their messages; the answers come back as they stream and are stored.

It binds loopback by default; off loopback it requires a bearer token (--token, default $WEFT_TOKEN), and clients without it get 401 (the proxy's clients send it as X-Weft-Token: their Authorization goes to the provider). Browser pages from another origin are refused, but for the origins given with --allow-origin, which get CORS.`,
		Example: `
weft serve
weft serve --addr 0.0.0.0:7433 --token "$(openssl rand -hex 16)"
weft serve --allow-origin http://localhost:5173
ANTHROPIC_BASE_URL=http://127.0.0.1:7433 claude
weft serve --upstream-openai http://localhost:11434/v1
curl -X POST localhost:7433/api/get_message_range -d '{"start_idx":0,"end_idx":9}'`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("serve takes no arguments (got %q): weft serve [--addr HOST:PORT] [--token T]", args[0])
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withService(func(svc *ops.Service) error {
				lc := a.listen()
				lc.addr = addr
				return serve(cmd.Context(), svc, lc, a.stderr)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", listen.DefaultAddr, "where to listen, host:port (off loopback only with a token)")
	a.describeFlag(cmd, "token", "bearer token clients must send (default $WEFT_TOKEN; the proxy's clients send it as X-Weft-Token)")
	a.describeFlag(cmd, "allow-origin", "a browser `ORIGIN` (scheme://host[:port]) allowed to call, with CORS; repeatable")
	a.describeFlag(cmd, "upstream-anthropic", "where the context proxy sends Messages API requests (/v1/messages)")
	a.describeFlag(cmd, "upstream-openai", "where the context proxy sends Chat Completions and Responses requests (/v1/chat/completions, /v1/responses), with its /v1")
	a.hideFlags(cmd, "theme", "mcp-addr", "no-mcp")
	return cmd
}

// serve serves MCP and the HTTP API without a TUI, logging to stderr,
// until SIGINT or SIGTERM.
func serve(ctx context.Context, svc *ops.Service, lc listenConfig, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	lc.logger = logger
	o, _ := lc.options(svc)
	err := listen.Serve(ctx, o, func(l *listen.Listener) {
		if n := l.Notice(); n != "" {
			logger.Warn(n)
		}
		logger.Info("weft is serving", "db", svc.Store().Path(), "mcp", l.Addr(), "api", l.URL()+"/api/TOOL", "proxy", l.URL()+"/v1", "token", o.Token != "", "origins", o.Origins)
	})
	if errors.Is(err, listen.ErrNeedsToken) {
		return fmt.Errorf("%w (--token T or WEFT_TOKEN)", err)
	}
	if err == nil {
		logger.Info("weft stopped")
	}
	return err
}
