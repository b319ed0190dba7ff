package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/ops/thread"
	"weft/store"
	"weft/store/migrate"
)

// migrateCommand is weft migrate.
func (a *app) migrateCommand() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "migrate --to FILE|URL",
		Short: "Copy every session into another store (a file, PostgreSQL) and verify the copy",
		Long: `migrate copies every session of the store --db or --store names (read only, where the backend allows it) into the store --to names: a bbolt file (made if it is not there) or a PostgreSQL database, postgres://USER@HOST/DB. It copies each session's record (version, counts, tags, memory policy, fork link, room), its messages, operations, import keys, sources and pending preferences, and the store's settings, then reads everything back and compares it, session by session, with the effective threads; it exits 1 saying what differs if anything does.

It may be run again: a session the destination holds whole is skipped, one it holds in part (an interrupted run) is completed. A destination that holds something else under a session's ID, or a newer state of it, is refused before anything is written; nothing there is overwritten. Sessions of the destination that the source does not have are left as they are.

A file is opened by one process at a time: stop a weft that has it open (the TUI, weft serve) before migrating from or into it.`,
		Example: `
weft migrate --to postgres://weft@db.example.org/weft
weft --db ~/threads.db migrate --to ~/threads-copy.db
weft --store postgres://weft@db.example.org/weft migrate --to ~/threads.db`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("migrate takes no arguments (got %q): weft migrate --to FILE|URL", args[0])
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(to) == "" {
				return usageErr("migrate needs --to: the file or postgres://… URL to copy every session into")
			}
			return a.migrate(cmd.Context(), to)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the store to copy into: a file, or a PostgreSQL database (postgres://USER@HOST/DB)")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// migrate runs weft migrate --to.
func (a *app) migrate(ctx context.Context, to string) error {
	if sameStore(a.db, to) {
		return usageErr("--to names the store migrate copies from: give another")
	}
	if !isStoreURL(a.db) {
		if _, err := os.Stat(a.db); err != nil {
			return fmt.Errorf("nothing to migrate: %w", err)
		}
	}
	src, err := a.openMigrating(a.db, true)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	dst, err := a.openMigrating(to, false)
	if err != nil {
		return err
	}
	defer func() { _ = dst.Close() }()

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, _ = fmt.Fprintf(a.stderr, "migrating %s into %s\n", termsafe.Line(src.Path()), termsafe.Line(dst.Path()))
	res, err := migrate.Copy(ctx, src, dst, migrate.Options{Thread: thread.Signature, Report: a.migrateProgress()})
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted after %s: what was copied stays; run weft migrate --to %s again to finish", english.Count(res.Copied+res.Resumed+res.Updated+res.Skipped, "session"), termsafe.Line(dst.Path()))
	case err != nil:
		return err
	}
	_, _ = fmt.Fprintf(a.stdout, "migrated %s into %s: %s (%d copied, %d resumed, %d updated, %d skipped as there already); written: %s, %s, %s; verified %s in %.1f s\n",
		termsafe.Line(src.Path()), termsafe.Line(dst.Path()), english.Count(res.Sessions, "session"),
		res.Copied, res.Resumed, res.Updated, res.Skipped,
		english.Count(res.Messages, "message"), english.Count(res.Ops, "operation"), english.Count(res.Settings, "setting"),
		english.Count(res.Verified, "session"), res.Elapsed.Seconds())
	return nil
}

// openMigrating opens a store migrate copies from (readOnly) or into. A
// file a running weft holds cannot be opened: the error says to stop it.
func (a *app) openMigrating(path string, readOnly bool) (store.Store, error) {
	st, err := a.openUpgrading(path, a.lockWait, readOnly)
	if errors.Is(err, store.ErrInUse) {
		return nil, fmt.Errorf("%w; a file is opened by one process at a time: stop that weft (q in its TUI, Ctrl-C for weft serve) and run weft migrate again", err)
	}
	return st, err
}

// sameStore reports whether a and b name one store: one URL, or one
// file by two paths.
func sameStore(a, b string) bool {
	if isStoreURL(a) || isStoreURL(b) {
		return a == b
	}
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	pa, errA := filepath.Abs(a)
	pb, errB := filepath.Abs(b)
	return errA == nil && errB == nil && pa == pb
}

// progressEvery is how many messages of a long session go between the
// lines that say how far its copy is.
const progressEvery = 50000

// migrateProgress prints a line for each session copied (or skipped),
// and one every progressEvery messages of a long one.
func (a *app) migrateProgress() func(migrate.Progress) {
	shown := 0
	return func(p migrate.Progress) {
		switch p.Action {
		case migrate.Verified:
			return
		case migrate.Copying:
			if p.Messages/progressEvery > shown/progressEvery {
				_, _ = fmt.Fprintf(a.stderr, "[%d/%d] %s: %d of %d messages\n", p.N, p.Of, termsafe.Line(p.Session), p.Messages, p.Last)
				shown = p.Messages
			}
			return
		}
		shown = 0
		what := string(p.Action)
		switch p.Action {
		case migrate.Resumed:
			if p.From > 0 {
				what = fmt.Sprintf("resumed after message %d", p.From)
			}
		case migrate.Skipped:
			what = "already there"
		}
		_, _ = fmt.Fprintf(a.stderr, "[%d/%d] %s %q: %s", p.N, p.Of, termsafe.Line(p.Session), termsafe.Line(p.Title), what)
		if p.Action != migrate.Skipped {
			_, _ = fmt.Fprintf(a.stderr, ", %s, %s", english.Count(p.Messages, "message"), english.Count(p.Ops, "operation"))
		}
		_, _ = fmt.Fprintln(a.stderr)
	}
}
