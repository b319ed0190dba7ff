package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"

	"weft/ops"
	"weft/ops/memory"
	"weft/ops/summary"
	"weft/store"
)

// newService is the service every command runs on, configured from the
// environment: the summary endpoint from WEFT_SUMMARY_URL,
// WEFT_SUMMARY_MODEL, WEFT_SUMMARY_API_KEY and WEFT_SUMMARY_TIMEOUT. It
// logs to logger (what a bug in a tool left behind).
func newService(st store.Store, logger *slog.Logger) *ops.Service {
	svc := ops.New(st, ops.WithSummaryEndpoint(summaryEndpoint()), ops.WithLogger(logger), memory.Keep())
	// The writes of the other wefts on a shared store, heard here until
	// the store closes (none on a file).
	go svc.FollowStore(context.Background())
	return svc
}

// warnings is a logger of warnings and errors to w (stderr, for commands
// that own no screen).
func warnings(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// commandLog is the log of a command that owns no screen: warnings and
// errors to stderr, but a record that carries a stack (a recovered
// panic) goes whole to the file at path, stderr saying what stopped and
// where the details are. The function returned closes the file.
func commandLog(stderr io.Writer, path string) (*slog.Logger, func()) {
	lf := &lazyFile{path: path}
	h := &splitLog{term: warnings(stderr).Handler(), file: warnings(lf).Handler(), path: path}
	return slog.New(h), lf.close
}

// splitLog sends records with a stack to file, the others to term.
type splitLog struct {
	term, file slog.Handler
	path       string
}

// Go's own text: kept off the terminal.
const (
	logPanic = "panic"
	logStack = "stack"
)

func (h *splitLog) Enabled(ctx context.Context, l slog.Level) bool { return h.term.Enabled(ctx, l) }

func (h *splitLog) Handle(ctx context.Context, r slog.Record) error {
	internal := false
	r.Attrs(func(a slog.Attr) bool {
		internal = a.Key == logStack
		return !internal
	})
	if !internal {
		return h.term.Handle(ctx, r)
	}
	short := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != logPanic && a.Key != logStack {
			short.AddAttrs(a)
		}
		return true
	})
	short.AddAttrs(slog.String("details", h.path))
	return errors.Join(h.file.Handle(ctx, r), h.term.Handle(ctx, short))
}

func (h *splitLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &splitLog{term: h.term.WithAttrs(as), file: h.file.WithAttrs(as), path: h.path}
}

func (h *splitLog) WithGroup(name string) slog.Handler {
	return &splitLog{term: h.term.WithGroup(name), file: h.file.WithGroup(name), path: h.path}
}

// fileLog is the log of a TUI, which owns the screen: warnings and errors
// go to path (0600, appended to), made only when there is something to
// log. The function returned closes it.
func fileLog(path string) (*slog.Logger, func()) {
	lf := &lazyFile{path: path}
	return warnings(lf), lf.close
}

// lazyFile opens its file on the first write; a file that cannot be
// opened takes nothing.
type lazyFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
	err  error
}

func (l *lazyFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil && l.err == nil {
		l.f, l.err = os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	if l.err != nil {
		return len(p), nil // no log is better than a broken screen
	}
	return l.f.Write(p)
}

func (l *lazyFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
	}
}

// summaryEndpoint reads the summary endpoint's settings; they are
// checked when a summary is asked for.
func summaryEndpoint() summary.Endpoint {
	return summary.Endpoint{
		URL:     os.Getenv(summary.SettingURL),
		Model:   os.Getenv(summary.SettingModel),
		APIKey:  os.Getenv(summary.SettingKey),
		Timeout: os.Getenv(summary.SettingTimeout),
	}
}
