package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"weft/e2e/internal/rig"
	"weft/model"
)

// requireEnv turns "tmux is missing" from a skip into a failure, for the
// CI job whose point is to run these tests.
const requireEnv = "WEFT_E2E_REQUIRE"

// harnessWait bounds every wait for the screen: generous, because CI runs
// these tests beside the whole race-enabled suite on two cores.
const harnessWait = 30 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	rig.Cleanup()
	os.Exit(code)
}

// needTmux skips the test when tmux is missing, unless the environment
// asks for these tests to run.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := TmuxPath(); err != nil {
		if os.Getenv(requireEnv) != "" {
			t.Fatalf("%v; %s is set, so the terminal tests must run", err, requireEnv)
		}
		t.Skipf("skipping the terminal tests: %v (set %s=1 to make this a failure)", err, requireEnv)
	}
}

// weftBinary builds cmd/weft once per test run.
func weftBinary(t testing.TB) string {
	t.Helper()
	return rig.Weft(t, "")
}

// weftCLI runs the binary outside the terminal and returns its stdout.
func weftCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), weftBinary(t), args...)
	cmd.Env = append(withoutEnv(os.Environ(), "WEFT_DB"), "TZ=UTC")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("weft %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// newThread makes a session titled title in db holding msgs, with the
// CLI as a user would, and returns its ID.
func newThread(t *testing.T, db, title string, msgs ...model.NewMessage) string {
	t.Helper()
	sid := strings.TrimSpace(weftCLI(t, "--db", db, "new", title))
	b, _ := json.Marshal(msgs)
	weftCLI(t, "--db", db, "call", "append_messages", "session_id="+sid, "messages="+string(b))
	return sid
}

// screen is a terminal under a test: every wait fails the test with the
// last screen when what it waits for does not show up.
type screen struct {
	t    *testing.T
	term *Terminal
	last string
}

func startScreen(t *testing.T, opts TerminalOptions, argv ...string) *screen {
	t.Helper()
	term, err := StartTerminal(opts, argv...)
	if err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, term: term}
	t.Cleanup(func() {
		if t.Failed() {
			if text, err := term.Capture(); err == nil {
				t.Logf("the screen when the test ended:\n%s", text)
			}
		}
		term.Close()
	})
	return s
}

// keys sends keys by tmux's names. After a lone Escape it waits for the
// screen to change: the program has then read the Escape alone, and
// cannot read it and the next key as one alt+key (as it would if the
// next came within its escape timeout). So an Escape is sent once the
// screen shows what came before it, and must change the screen.
func (s *screen) keys(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		var before string
		if k == "Escape" {
			before = s.capture()
		}
		if err := s.term.SendKeys(k); err != nil {
			s.t.Fatal(err)
		}
		if k == "Escape" {
			s.until("the screen to change after Escape", func(text string) bool { return text != before })
		}
	}
}

// text types text literally.
func (s *screen) text(text string) {
	s.t.Helper()
	if err := s.term.SendText(text); err != nil {
		s.t.Fatal(err)
	}
}

func (s *screen) capture() string {
	s.t.Helper()
	text, err := s.term.Capture()
	if err != nil {
		s.t.Fatal(err)
	}
	s.last = text
	return text
}

// until polls the screen until ok holds, and returns that screen.
func (s *screen) until(what string, ok func(string) bool) string {
	s.t.Helper()
	t0 := time.Now()
	text, seen := s.poll(ok, harnessWait)
	if d := time.Since(t0); d > 2*time.Second {
		s.t.Logf("waited %v for %s (slow)", d, what)
	}
	if !seen {
		s.t.Fatalf("waited %v for %s; the last screen was:\n%s", harnessWait, what, text)
	}
	return text
}

// expect is until for a check the rest of the test does not depend on:
// it reports the failure and lets the test go on.
func (s *screen) expect(what string, wait time.Duration, ok func(string) bool) bool {
	s.t.Helper()
	text, seen := s.poll(ok, wait)
	if !seen {
		s.t.Errorf("waited %v for %s; the last screen was:\n%s", wait, what, text)
	}
	return seen
}

// poll captures the screen until ok holds or wait has passed: soon after
// the last capture at first (a key's effect is mostly drawn within a few
// milliseconds), then every 25 ms.
func (s *screen) poll(ok func(string) bool, wait time.Duration) (string, bool) {
	s.t.Helper()
	deadline := time.Now().Add(wait)
	for tick := 5 * time.Millisecond; ; tick = min(2*tick, 25*time.Millisecond) {
		text := s.capture()
		if ok(text) {
			return text, true
		}
		if time.Now().After(deadline) {
			return text, false
		}
		time.Sleep(tick)
	}
}

// see waits until every string shows on the screen.
func (s *screen) see(want ...string) string {
	s.t.Helper()
	return s.until(fmt.Sprintf("%q on the screen", want), func(text string) bool {
		for _, w := range want {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	})
}

// gone waits until none of the strings shows on the screen.
func (s *screen) gone(unwanted ...string) string {
	s.t.Helper()
	return s.until(fmt.Sprintf("%q to leave the screen", unwanted), func(text string) bool {
		for _, w := range unwanted {
			if strings.Contains(text, w) {
				return false
			}
		}
		return true
	})
}

// match waits until the screen matches re, and returns the submatches.
func (s *screen) match(re *regexp.Regexp) []string {
	s.t.Helper()
	var sub []string
	s.until(fmt.Sprintf("the screen to match /%s/", re), func(text string) bool {
		sub = re.FindStringSubmatch(text)
		return sub != nil
	})
	return sub
}

// exited waits for the program to exit and returns its status.
func (s *screen) exited() int {
	s.t.Helper()
	deadline := time.Now().Add(harnessWait)
	for {
		dead, code, err := s.term.Exited()
		if err != nil {
			s.t.Fatal(err)
		}
		if dead {
			return code
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("waited %v for the program to exit; the last screen was:\n%s", harnessWait, s.capture())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// lineWith returns the first screen line containing sub, or "".
func lineWith(text, sub string) string {
	for line := range strings.Lines(text) {
		if strings.Contains(line, sub) {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}

// lastLine returns the screen's last line that is not blank.
func lastLine(text string) string {
	rows := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.TrimSpace(rows[len(rows)-1])
}
