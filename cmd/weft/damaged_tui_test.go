package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weft/ops/tools"
	"weft/store"
	"weft/store/boltstore"
	"weft/tui"
)

// A file whose damage shows only on the first read (the latest session's
// pages, the root's) is refused before the TUI starts: the whole error,
// with what to run, goes to stderr, weft exits non-zero, and the file is
// let go; the TUI's screen never opens to wait for a key.
func TestTUIRefusesADamagedFile(t *testing.T) {
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	started := false
	runTUI = func(context.Context, tools.Desk, tui.Options) error {
		started = true
		return nil
	}
	good, err := os.ReadFile(checkedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name string
		do   func(b []byte) []byte
	}{
		{"the latest session's page", zeroPagesHolding("question 39 ")},
		{"the latest session's record overwritten", scrambleBefore("question 39 ")},
	} {
		t.Run(d.name, func(t *testing.T) {
			damaged := filepath.Join(t.TempDir(), "damaged.db")
			if err := os.WriteFile(damaged, d.do(append([]byte(nil), good...)), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"--no-mcp"}, {"--no-mcp", "session 39"}} {
				started = false
				out, errOut, code, err := runCLI(damaged, args...)
				if started {
					t.Errorf("weft %v started the TUI on a damaged file", args)
				}
				if code != 1 || err == nil || !(errors.Is(err, store.ErrDamaged) || errors.Is(err, store.ErrCorrupt)) {
					t.Fatalf("weft %v: exit %d, %v\n%s", args, code, err, out)
				}
				wants := []string{damaged + " is damaged", "weft check --db " + damaged, "weft salvage --db " + damaged + " OUT"}
				if errors.Is(err, store.ErrCorrupt) {
					wants = []string{damaged + ": ", "corrupt record", "weft check --db " + damaged}
				}
				for _, want := range wants {
					if !strings.Contains(errOut, want) {
						t.Errorf("weft %v: stderr does not say %q:\n%s", args, want, errOut)
					}
				}
			}
			// Let go: another weft can take the file at once.
			st, err := boltstore.Open(damaged, boltstore.Options{Timeout: 200 * time.Millisecond})
			if errors.Is(err, store.ErrInUse) {
				t.Errorf("the file is still held: %v", err)
			}
			if err == nil {
				_ = st.Close()
			}
		})
	}
}
