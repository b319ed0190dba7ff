package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"weft/formats"
	"weft/formats/follow"
	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/ops/ingest"
	"weft/ops/tools"
	"weft/tui"
)

// weft import --follow FILE...: each file is watched (formats/follow)
// and, each time its settled part grows, imported again whole, as weft
// import would import it at that moment: import keys make what is there
// already count for nothing, so only the new messages are added. Each
// batch opens the database for its own import and lets it go (or goes
// through the weft that holds it, as every command does), so the TUI
// and other commands can open the file between batches.

// followFiles follows files until ctx ends or a signal stops weft; being
// stopped is no error.
func (a *app) followFiles(ctx context.Context, files []string, format formats.Format, session string) error {
	if err := checkFollowed(files); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	var mu sync.Mutex
	line := func(w io.Writer) func(string) {
		return func(s string) {
			mu.Lock()
			defer mu.Unlock()
			_, _ = fmt.Fprintln(w, s)
		}
	}
	note := line(a.stderr)
	note("weft: following " + termsafe.Text(strings.Join(files, ", ")) + " (ctrl+c stops)")
	runFollowers(ctx, files, followConfig{
		format: format, session: session,
		batch: func(fn func(target) error) error { return a.withTarget(writing, fn) },
		print: line(a.stdout), note: func(s string) { note("weft: " + s) },
	})
	return nil
}

// checkFollowed refuses what cannot be followed: standard input, a
// directory. A file that is not there yet is waited for.
func checkFollowed(files []string) error {
	for _, file := range files {
		if file == "-" {
			return usageErr("--follow watches files as they grow; it cannot follow standard input")
		}
		if st, err := os.Stat(file); err == nil && st.IsDir() {
			return fmt.Errorf("%s is a directory, not a file: name the files in it (--follow %s)", file, filepath.Join(file, "*.jsonl"))
		}
	}
	return nil
}

// followConfig is how followers import and what they say.
type followConfig struct {
	format  formats.Format
	session string
	// batch runs an import on the database: opened for it, or through
	// the weft that holds it (the command line); the TUI's own service.
	batch func(func(target) error) error
	// print takes a line per batch, note what the followers have to say.
	print, note func(string)
	// imported, if set, hears of the sessions each batch went into.
	imported func([]ingest.ImportedSession)
}

// runFollowers follows each file until ctx ends, one import at a time.
func runFollowers(ctx context.Context, files []string, cfg followConfig) {
	var batch sync.Mutex // one import at a time: each may open the database
	var wg sync.WaitGroup
	for _, file := range files {
		fb := &followBatches{file: file, session: cfg.session, cfg: cfg, seen: map[string]bool{}}
		wg.Go(func() {
			err := follow.Watch(ctx, file, follow.Options{Format: cfg.format, Notify: func(s string) { cfg.note(termsafe.Text(s)) }},
				func(u follow.Update) error {
					batch.Lock()
					defer batch.Unlock()
					return cfg.batch(func(t target) error { return fb.importUpdate(ctx, t, u) })
				})
			if err != nil {
				cfg.note(termsafe.Text(fmt.Sprintf("cannot follow %s: %v", file, err)))
			}
		})
	}
	wg.Wait()
}

// followBatches imports a followed file's updates and reports them.
type followBatches struct {
	file, session string
	cfg           followConfig
	imported      bool // the first update was imported
	// seen: the problems and notes said already (every update reads the
	// file from its start, and would say them again).
	seen map[string]bool
}

// importUpdate imports u, the file's settled part, through t.
func (b *followBatches) importUpdate(ctx context.Context, t target, u follow.Update) error {
	bar := newImportProgress(io.Discard, b.file, -1, nil)
	rep, err := t.Import(ctx, bytes.NewReader(u.Data), tools.ImportArgs{Format: u.Format, Session: b.session}, bar)
	if err != nil {
		return err
	}
	if rep.Refused != nil {
		return rep.Refused
	}
	for _, p := range rep.Problems {
		b.once("%s: %s", b.file, p.String())
	}
	for _, s := range rep.Sessions {
		for _, n := range s.Notes {
			b.once("%s: session %s: %s", b.file, s.SessionID, n)
		}
	}
	b.report(rep.Sessions)
	if b.cfg.imported != nil {
		b.cfg.imported(rep.Sessions)
	}
	if rep.Stopped != nil && ctx.Err() == nil {
		return fmt.Errorf("import stopped: %w", rep.Stopped)
	}
	return nil
}

// once says a problem or note the first time it comes.
func (b *followBatches) once(format string, args ...any) {
	s := termsafe.Text(fmt.Sprintf(format, args...))
	if !b.seen[s] {
		b.seen[s] = true
		b.cfg.note(s)
	}
}

func (b *followBatches) printf(format string, args ...any) { b.cfg.print(fmt.Sprintf(format, args...)) }

// report prints a line per session a batch added to: the first batch
// as weft import says it, the later ones with their time.
func (b *followBatches) report(sessions []ingest.ImportedSession) {
	first := !b.imported
	b.imported = true
	name := termsafe.Text(b.file)
	for _, s := range sessions {
		title := termsafe.Text(s.Title)
		switch {
		case first && s.Created:
			b.printf("%s: %s imported as new session %s %q", name, english.Count(s.Added, "message"), s.SessionID, title)
		case first && s.Added == 0:
			b.printf("%s: nothing new: %s already in session %s %q", name, english.Count(s.Skipped, "message"), s.SessionID, title)
		case first:
			b.printf("%s: %s imported into session %s %q (%s already there)", name, english.Count(s.Added, "message"), s.SessionID, title, english.Thousands(s.Skipped))
		case s.Added > 0 || s.Ops > 0:
			line := fmt.Sprintf("%s %s: +%s in session %s %q", time.Now().Format("15:04:05"), name, english.Count(s.Added, "message"), s.SessionID, title)
			if s.Ops > 0 {
				line += ", +" + english.Count(s.Ops, "operation")
			}
			b.cfg.print(line)
		}
	}
}

// followInTUI follows a.follow while the TUI runs, importing through t,
// its service (or the weft it works through), so the TUI shows what the
// files gain as it lands (it hears of every write). The TUI opens on the session the first file went into,
// unless one was named; what the followers have to say goes to the log.
// The function returned stops them, once their batch in hand is done.
func (a *app) followInTUI(ctx context.Context, t target, logger *slog.Logger, opts *tui.Options) (func(), error) {
	if err := checkFollowed(a.follow); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	first := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runFollowers(ctx, a.follow, followConfig{
			batch: func(fn func(target) error) error { return fn(t) },
			print: func(string) {}, // the TUI shows each batch as it lands
			note:  func(s string) { logger.Warn("follow", "note", s) },
			imported: func(sessions []ingest.ImportedSession) {
				if len(sessions) > 0 {
					select {
					case first <- sessions[0].SessionID:
					default:
					}
				}
			},
		})
	}()
	if opts.Session == "" {
		// The first file is imported at once when it is there; one that
		// is not yet leaves the TUI on the latest session.
		select {
		case sid := <-first:
			opts.Session = sid
		case <-time.After(2 * time.Second):
		}
	}
	opts.Notice = "following " + strings.Join(a.follow, ", ") + " (its new messages appear as they are written)"
	return func() { cancel(); <-done }, nil
}
