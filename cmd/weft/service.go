package main

import (
	"io"
	"log/slog"
	"os"
	"sync"

	"weft/ops"
	"weft/ops/summary"
	"weft/store"
)

// newService is the service every command runs on, configured from the
// environment: the summary endpoint from WEFT_SUMMARY_URL,
// WEFT_SUMMARY_MODEL, WEFT_SUMMARY_API_KEY and WEFT_SUMMARY_TIMEOUT. It
// logs to logger (what a bug in a tool left behind).
func newService(st *store.Store, logger *slog.Logger) *ops.Service {
	return ops.New(st, ops.WithSummaryEndpoint(summaryEndpoint()), ops.WithLogger(logger))
}

// warnings is a logger of warnings and errors to w (stderr, for commands
// that own no screen).
func warnings(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
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
