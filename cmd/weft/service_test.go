package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/ops/summary"
)

func TestSummaryEndpointFromTheEnvironment(t *testing.T) {
	t.Setenv("WEFT_SUMMARY_URL", "http://127.0.0.1:9/v1")
	t.Setenv("WEFT_SUMMARY_MODEL", "small")
	t.Setenv("WEFT_SUMMARY_API_KEY", "k")
	t.Setenv("WEFT_SUMMARY_TIMEOUT", "30s")
	want := summary.Endpoint{URL: "http://127.0.0.1:9/v1", Model: "small", APIKey: "k", Timeout: "30s"}
	if got := summaryEndpoint(); got != want {
		t.Errorf("summaryEndpoint() = %+v, want %+v", got, want)
	}
	t.Setenv("WEFT_SUMMARY_URL", "")
	if summaryEndpoint().Configured() {
		t.Error("an empty WEFT_SUMMARY_URL configures an endpoint")
	}
}

// The TUI's log file is made only when there is something to log.
func TestFileLogIsMadeOnFirstWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weft.db.log")
	logger, closeLog := fileLog(path)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the log file exists before anything was logged: %v", err)
	}
	logger.Info("not logged: below warnings")
	logger.Error("tool panicked", "tool", "x")
	closeLog()
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "tool panicked") || strings.Contains(string(b), "not logged") {
		t.Fatalf("log %q, %v", b, err)
	}
}

// A command's log keeps the Go runtime's text off the terminal: a
// recovered panic, with its stack, goes whole to the file's log, and
// stderr says where it is; other warnings stay on stderr.
func TestCommandLogKeepsPanicsInTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weft.db.log")
	var stderr strings.Builder
	logger, closeLog := commandLog(&stderr, path)
	logger.Warn("the summary endpoint is slow")
	logger.Error("tool panicked", "tool", "get_message_range", "panic", "runtime error: slice bounds out of range [::3031742324]", "stack", "goroutine 7 [running]:\nweft/ops.(*Service).View(...)")
	closeLog()
	for _, internal := range []string{"runtime error", "goroutine", "out of range"} {
		if strings.Contains(stderr.String(), internal) {
			t.Errorf("stderr shows %q:\n%s", internal, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "the summary endpoint is slow") || !strings.Contains(stderr.String(), "get_message_range") || !strings.Contains(stderr.String(), path) {
		t.Errorf("stderr does not keep the warning, name the tool and say where the details are:\n%s", stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "out of range [::3031742324]") || !strings.Contains(string(b), "goroutine 7") {
		t.Fatalf("the log file does not hold the panic and its stack: %q, %v", b, err)
	}
	if strings.Contains(string(b), "the summary endpoint is slow") {
		t.Errorf("the log file holds what stderr showed:\n%s", b)
	}
}
