package boltstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"weft/model"
)

// A process whose address space is limited (ulimit -v, to less than the
// gigabyte a file opened to write is mapped with, past what it has) still opens a file,
// writes it and reads it back: bbolt then maps the file as it does by
// itself. The test runs itself again, limited, in a process of its own.
func TestOpensUnderAnAddressSpaceLimit(t *testing.T) {
	if dir := os.Getenv("WEFT_TEST_LIMITED_DIR"); dir != "" {
		// what the process has mapped now, and 256 MB more
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Fatal(err)
		}
		var kb uint64
		for line := range strings.Lines(string(status)) {
			if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
				kb, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			}
		}
		if kb == 0 {
			t.Fatalf("no VmSize in /proc/self/status")
		}
		limit := kb<<10 + 256<<20
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			t.Fatal(err)
		}
		s := openT(t, filepath.Join(dir, "weft.db"))
		putSession(t, s, "s")
		want := bigMessages(t, s, "s", 100, 1<<20)
		var got []model.Message
		err = s.view(func(tx *Tx) error {
			return tx.Messages("s", 1, 2, func(m model.Message) error {
				got = append(got, m)
				return nil
			})
		})
		if err != nil || len(got) != 2 || got[1].Content != want[1].Content {
			t.Fatalf("read back %d messages (%v)", len(got), err)
		}
		return
	}
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestOpensUnderAnAddressSpaceLimit$", "-test.v")
	cmd.Env = append(os.Environ(), "WEFT_TEST_LIMITED_DIR="+t.TempDir())
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("under a limited address space: %v\n%s", err, out)
	}
}
