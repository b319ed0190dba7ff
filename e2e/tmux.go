// Package e2e drives weft's real binary in a real terminal: tmux runs it,
// keystrokes go in through send-keys, and the screen comes back through
// capture-pane. It also reads VHS tapes, so demo.tape's tour can be
// replayed against the binary.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// Terminal is one private tmux server holding one pane of a fixed size.
// Its own socket keeps it apart from any tmux the user runs, and from the
// other tests' terminals.
type Terminal struct {
	tmux   string
	socket string
	target string
	dir    string // holds the server's config
}

// TerminalOptions size and set up the pane.
type TerminalOptions struct {
	Width, Height int
	// Env is added to the pane's environment (KEY=VALUE).
	Env []string
	// Dir is the pane's working directory; default: the test's.
	Dir string
}

var tmuxSerial atomic.Int64

// TmuxPath finds tmux, or says why it cannot.
func TmuxPath() (string, error) {
	p, err := exec.LookPath("tmux")
	if err != nil {
		return "", fmt.Errorf("tmux is not installed (apt-get install tmux): %w", err)
	}
	return p, nil
}

// StartTerminal starts a tmux server running argv in a pane of the given
// size. The pane stays after argv exits, so its last screen and exit
// status can still be read.
func StartTerminal(opts TerminalOptions, argv ...string) (*Terminal, error) {
	if len(argv) == 0 {
		return nil, errors.New("StartTerminal needs a command to run")
	}
	if opts.Width <= 0 || opts.Height <= 0 {
		return nil, fmt.Errorf("terminal size %dx%d: both must be positive", opts.Width, opts.Height)
	}
	tmux, err := TmuxPath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "weft-tmux-")
	if err != nil {
		return nil, err
	}
	// No status line (the pane gets every row), panes that stay after
	// their program exits, and nothing from the user's own config.
	conf := filepath.Join(dir, "tmux.conf")
	confText := "set -g status off\nset -g remain-on-exit on\nset -g history-limit 100\nset -g default-terminal xterm-256color\n"
	if err := os.WriteFile(conf, []byte(confText), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	term := &Terminal{
		tmux:   tmux,
		socket: fmt.Sprintf("weft-e2e-%d-%d", os.Getpid(), tmuxSerial.Add(1)),
		target: "e2e:0.0",
		dir:    dir,
	}
	// The command runs under env so that TERM and the test's variables
	// hold whatever shell tmux would use, and NO_COLOR from the caller's
	// environment never reaches the program under test.
	cmd := []string{"env", "-u", "NO_COLOR", "TERM=xterm-256color"}
	cmd = append(cmd, opts.Env...)
	cmd = append(cmd, argv...)
	args := []string{"-f", conf, "new-session", "-d", "-s", "e2e",
		"-x", strconv.Itoa(opts.Width), "-y", strconv.Itoa(opts.Height)}
	if opts.Dir != "" {
		args = append(args, "-c", opts.Dir)
	}
	args = append(args, shellJoin(cmd))
	if _, err := term.run(args...); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return term, nil
}

// run runs one tmux command against this terminal's server.
func (t *Terminal) run(args ...string) (string, error) {
	cmd := exec.CommandContext(context.Background(), t.tmux, append([]string{"-L", t.socket}, args...)...)
	// The server inherits this environment: drop what would tie it to a
	// tmux the tests themselves run in.
	cmd.Env = withoutEnv(os.Environ(), "TMUX", "TMUX_PANE", "NO_COLOR")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// SendKeys sends keys by tmux's names: "j", "Enter", "Escape", "C-d",
// "BSpace", "Space", "Tab", "Up".
func (t *Terminal) SendKeys(keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := t.run(append([]string{"send-keys", "-t", t.target}, keys...)...)
	return err
}

// SendText types text literally, as if pasted key by key.
func (t *Terminal) SendText(s string) error {
	if s == "" {
		return nil
	}
	_, err := t.run("send-keys", "-t", t.target, "-l", "--", s)
	return err
}

// Capture returns the pane's visible screen as plain text, one line per
// row, trailing spaces trimmed.
func (t *Terminal) Capture() (string, error) {
	return t.run("capture-pane", "-p", "-t", t.target)
}

// CaptureHistory is Capture with the lines scrolled off the top before
// it: what a program printed as it exited, at the bottom row, is there.
func (t *Terminal) CaptureHistory() (string, error) {
	return t.run("capture-pane", "-p", "-S", "-", "-t", t.target)
}

// Exited reports whether the pane's program has exited, and its status.
func (t *Terminal) Exited() (bool, int, error) {
	out, err := t.run("display-message", "-p", "-t", t.target, "#{pane_dead} #{pane_dead_status}")
	if err != nil {
		return false, 0, err
	}
	f := strings.Fields(out)
	if len(f) == 0 || f[0] != "1" {
		return false, 0, nil
	}
	if len(f) < 2 {
		return true, 0, nil
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return true, 0, fmt.Errorf("tmux reported exit status %q: %w", f[1], err)
	}
	return true, code, nil
}

// CursorY returns the row (0-based) the pane's cursor is on.
func (t *Terminal) CursorY() (int, error) {
	out, err := t.run("display-message", "-p", "-t", t.target, "#{cursor_y}")
	if err != nil {
		return 0, err
	}
	y, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("tmux reported cursor row %q: %w", strings.TrimSpace(out), err)
	}
	return y, nil
}

// PanePID returns the process ID of the pane's program (the first
// process tmux started in it).
func (t *Terminal) PanePID() (int, error) {
	out, err := t.run("display-message", "-p", "-t", t.target, "#{pane_pid}")
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("tmux reported pane pid %q: %w", strings.TrimSpace(out), err)
	}
	return pid, nil
}

// Size returns the pane's width and height.
func (t *Terminal) Size() (int, int, error) {
	out, err := t.run("display-message", "-p", "-t", t.target, "#{pane_width} #{pane_height}")
	if err != nil {
		return 0, 0, err
	}
	var w, h int
	if _, err := fmt.Sscanf(out, "%d %d", &w, &h); err != nil {
		return 0, 0, fmt.Errorf("tmux reported pane size %q: %w", strings.TrimSpace(out), err)
	}
	return w, h, nil
}

// Close kills the server and everything it runs.
func (t *Terminal) Close() error {
	_, err := t.run("kill-server")
	_ = os.RemoveAll(t.dir)
	return err
}

// shellJoin quotes argv for the shell tmux hands a command to.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			if name == n {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
