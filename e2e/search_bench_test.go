package e2e

import (
	"bufio"
	"bytes"
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
)

// BenchmarkInteractiveSearch types the same queries, a key at a time,
// into fzf's interactive finder and into weft's search, each running in
// tmux on the same 100k generated messages (fzf: their lines, one per
// line; weft: the benchmark file), and measures key to screen: from
// send-keys until the pane shows what it shows for that prefix once
// settled. The settled screens are learnt first, typing slowly; the
// timed runs then poll capture-pane (a few ms per poll, on the same two
// cores, for both programs alike). fzf's rows are skipped when it is not
// installed (apt-get install fzf).
func BenchmarkInteractiveSearch(b *testing.B) {
	if _, err := TmuxPath(); err != nil {
		b.Skip(err)
	}
	const n = 100_000
	db := benchdata.DB(b, n)
	lines := searchLinesFile(b, n)
	queries := []string{"pgsql", "retry", "database migration plan"}
	progs := []struct {
		name string
		argv func() []string
		open []string // keys that open the search
		// seen is what of the screen tells that a prefix's results are
		// shown: fzf's list of equal scores may come in another order
		// when typed fast, so for it the prompt and the count line.
		seen func(screen string) string
	}{
		{"fzf", func() []string {
			fzf, err := exec.LookPath("fzf")
			if err != nil {
				b.Skip("fzf is not installed (apt-get install fzf): no reference to compare with")
			}
			// fzf reads its input once, from a file, as it would from a pipe.
			return []string{"sh", "-c", fzf + " --no-mouse < " + lines}
		}, nil, bottomLines},
		{"weft", func() []string {
			cp := filepath.Join(b.TempDir(), "search.db")
			copyFile(b, db, cp)
			return []string{weftBinary(b), "--db", cp}
		}, []string{"/"}, func(s string) string { return s }},
	}
	for _, p := range progs {
		for _, q := range queries {
			b.Run(p.name+"/q="+strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
				term, err := StartTerminal(TerminalOptions{Width: 120, Height: 40}, p.argv()...)
				if err != nil {
					b.Fatal(err)
				}
				defer term.Close()
				settle(b, term, 60*time.Second) // the input read, the first frame drawn
				for _, k := range p.open {
					sendKey(b, term, k)
				}
				empty := settle(b, term, 10*time.Second)
				// The screens each prefix settles on, typed slowly.
				want := make([]string, len(q))
				for i := range q {
					sendText(b, term, q[i:i+1])
					want[i] = p.seen(settle(b, term, 30*time.Second))
				}
				clearQuery(b, term, empty)
				var per []time.Duration
				differed := 0
				for b.Loop() {
					for i := range q {
						t0 := time.Now()
						sendText(b, term, q[i:i+1])
						d := time.Duration(0)
						for p.seen(capture(b, term)) != want[i] {
							// A pause between polls leaves the cores
							// to the program measured.
							time.Sleep(time.Millisecond)
							if time.Since(t0) > 10*time.Second {
								// fzf typed fast can settle on another
								// count than typed slowly: then the time
								// is until its screen last changed.
								_, at := settleAt(b, term, 60*time.Second)
								d = at.Sub(t0)
								differed++
								break
							}
						}
						if d == 0 {
							d = time.Since(t0)
						}
						per = append(per, d)
					}
					clearQuery(b, term, empty)
				}
				slices.Sort(per)
				b.ReportMetric(float64(per[len(per)/2])/1e6, "p50-ms/key")
				b.ReportMetric(float64(per[len(per)*9/10])/1e6, "p90-ms/key")
				b.ReportMetric(float64(per[len(per)-1])/1e6, "max-ms/key")
				b.ReportMetric(float64(differed), "keys-settled-elsewhere")
			})
		}
	}
}

// bottomLines is the screen's last two lines that are not blank.
func bottomLines(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.Join(lines[max(len(lines)-2, 0):], "\n")
}

// clearQuery empties the query (ctrl+u in both programs) and waits for the
// screen of an empty query.
func clearQuery(b *testing.B, term *Terminal, empty string) {
	b.Helper()
	sendKey(b, term, "C-u")
	t0 := time.Now()
	for capture(b, term) != empty {
		if time.Since(t0) > 30*time.Second {
			b.Fatal("the query was not cleared")
		}
	}
}

// settle waits until the screen stays the same for 1.5 s (fzf, busy on
// a loaded machine, can leave its count unchanged for longer than 0.5 s).
func settle(b *testing.B, term *Terminal, limit time.Duration) string {
	b.Helper()
	s, _ := settleAt(b, term, limit)
	return s
}

// settleAt is settle, also returning when the screen last changed.
func settleAt(b *testing.B, term *Terminal, limit time.Duration) (string, time.Time) {
	b.Helper()
	t0 := time.Now()
	last, since := capture(b, term), time.Now()
	for time.Since(since) < 1500*time.Millisecond {
		if time.Since(t0) > limit {
			b.Fatalf("the screen did not settle within %v:\n%s", limit, last)
		}
		time.Sleep(20 * time.Millisecond)
		if s := capture(b, term); s != last {
			last, since = s, time.Now()
		}
	}
	return last, since
}

func capture(b *testing.B, term *Terminal) string {
	b.Helper()
	s, err := term.Capture()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func sendKey(b *testing.B, term *Terminal, k string) {
	b.Helper()
	if err := term.SendKeys(k); err != nil {
		b.Fatal(err)
	}
}

func sendText(b *testing.B, term *Terminal, s string) {
	b.Helper()
	if err := term.SendText(s); err != nil {
		b.Fatal(err)
	}
}

// searchLinesFile writes the generated messages' lines (blank ones left
// out) to a file for fzf, once, beside the benchmark files.
func searchLinesFile(b *testing.B, n int) string {
	path := filepath.Join(benchdata.Dir(b), fmt.Sprintf("weft-%s-v%d.messages.lines", benchdata.Label(n), benchdata.Version))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	f, err := os.CreateTemp(filepath.Dir(path), "building-*.lines")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	for _, text := range benchdata.Contents(n) {
		for line := range bytes.Lines(text) {
			line = bytes.TrimRight(line, "\r\n")
			if len(bytes.TrimSpace(line)) > 0 {
				w.Write(line)
				w.WriteByte('\n')
			}
		}
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
	return path
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	src, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		b.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		b.Fatal(err)
	}
}
