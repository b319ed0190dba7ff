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
