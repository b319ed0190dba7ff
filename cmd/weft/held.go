package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"

	"weft/internal/termsafe"
	"weft/ops"
	"weft/ops/listen"
	"weft/ops/relay"
)

// weft [SESSION] on a file another weft holds (weft serve, weft mcp,
// another TUI) opens the same TUI through that weft's listener, over the
// relay weft call uses (relay.Remote, a tools.Desk): every key works, and
// what agents do through that weft shows as it lands. Closing the TUI
// leaves that weft and its agents running. This TUI has no listener of
// its own: agents talk to the holder's.
//
// If the holder stops while the TUI is open, the TUI says so and waits:
// it never takes the file over, so that a weft started again gets it,
// and the relay follows that weft to its new address (the address file).

// openThroughHolder runs the TUI on session through the weft that holds
// the file; inUse is the store's refusal, said again when no weft
// listens for others.
func (a *app) openThroughHolder(ctx context.Context, session string, inUse error) error {
	addr := listen.ReadAddrFile(a.db)
	if addr == "" {
		return fmt.Errorf("%w; nothing that listens for other wefts holds it (a TUI started with --no-mcp, or a command at work), so the TUI cannot go through it: open it again once that one is done", inUse)
	}
	logger, closeLog := fileLog(sidePath(a.db, ".log"))
	defer closeLog()
	r, err := relay.Dial(addr, relay.Options{
		Token:      a.bearer(),
		Rediscover: func() string { return listen.ReadAddrFile(a.db) },
		Logger:     logger,
	})
	if err != nil {
		return fmt.Errorf("%s.addr: %w", a.db, err)
	}
	// The first read before the screen, as in this process: a session
	// that is not there, a token refused, a holder that cannot answer
	// are said whole, on the terminal.
	if _, _, err := r.View(session); err != nil {
		switch {
		case errors.Is(err, ops.ErrNotFound) && session == "":
			// A file without a session yet: the TUI says how to fill it.
		case errors.Is(err, ops.ErrNotFound):
			return fmt.Errorf("%w (and %q is not a command: weft --help lists them)", err, session)
		default:
			return err
		}
	}
	opts := a.tuiOptions()
	opts.Session = session
	opts.Holder = r
	opts.Logger = logger
	opts.Notice = "the weft at " + termsafe.Line(r.Addr()) + " holds this file: this TUI works through it, and q leaves it running"
	if len(a.follow) > 0 {
		stop, err := a.followInTUI(ctx, r, logger, &opts)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err = runTUI(ctx, r, opts)
	// The session open here was the holder's default while the TUI ran;
	// its agents go back to the latest one.
	r.SetDefaultSession("")
	r.Settle()
	if ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return nil // stopped by a signal: nothing to report
	}
	return err
}
