package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processNamed finds the process called name at or under pid (the pane's
// shell may have started it, or become it).
func processNamed(t *testing.T, pid int, name string) int {
	t.Helper()
	deadline := time.Now().Add(harnessWait)
	for time.Now().Before(deadline) {
		queue := []int{pid}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if comm, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm"); err == nil && strings.TrimSpace(string(comm)) == name {
				return p
			}
			kids, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + strconv.Itoa(p) + "/children")
			for _, k := range strings.Fields(string(kids)) {
				if n, err := strconv.Atoi(k); err == nil {
					queue = append(queue, n)
				}
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no process %s under %d", name, pid)
	return 0
}

var demoPathRE = regexp.MustCompile(`demo file (\S+/demo\.db):`)

// weft demo shows its file; SIGHUP (the terminal closing) ends it as q
// does, its folder and the listener's .addr removed.
func TestDemoFileShownAndGoneOnHangup(t *testing.T) {
	needTmux(t)
	t.Parallel()
	if _, err := os.Stat("/proc/self/comm"); err != nil {
		t.Skip("no /proc here to find the program's process")
	}
	bin := weftBinary(t)
	tmp := t.TempDir()
	s := startScreen(t, TerminalOptions{Width: 200, Height: 30, Env: []string{"TZ=UTC", "TMPDIR=" + tmp, "HOME=" + tmp}},
		bin, "demo", "--mcp-addr", "127.0.0.1:0")
	path := s.match(demoPathRE)[1]
	if !strings.HasPrefix(path, tmp) {
		t.Fatalf("the demo's file %s is not under TMPDIR %s", path, tmp)
	}
	if _, err := os.Stat(path + ".addr"); err != nil {
		t.Fatalf("no .addr beside the demo's file while it runs: %v", err)
	}
	pane, err := s.term.PanePID()
	if err != nil {
		t.Fatal(err)
	}
	pid := processNamed(t, pane, "weft")
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.exited()
	if left, _ := filepath.Glob(filepath.Join(tmp, "weft-demo-*")); len(left) != 0 {
		t.Fatalf("SIGHUP left %v", left)
	}
}

// weft demo --keep keeps the file and says where; the command line reads
// it.
func TestDemoKeep(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	tmp := t.TempDir()
	s := startScreen(t, TerminalOptions{Width: 200, Height: 30, Env: []string{"TZ=UTC", "TMPDIR=" + tmp, "HOME=" + tmp}},
		bin, "demo", "--keep", "--no-mcp")
	path := s.match(demoPathRE)[1]
	s.see("at 242/243")
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft demo --keep exited %d", code)
	}
	// The line is printed at the bottom row as weft exits; tmux's "Pane is
	// dead" pushes it up, off the screen.
	want := "the demo's file is kept: weft --db " + path + " ls"
	if all, err := s.term.CaptureHistory(); err != nil || !strings.Contains(all, want) {
		t.Fatalf("weft demo --keep did not print %q (%v):\n%s", want, err, all)
	}
	if out := weftCLI(t, "--db", path, "ls"); !strings.Contains(out, "Rate limiter for the API gateway") {
		t.Fatalf("weft ls on the kept file:\n%s", out)
	}
}
