package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"weft/internal/benchdata"
	"weft/store/boltstore"

	"github.com/creack/pty"

	"weft/ops"
)

// BenchmarkFirstFrame starts the real weft binary on a generated file in a
// pseudo-terminal (120x40, xterm-256color) and measures, from just before
// the exec:
//   - ms/frame: until the first complete frame is on the terminal (its
//     status bar says "at N/N", N the effective thread's length, which
//     only a frame over the loaded thread has);
//   - ms/bodies: until that frame shows the last message's text (its
//     header, "15:04 m1000000", replaces the placeholder once the bodies
//     are read);
//
// and the process's memory while it sits on the thread (MB-RSS, and
// MB-HWM, the peak so far), then again after scrolling a few dozen half
// pages up and back (MB-RSS-scrolled). It quits with q, as an operator
// does. ns/op includes the scrolling and quitting: read the metrics.
func BenchmarkFirstFrame(b *testing.B) {
	bin := benchWeftBinary(b)
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(benchdata.Label(n), func(b *testing.B) {
			db := benchdata.DB(b, n)
			last := benchdata.LastMessage(n)
			status := "/" + benchThousands(benchViewLen(b, db)) // "at 99,232/99,232": the status bar
			loaded := last.CreatedAt.UTC().Format("15:04") + " " + string(last.ID)
			var frame, bodies, rss, hwm, scrolled float64
			for b.Loop() {
				r := benchLaunch(b, bin, db, status, loaded)
				frame += r.frame.Seconds() * 1000
				bodies += r.bodies.Seconds() * 1000
				rss += r.rss
				hwm += r.hwm
				scrolled += r.scrolled
			}
			k := float64(b.N)
			b.ReportMetric(frame/k, "ms/frame")
			b.ReportMetric(bodies/k, "ms/bodies")
			b.ReportMetric(rss/k, "MB-RSS")
			b.ReportMetric(hwm/k, "MB-HWM")
			b.ReportMetric(scrolled/k, "MB-RSS-scrolled")
		})
	}
}

type benchRun struct {
	frame, bodies      time.Duration
	rss, hwm, scrolled float64 // MB
}

// benchLaunch runs weft once in a pseudo-terminal.
func benchLaunch(b *testing.B, bin, db, status, loaded string) benchRun {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), bin, "--db", db)
	cmd.Env = append(benchEnv(), "TERM=xterm-256color", "TZ=UTC")
	screen := &benchScreen{changed: make(chan struct{}, 1)}
	t0 := time.Now()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				screen.write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
		tty.Close()
		<-done
	}()

	var r benchRun
	frameAt, ok := screen.waitFor(status, 0, 60*time.Second)
	if !ok {
		b.Fatalf("no frame with %q within a minute; the terminal shows:\n%s", status, screen.tail())
	}
	r.frame = frameAt.Sub(t0)
	bodiesAt, ok := screen.waitFor(loaded, 0, 60*time.Second)
	if !ok {
		b.Fatalf("the last message (%q) was not shown within a minute; the terminal shows:\n%s", loaded, screen.tail())
	}
	r.bodies = bodiesAt.Sub(t0)
	screen.waitQuiet(300 * time.Millisecond)
	r.rss, r.hwm = benchMemory(b, cmd.Process.Pid)

	// Scroll: up a few dozen half pages, to the top, down again, to the
	// end; each step reads bodies the screen had not had.
	keys := strings.Repeat("\x15", 30) + "g" + strings.Repeat("\x04", 30) + "G" + strings.Repeat("k", 40)
	for _, k := range []byte(keys) {
		if _, err := tty.Write([]byte{k}); err != nil {
			b.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // keys as a fast typist sends them, not one paste
	}
	screen.waitQuiet(500 * time.Millisecond)
	r.scrolled, _ = benchMemory(b, cmd.Process.Pid)

	if _, err := tty.Write([]byte("q")); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the deferred cleanup
		if err != nil {
			b.Fatalf("weft exited with %v; the terminal shows:\n%s", err, screen.tail())
		}
	case <-time.After(10 * time.Second):
		b.Fatalf("weft did not quit within 10s of q; the terminal shows:\n%s", screen.tail())
	}
	return r
}

// benchViewLen is the length of the file's effective thread, which the
// status bar shows once the thread is loaded.
func benchViewLen(b *testing.B, db string) int {
	st, err := boltstore.Open(db, boltstore.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	_, v, err := ops.New(st).View(benchdata.SessionID)
	if err != nil {
		b.Fatal(err)
	}
	return v.Len()
}

// benchEnv is the environment without what would change what weft shows.
func benchEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "TERM", "TZ", "NO_COLOR", "WEFT_DB", "COLORTERM":
		default:
			env = append(env, kv)
		}
	}
	return env
}

// benchMemory reads a process's resident set and its peak, in MB.
func benchMemory(b *testing.B, pid int) (rss, hwm float64) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/status", pid)); err != nil {
		b.Skipf("no /proc to read memory from: %v", err)
	}
	// Decimal megabytes, as the unit MB says (benchstat reads it so).
	return float64(procStatusKB(b, pid, "VmRSS")) * 1024 / 1e6, float64(procStatusKB(b, pid, "VmHWM")) * 1024 / 1e6
}

// procStatusKB is a field of a process's /proc/PID/status in kB
// (VmRSS, VmHWM, RssAnon), or 0 when the process is gone.
func procStatusKB(b *testing.B, pid int, key string) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Errorf("/proc/%d/status: %q: %v", pid, line, err)
			}
			return kb
		}
	}
	return 0
}

var (
	benchBinOnce sync.Once
	benchBin     string
	benchBinErr  error
)

// benchWeftBinary builds weft once per run, into testdata/bench.
func benchWeftBinary(b *testing.B) string {
	benchBinOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			benchBinErr = fmt.Errorf("the go command is needed to build weft: %w", err)
			return
		}
		benchBin = filepath.Join(benchdata.Dir(b), "weft")
		out, err := exec.CommandContext(b.Context(), goTool, "build", "-o", benchBin, ".").CombinedOutput()
		if err != nil {
			benchBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if benchBinErr != nil {
		b.Fatal(benchBinErr)
	}
	return benchBin
}

func benchThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// benchScreen turns what a program writes to its terminal into the text
// it shows, well enough to look for words in it: escape sequences are
// dropped, except that a cursor movement ends a line, a cursor-forward
// becomes spaces and a repeat (REP) repeats, since a renderer that draws
// only what changed uses them in place of text.
type benchScreen struct {
	mu      sync.Mutex
	text    []byte
	marks   []benchMark
	changed chan struct{}

	state  int // 0 text, 1 after ESC, 2 CSI, 3 string (OSC, DCS, APC, PM), 4 ESC in a string, 5 charset
	params []byte
	last   []byte // the last character drawn, for REP
}

// benchMark records when the text reached a length.
type benchMark struct {
	n  int
	at time.Time
}

func (s *benchScreen) write(p []byte) {
	now := time.Now()
	s.mu.Lock()
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case 0:
			switch {
			case c == 0x1b:
				s.state = 1
			case c == '\n':
				s.text = append(s.text, '\n')
			case c < 0x20 || c == 0x7f:
			default:
				size := 1
				if c >= utf8.RuneSelf {
					_, size = utf8.DecodeRune(p[i:])
				}
				s.last = append(s.last[:0], p[i:i+size]...)
				s.text = append(s.text, p[i:i+size]...)
				i += size - 1
			}
		case 1:
			switch c {
			case '[':
				s.state, s.params = 2, s.params[:0]
			case ']', 'P', '_', '^', 'X':
				s.state = 3
			case '(', ')', '*', '+':
				s.state = 5
			default:
				s.state = 0
			}
		case 2:
			if c >= 0x40 && c <= 0x7e {
				s.csi(c)
				s.state = 0
			} else {
				s.params = append(s.params, c)
			}
		case 3:
			switch c {
			case 0x07:
				s.state = 0
			case 0x1b:
				s.state = 4
			}
		case 4:
			s.state = 0 // ESC \ ends the string
			if c != '\\' {
				s.state = 3
			}
		case 5:
			s.state = 0
		}
	}
	s.marks = append(s.marks, benchMark{len(s.text), now})
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *benchScreen) csi(final byte) {
	n := 1
	if v, err := strconv.Atoi(string(bytes.TrimLeft(s.params, "?>="))); err == nil && v > 0 {
		n = v
	}
	switch final {
	case 'C': // cursor forward
		s.text = append(s.text, bytes.Repeat([]byte{' '}, n)...)
	case 'b': // repeat the last character
		for range n {
			s.text = append(s.text, s.last...)
		}
	case 'H', 'f', 'A', 'B', 'E', 'F', 'G', 'd':
		s.text = append(s.text, '\n')
	}
}

// waitFor waits until the text from offset on contains want and returns
// when the write that completed it arrived.
func (s *benchScreen) waitFor(want string, from int, timeout time.Duration) (time.Time, bool) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		if i := bytes.Index(s.text[min(from, len(s.text)):], []byte(want)); i >= 0 {
			end := from + i + len(want)
			for _, m := range s.marks {
				if m.n >= end {
					s.mu.Unlock()
					return m.at, true
				}
			}
		}
		s.mu.Unlock()
		select {
		case <-s.changed:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// waitQuiet waits until nothing has been written for d.
func (s *benchScreen) waitQuiet(d time.Duration) {
	for {
		select {
		case <-s.changed:
		case <-time.After(d):
			return
		}
	}
}

// tail is the end of the text, for failure messages.
func (s *benchScreen) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.text[max(len(s.text)-3000, 0):])
}
