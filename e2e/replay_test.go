package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replayTape is the tape the README's recording comes from.
const replayTape = "../demo.tape"

// replayPrompt is the prompt VHS gives bash, and its default wait
// pattern.
const (
	replayPrompt      = "> "
	replayWaitPattern = ">$"
)

// replaySleepScale shortens the tape's pauses: they pace the recording
// for a viewer, while the replay relies on the tape's waits.
const (
	replaySleepScale = 10
	replaySleepMax   = 250 * time.Millisecond
)

// replayLaunchRE recognises the command that starts weft in the tape.
var replayLaunchRE = regexp.MustCompile(`^(?:go run \./cmd/weft|\S*weft)(?:\s+(.*))?$`)

// TestTapeReplay plays demo.tape's keystrokes through tmux against the
// real binary: the shell VHS would use, the tape's own command to start
// weft (with the freshly built binary), every key and text it types, and
// every Wait+Screen it claims, the last of which is the screen the tour
// ends on.
func TestTapeReplay(t *testing.T) {
	needTmux(t)
	t.Parallel()
	src, err := os.ReadFile(replayTape)
	if err != nil {
		t.Fatal(err)
	}
	tape, err := ParseTape(string(src))
	if err != nil {
		t.Fatalf("%s: %v", replayTape, err)
	}
	launch, env := replayCheckTape(t, tape)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("the tape's shell, bash, is not installed: %v", err)
	}
	bin := weftBinary(t)

	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	status := filepath.Join(dir, "status")
	env = append(env,
		"PS1="+replayPrompt,
		// Every prompt records the exit status of the command before it.
		"PROMPT_COMMAND=echo $? >> "+status,
		"HISTFILE=/dev/null",
		"HOME="+dir,
		"TMPDIR="+tmp,
		"TZ=UTC",
	)
	s := startScreen(t, TerminalOptions{Width: 120, Height: 40, Env: env, Dir: dir},
		bash, "--noprofile", "--norc", "-i")
	s.until("the shell's prompt", func(text string) bool { return lastLine(text) == strings.TrimSpace(replayPrompt) })

	claim := -1 // the last Wait+Screen
	for i := launch; i < len(tape.Commands); i++ {
		c := tape.Commands[i]
		switch c.Kind {
		case TapeType:
			text := c.Text
			if i == launch {
				m := replayLaunchRE.FindStringSubmatch(text)
				text = shellJoin([]string{bin})
				if m[1] != "" {
					text += " " + m[1]
				}
			}
			s.text(text)
		case TapeKey:
			for range c.Count {
				s.keys(c.TmuxKey())
			}
		case TapeSleep:
			time.Sleep(min(c.Duration/replaySleepScale, replaySleepMax))
		case TapeWait:
			replayWait(t, s, c)
			if c.Screen {
				claim = i
			}
		case TapeEnv, TapeHide, TapeShow, TapeOutput, TapeSet, TapeRequire, TapeScreenshot:
			// They shape the recording, or come before the launch.
		}
	}
	if claim < 0 || !replayOnlyPauses(tape.Commands[claim+1:]) {
		t.Fatalf("%s must end with the Wait+Screen that states the screen it ends on", replayTape)
	}

	// The tour quits weft: its exit status is the last one the shell saw,
	// and its scratch file is gone.
	statuses, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(statuses))
	if len(lines) < 2 {
		t.Fatalf("the shell recorded %q: weft never returned to the prompt", statuses)
	}
	if code, _ := strconv.Atoi(lines[len(lines)-1]); code != 0 {
		t.Errorf("weft demo exited with status %d; the screen was:\n%s", code, s.capture())
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("weft demo left %s in its temporary directory", e.Name())
	}
}

// replayCheckTape checks what the tape does before it starts weft and
// returns the launch command's index and the tape's environment. Only
// setup may come first: settings, and hidden commands (the build), which
// the replay replaces with its own.
func replayCheckTape(t *testing.T, tape *Tape) (int, []string) {
	t.Helper()
	var env []string
	hidden := false
	for i, c := range tape.Commands {
		switch c.Kind {
		case TapeHide:
			hidden = true
		case TapeShow:
			hidden = false
		case TapeEnv:
			env = append(env, c.Text+"="+c.Value)
		case TapeOutput, TapeSet, TapeRequire:
		case TapeType:
			if !hidden && replayLaunchRE.MatchString(c.Text) {
				return i, env
			}
			if !hidden {
				t.Fatalf("%s line %d types %q before it starts weft; only hidden setup may come first", replayTape, c.Line, c.Text)
			}
		default:
			if !hidden {
				t.Fatalf("%s line %d: %s comes before the tape starts weft; only hidden setup may come first", replayTape, c.Line, c)
			}
		}
	}
	t.Fatalf("%s never starts weft: no visible Type \"weft …\" (or \"go run ./cmd/weft …\")", replayTape)
	return 0, nil
}

// replayWait waits as VHS would: Wait+Screen matches the whole screen
// (its rows joined by newlines), Wait and Wait+Line the cursor's line.
func replayWait(t *testing.T, s *screen, c TapeCommand) {
	t.Helper()
	re := c.Regexp
	if re == nil {
		re = regexp.MustCompile(replayWaitPattern)
	}
	what := fmt.Sprintf("%s line %d: %s", replayTape, c.Line, c)
	if c.Screen {
		s.until(what, func(text string) bool { return re.MatchString(replayScreen(text)) })
		return
	}
	s.until(what, func(text string) bool {
		y, err := s.term.CursorY()
		if err != nil {
			t.Fatal(err)
		}
		rows := strings.Split(replayScreen(text), "\n")
		return y < len(rows) && re.MatchString(rows[y])
	})
}

// replayScreen is the screen as VHS reads it: every row, trailing
// spaces trimmed, joined by newlines.
func replayScreen(text string) string {
	return strings.TrimSuffix(text, "\n")
}

// replayOnlyPauses reports whether the commands only pause or shape the
// recording: what may follow the final claim.
func replayOnlyPauses(cmds []TapeCommand) bool {
	for _, c := range cmds {
		switch c.Kind {
		case TapeSleep, TapeScreenshot, TapeHide, TapeShow:
		default:
			return false
		}
	}
	return true
}
