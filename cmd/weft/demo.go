package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"weft/demo"
	"weft/store"
	"weft/tui"
)

// demoCommand is weft demo.
func (a *app) demoCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Open the TUI on a fresh file seeded with a sample thread",
		Long:  `demo seeds a scratch file with a sample thread and opens the TUI on it: 253 messages over four days of building a rate limiter, with tool calls, code, a long digression worth digesting, a misplaced message worth moving, and a few operations already applied (one by an agent). The file is removed when the TUI closes. The TUI's flags apply; --db does not.`,
		Example: `
weft demo
weft demo --theme light --no-mcp`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("demo takes no arguments")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), a.tuiOptions(), a.listen())
		},
	}
	a.hideFlags(cmd, "db")
	return cmd
}

// runDemo seeds a fresh file with the demo thread and opens the TUI on
// it.
func runDemo(ctx context.Context, opts tui.Options, lc listenConfig) error {
	dir, err := os.MkdirTemp("", "weft-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir) // the demo is a scratch file: gone when the TUI closes
	path := filepath.Join(dir, "demo.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	logger, closeLog := fileLog(filepath.Join(dir, "demo.log"))
	defer closeLog()
	svc := newService(st, logger)
	lc.logger = logger
	sid, err := demo.Seed(ctx, svc)
	if err != nil {
		return err
	}
	opts.Session = sid
	return runWithListener(ctx, svc, opts, lc)
}
