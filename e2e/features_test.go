package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"weft/model"
)

// The terminal tests of what a lazygit or glow user expects: y copies
// through OSC 52 (tmux with set-clipboard on keeps what the program
// sent in its paste buffer), p hands the message to $PAGER and comes
// back, ctrl+z suspends to the shell until fg.

// processState is a process's state letter (R, S, T for stopped, …).
func processState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state …: comm may hold spaces, so read after the last ')'.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	return strings.Fields(rest)[0]
}

func TestCopyAndPager(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	var msgs []model.NewMessage
	for i := 1; i <= 6; i++ {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("Line of message %d.", i)})
	}
	sid := newThread(t, db, "Reading out", msgs...)

	// The pager: a script that keeps the file it was given.
	got := filepath.Join(dir, "paged.txt")
	pager := filepath.Join(dir, "pager.sh")
	if err := os.WriteFile(pager, []byte("#!/bin/sh\ncp \"$1\" "+got+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startScreen(t, TerminalOptions{Width: 100, Height: 30, Env: []string{"TZ=UTC", "HOME=" + dir, "PAGER=" + pager}}, bin, "--no-mcp", "--db", db, sid)
	if _, err := s.term.run("set", "-g", "set-clipboard", "on"); err != nil {
		t.Fatal(err)
	}
	s.see("Line of message 6.")

	// y: the message on the clipboard, through the terminal.
	s.keys("y")
	s.see("copied 1 message, 28 bytes")
	deadline := time.Now().Add(harnessWait)
	for {
		buf, _ := s.term.run("show-buffer")
		if buf == "--- user\nLine of message 6.\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmux's buffer holds %q after y", buf)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// p: the message in $PAGER, and the TUI back after it.
	s.keys("k", "p")
	deadline = time.Now().Add(harnessWait)
	for {
		b, err := os.ReadFile(got)
		if err == nil && string(b) == "--- user\nLine of message 5.\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pager got %q (%v)", b, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.see("Line of message 6.", "Reading out")

	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d", code)
	}
}

// TestSuspendAndResume runs weft from an interactive shell, as an
// operator does: ctrl+z stops it and gives the shell the terminal
// (a process the shell does not watch over could not stop: the kernel
// drops a stop signal to a process group no shell can resume), and fg
// brings its screen back.
func TestSuspendAndResume(t *testing.T) {
	needTmux(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to suspend weft to")
	}
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	sid := newThread(t, db, "Suspended", model.NewMessage{Role: model.RoleUser, Content: "Still here."})
	s := startScreen(t, TerminalOptions{Width: 100, Height: 30, Env: []string{"TZ=UTC", "HOME=" + dir, "PS1=shell$ "}}, bash, "--norc", "--noprofile", "-i")
	s.see("shell$")
	s.text(shellJoin([]string{bin, "--no-mcp", "--db", db, sid}))
	s.keys("Enter")
	s.see("Still here.", "Suspended")
	pane, err := s.term.PanePID()
	if err != nil {
		t.Fatal(err)
	}
	pid := processNamed(t, pane, "weft")
	s.keys("C-z")
	s.see("Stopped")
	if st := processState(t, pid); st != "T" {
		t.Fatalf("weft is %s after ctrl+z, not stopped", st)
	}
	s.text("fg")
	s.keys("Enter")
	s.see("Still here.", "Suspended")
	s.keys("q")
	s.see("shell$")
	s.text("exit")
	s.keys("Enter")
	if code := s.exited(); code != 0 {
		t.Fatalf("the shell exited with status %d", code)
	}
}
