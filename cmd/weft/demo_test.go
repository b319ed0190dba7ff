package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/ops/tools"
	"weft/tui"
)

// demoFiles lists the demo folders left in dir.
func demoFiles(t *testing.T, dir string) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, "weft-demo-*"))
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// weft demo names its file when the TUI opens and removes it when the TUI
// closes; --keep keeps it and prints where it is, for the command line.
func TestDemoShowsItsFileAndKeepsItOnlyWhenAsked(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	got := tuiRun(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"demo", "--no-mcp"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	path := strings.Fields(strings.TrimPrefix(got.Notice, "demo file "))[0]
	path = strings.TrimSuffix(path, ":")
	if !strings.HasPrefix(path, tmp) || !strings.HasSuffix(path, "demo.db") {
		t.Fatalf("the TUI's notice does not name the demo's file: %q", got.Notice)
	}
	if left := demoFiles(t, tmp); len(left) != 0 {
		t.Fatalf("weft demo left %v", left)
	}

	out.Reset()
	if err := run(context.Background(), []string{"demo", "--no-mcp", "--keep"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	path = strings.TrimSuffix(strings.Fields(strings.TrimPrefix(got.Notice, "demo file "))[0], ":")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("--keep did not keep %s: %v", path, err)
	}
	if !strings.Contains(out.String(), "the demo's file is kept: weft --db "+path+" ls") {
		t.Fatalf("--keep does not say where the file is: %q", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"--db", path, "ls"}, &out, &out); err != nil || !strings.Contains(out.String(), "Rate limiter") {
		t.Fatalf("weft --db %s ls: %v\n%s", path, err, out.String())
	}
}

// A signal (SIGHUP when the terminal goes) ends weft demo as q does: the
// folder and the listener's .addr are removed.
func TestDemoCleansUpOnASignal(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	runTUI = func(ctx context.Context, _ tools.Desk, opts tui.Options) error {
		if _, err := os.Stat(filepath.Join(filepath.Dir(strings.Fields(opts.Notice)[2]), "demo.db.addr")); err != nil {
			t.Errorf("no .addr while the TUI runs: %v", err)
		}
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		select {
		case <-ctx.Done():
			return tea.ErrProgramKilled // as bubbletea says it
		case <-time.After(10 * time.Second):
			t.Error("SIGHUP did not cancel the TUI's context")
			return nil
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"demo", "--mcp-addr", "127.0.0.1:0"}, &out, &out); err != nil {
		t.Fatalf("weft demo stopped by SIGHUP: %v\n%s", err, out.String())
	}
	if left := demoFiles(t, tmp); len(left) != 0 {
		t.Fatalf("weft demo left %v after SIGHUP", left)
	}
}
