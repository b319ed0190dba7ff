package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"weft/demo"
	"weft/store/boltstore"
	"weft/tui"
)

// demoCommand is weft demo.
func (a *app) demoCommand() *cobra.Command {
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Open the TUI on a fresh file seeded with a sample thread",
		Long:  `demo seeds a scratch file with a sample thread and opens the TUI on it: 253 messages over four days of building a rate limiter, with tool calls, code, a long digression worth digesting, a misplaced message worth moving, and a few operations already applied (one by an agent). The TUI shows the file's path when it opens; the file is removed when the TUI closes (or weft is stopped by a signal), unless --keep keeps it and prints its path, for the command line's examples: weft --db PATH ls. The TUI's flags apply; --db does not.`,
		Example: `
weft demo
weft demo --theme light --no-mcp
# keep the file, then try the command line on it
weft demo --keep`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("demo takes no arguments")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), a.tuiOptions(), a.listen(), keep, a.stdout)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the demo's file when the TUI closes, and print its path")
	a.hideFlags(cmd, "db")
	return cmd
}

// runDemo seeds a fresh file with the demo thread and opens the TUI on
// it. The file is shown when the TUI opens; it goes with its folder when
// the TUI closes, unless keep, which prints where it is instead.
func runDemo(ctx context.Context, opts tui.Options, lc listenConfig, keep bool, stdout io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "weft-demo-")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "demo.db")
	defer func() {
		if keep {
			if err == nil {
				_, _ = fmt.Fprintf(stdout, "the demo's file is kept: weft --db %s ls\n", path)
			}
			return
		}
		_ = os.RemoveAll(dir) // the demo is a scratch file: gone when the TUI closes
	}()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	logger, closeLog := fileLog(filepath.Join(dir, "demo.log"))
	defer closeLog()
	svc := newService(st, logger)
	lc.logger = logger
	opts.Logger = logger
	sid, err := demo.Seed(ctx, svc)
	if err != nil {
		return err
	}
	opts.Session = sid
	opts.Notice = "demo file " + path + ": removed on quit (--keep keeps it)"
	if keep {
		opts.Notice = "demo file " + path + ": kept on quit"
	}
	return runWithListener(ctx, svc, opts, lc)
}
