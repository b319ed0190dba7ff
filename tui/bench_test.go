package tui

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/internal/benchdata"
	"weft/internal/english"
	"weft/ops/tools"
	"weft/store/boltstore"

	tea "charm.land/bubbletea/v2"

	"weft/demo"
	"weft/ops"
	"weft/store"
	"weft/tui/search"
)

// Benchmarks of the TUI over real files (see data_bench_test.go for the
// generated threads): a scroll step and a search keystroke, through the
// root model's Update and View as the program drives them. Build the files
// once with any benchmark run; they are cached under testdata/bench/.

const (
	benchWidth  = 120
	benchHeight = 40
)

// benchModel opens a generated n-message file read-only (so several
// benchmark processes can share it) and returns a model after its first
// load, sized like the terminal in the first-frame benchmark.
func benchModel(b *testing.B, n int) *Model {
	b.Helper()
	st, err := boltstore.Open(benchdata.DB(b, n), boltstore.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	m := New(tools.Local{Service: ops.New(st)}, Options{Theme: "dark"})
	benchDrain(m, m.loadView(""))
	if m.err != nil || m.view == nil {
		b.Fatalf("loading the %d-message session: %v", n, m.err)
	}
	_, cmd := m.Update(tea.WindowSizeMsg{Width: benchWidth, Height: benchHeight})
	benchDrain(m, cmd)
	return m
}

// benchDrain runs a command and everything that follows from it,
// synchronously, feeding each message back into the model as the program
// would. It must only be given commands that return at once (loads, not
// ticks); the status timer is skipped.
func benchDrain(m *Model, cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil, statusTimerMsg:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
}

var (
	benchKeyJ     = tea.KeyPressMsg{Code: 'j', Text: "j"}
	benchKeyK     = tea.KeyPressMsg{Code: 'k', Text: "k"}
	benchKeyCtrlD = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	benchKeyCtrlU = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
)

// benchReverse is the key that moves the other way.
func benchReverse(k tea.KeyPressMsg) tea.KeyPressMsg {
	switch k.String() {
	case "j":
		return benchKeyK
	case "k":
		return benchKeyJ
	case "ctrl+d":
		return benchKeyCtrlU
	case "ctrl+u":
		return benchKeyCtrlD
	}
	return k
}

// benchPercentiles reports p50, p90, p99 and max of ds (milliseconds).
func benchPercentiles(b *testing.B, ds []time.Duration, unit string) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(int(p*float64(len(ds))), len(ds)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.5), "p50-"+unit)
	b.ReportMetric(at(0.9), "p90-"+unit)
	if len(ds) >= 100 {
		b.ReportMetric(at(0.99), "p99-"+unit)
	}
	b.ReportMetric(float64(ds[len(ds)-1])/float64(time.Millisecond), "max-"+unit)
}

// BenchmarkFirstLoad is the in-process part of the first frame, from
// opening the file to the first screen rendered with the last messages'
// bodies: what cmd/weft's BenchmarkFirstFrame measures from outside, less
// process start and the terminal, so it can be profiled.
func BenchmarkFirstLoad(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(benchdata.Label(n), func(b *testing.B) {
			path := benchdata.DB(b, n)
			b.ReportAllocs()
			for b.Loop() {
				st, err := boltstore.Open(path, boltstore.Options{ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				m := New(tools.Local{Service: ops.New(st)}, Options{Theme: "dark"})
				benchDrain(m, m.loadView(""))
				_, cmd := m.Update(tea.WindowSizeMsg{Width: benchWidth, Height: benchHeight})
				benchDrain(m, cmd)
				if m.view == nil || !strings.Contains(m.render(), "/"+english.Thousands(m.view.Len())) {
					b.Fatalf("no status bar after the first load: %v", m.err)
				}
				st.Close()
			}
		})
	}
}

// BenchmarkScrollStep is one scroll step on a 120x40 screen: a key through
// Update, View, and then whatever the step asked for (loading the bodies
// that came into reach) run and fed back with a View after it, so ns/op is
// the whole cost of a step, loading included. The cursor starts mid-thread
// with nothing rendered or loaded and turns back at either end. Flat in
// thread length means 1M costs what 1k does.
func BenchmarkScrollStep(b *testing.B) {
	patterns := []struct {
		name string
		keys []tea.KeyPressMsg
	}{
		{"j", []tea.KeyPressMsg{benchKeyJ}},
		{"ctrl+d", []tea.KeyPressMsg{benchKeyCtrlD}},
		// An operator reading: a few lines, a half page, a look back.
		{"mix", []tea.KeyPressMsg{benchKeyJ, benchKeyJ, benchKeyJ, benchKeyCtrlD, benchKeyJ, benchKeyK, benchKeyJ, benchKeyCtrlD, benchKeyK, benchKeyCtrlU}},
	}
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(benchdata.Label(n), func(b *testing.B) {
			m := benchModel(b, n)
			for _, p := range patterns {
				b.Run(p.name, func(b *testing.B) {
					// Every run (-count runs each several times on the same
					// model) scrolls over rows it has not rendered yet.
					clear(m.lines)
					clear(m.bodies)
					m.jumpTo(m.view.Len() / 2)
					benchDrain(m, m.loadBodies())
					steps := make([]time.Duration, 0, 1<<16)
					forward := true
					i := 0
					b.ReportAllocs()
					for b.Loop() {
						k := p.keys[i%len(p.keys)]
						i++
						if !forward {
							k = benchReverse(k)
						}
						t0 := time.Now()
						_, cmd := m.Update(k)
						_ = m.View()
						if cmd != nil {
							benchDrain(m, cmd)
							_ = m.View()
						}
						if len(steps) < cap(steps) {
							steps = append(steps, time.Since(t0))
						}
						if last := m.rows.Len() - 1; forward && m.cursor >= last || !forward && m.cursor == 0 {
							forward = !forward
						}
					}
					benchPercentiles(b, steps, "ms")
				})
			}
		})
	}
}

// benchQueries are what an operator types into the search.
var benchQueries = []string{"pgsql", "retry", "database migration plan"}

func benchKey(r rune) tea.KeyPressMsg {
	if r == ' ' {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	return tea.KeyPressMsg{Code: r, Text: string(r)}
}

// benchAwaitSearch runs what a search keystroke returned the way the
// program does, every command on its own goroutine, and returns the search
// result among their messages. The others (the input's cursor blink) are
// left to finish on their own.
func benchAwaitSearch(tb testing.TB, cmd tea.Cmd) searchResultMsg {
	tb.Helper()
	out := make(chan tea.Msg, 16)
	var start func(tea.Cmd)
	start = func(c tea.Cmd) {
		go func() {
			msg := c()
			if batch, ok := msg.(tea.BatchMsg); ok {
				for _, c := range batch {
					if c != nil {
						start(c)
					}
				}
				return
			}
			out <- msg
		}()
	}
	if cmd == nil {
		tb.Fatal("a search keystroke returned no command")
	}
	start(cmd)
	timeout := time.After(time.Minute)
	for {
		select {
		case msg := <-out:
			if res, ok := msg.(searchResultMsg); ok {
				return res
			}
		case <-timeout:
			tb.Fatal("no search result within a minute")
		}
	}
}

// benchSearchLines writes the effective thread's text, one line per
// message line (blank lines left out), to a file for fzf, once per size.
func benchSearchLines(b *testing.B, m *Model, n int) (string, int) {
	path := filepath.Join(benchdata.Dir(b), fmt.Sprintf("weft-%s-v%d.lines", benchdata.Label(n), benchdata.Version))
	if data, err := os.ReadFile(path); err == nil {
		return path, bytes.Count(data, []byte{'\n'})
	}
	f, err := os.CreateTemp(filepath.Dir(path), "building-*.lines")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	lines := 0
	write := func(text []byte) {
		for line := range bytes.Lines(text) {
			line = bytes.TrimRight(line, "\r\n")
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			w.Write(line)
			w.WriteByte('\n')
			lines++
		}
	}
	v := m.view
	texts := make([][]byte, v.Len())
	err = m.svc.(tools.Local).Service.Store().View(func(tx store.Tx) error {
		return tx.ScanContent(v.SessionID, func(seq uint64, content []byte) bool {
			if i := v.IndexOfSeq(seq); i >= 0 {
				texts[i] = bytes.Clone(content)
			}
			return true
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	for i, it := range v.Items {
		if it.Seq == 0 {
			texts[i] = []byte(v.Synth[it.Synth].Content)
		}
		write(texts[i])
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		b.Fatal(err)
	}
	return path, lines
}

// benchCounter counts the lines written to it.
type benchCounter struct{ lines int }

func (c *benchCounter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// BenchmarkSearchKeystroke types each query into the search one character
// at a time, as an operator does: each keystroke goes through Update (its
// time is update-ms: what typing waits for), its matching command runs,
// and the result goes back through Update and View. Latency per keystroke
// is from the key to the result on screen, narrowed incrementally from
// the previous result as the TUI does. One op is the whole query. The fzf
// sub-benchmarks run `fzf --filter` over the same text, one process per
// prefix of the query, as the reference. The 1M thread is a separate
// size (its file takes a while to build the first time); run one size
// with -bench 'SearchKeystroke/100k/weft'.
func BenchmarkSearchKeystroke(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		benchSearchKeystroke(b, n)
	}
}

func benchSearchKeystroke(b *testing.B, n int) {
	b.Run(benchdata.Label(n), func(b *testing.B) {
		m := benchModel(b, n)
		for _, q := range benchQueries {
			name := "q=" + strings.ReplaceAll(q, " ", "_")
			b.Run("weft/"+name, func(b *testing.B) {
				var lat, upd []time.Duration
				hits := 0
				for b.Loop() {
					m.search = search.Panel{}
					_, _ = m.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
					if !m.search.IsOpen() {
						b.Fatal("/ did not open the search")
					}
					for _, r := range q {
						t0 := time.Now()
						_, cmd := m.Update(benchKey(r))
						upd = append(upd, time.Since(t0))
						res := benchAwaitSearch(b, cmd)
						m.Update(res)
						_ = m.View()
						lat = append(lat, time.Since(t0))
						if res.Err != nil {
							b.Fatal(res.Err)
						}
					}
					hits = len(m.search.Hits())
				}
				b.ReportMetric(float64(len(q)), "keys/op")
				b.ReportMetric(float64(hits), "hits")
				benchPercentiles(b, lat, "ms/key")
				slices.Sort(upd)
				b.ReportMetric(float64(upd[len(upd)-1])/float64(time.Millisecond), "max-update-ms")
			})
			b.Run("fzf/"+name, func(b *testing.B) {
				fzf, err := exec.LookPath("fzf")
				if err != nil {
					b.Skip("fzf is not installed (apt-get install -y fzf): no reference to compare with")
				}
				path, _ := benchSearchLines(b, m, n)
				var lat []time.Duration
				matched := 0
				for b.Loop() {
					for i := range q {
						f, err := os.Open(path)
						if err != nil {
							b.Fatal(err)
						}
						var c benchCounter
						cmd := exec.CommandContext(b.Context(), fzf, "--filter", q[:i+1])
						cmd.Stdin, cmd.Stdout, cmd.Stderr = f, &c, io.Discard
						t0 := time.Now()
						err = cmd.Run()
						lat = append(lat, time.Since(t0))
						f.Close()
						// fzf --filter exits 1 when nothing matches.
						if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
							b.Fatal(err)
						}
						matched = c.lines
					}
				}
				b.ReportMetric(float64(len(q)), "keys/op")
				b.ReportMetric(float64(matched), "lines")
				benchPercentiles(b, lat, "ms/key")
			})
		}
	})
}

// TestSearchKeystrokeDoesNotMatchInUpdate checks that a search keystroke
// only starts the matching: Update returns at once with a command, the
// results are not there yet, and they arrive as that command's message.
func TestSearchKeystrokeDoesNotMatchInUpdate(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	if _, err := demo.Seed(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	m := New(tools.Local{Service: svc}, Options{Theme: "dark"})
	benchDrain(m, m.loadView(""))
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	benchDrain(m, cmd)

	m.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	_, cmd = m.Update(benchKey('r'))
	if cmd == nil {
		t.Fatal("a search keystroke returned no command: nothing would match")
	}
	if len(m.search.Hits()) != 0 || m.search.Err() != nil {
		t.Fatalf("Update matched synchronously: %d hits, err %v", len(m.search.Hits()), m.search.Err())
	}
	if m.search.Query() != "r" || m.search.Value() != "r" {
		t.Fatalf("query %q, input %q after typing r", m.search.Query(), m.search.Value())
	}
	res := benchAwaitSearch(t, cmd)
	if res.Err != nil || res.Query != "r" || res.Seq != m.search.Seq() || len(res.Hits) == 0 {
		t.Fatalf("the command's result: query %q seq %d (want %d), %d hits, err %v", res.Query, res.Seq, m.search.Seq(), len(res.Hits), res.Err)
	}
	m.Update(res)
	if len(m.search.Hits()) != len(res.Hits) {
		t.Fatalf("%d hits shown, the result had %d", len(m.search.Hits()), len(res.Hits))
	}
	// The next keystroke narrows within the items that passed before.
	if m.search.State().Candidates() == 0 || m.search.State().Query() != "r" {
		t.Fatalf("no candidates kept for narrowing: %d for %q", m.search.State().Candidates(), m.search.State().Query())
	}
}
