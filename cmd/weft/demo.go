package main

import (
	"context"
	"os"
	"path/filepath"

	"weft/demo"
	"weft/store"
	"weft/tui"
)

// cmdDemo seeds a fresh file with the demo thread and opens the TUI on it.
func cmdDemo(ctx context.Context, args []string, opts tui.Options, lc listenConfig) error {
	if len(args) > 0 {
		return usageErr("demo takes no arguments")
	}
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
	svc := newService(st)
	sid, err := demo.Seed(ctx, svc)
	if err != nil {
		return err
	}
	opts.Session = sid
	l, err := lc.start(svc)
	if err != nil {
		return err
	}
	if l != nil {
		defer l.Close()
		opts.Listener = l
	}
	return tui.Run(ctx, svc, opts)
}
