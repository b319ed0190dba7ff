package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigThread writes an OpenAI messages array of n short messages.
func bigThread(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("[")
	for i := range n {
		if i > 0 {
			w.WriteString(",")
		}
		role := [...]string{"user", "assistant"}[i%2]
		fmt.Fprintf(w, `{"role":%q,"content":"message %d of a long thread about rate limits and retries"}`, role, i)
	}
	w.WriteString("]")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// A large import draws a progress bar when stderr is a terminal, clears it
// when done, and writes no bar at all when stderr is not one.
func TestImportProgressOnATerminalOnly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("imports 200k messages")
	}
	file := bigThread(t, 200_000)

	var out bytes.Buffer
	onTTY, err := runOnTerminal(t, &out, "--db", filepath.Join(t.TempDir(), "tty.db"), "import", file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(onTTY)
	if !strings.Contains(s, "messages") || !strings.Contains(s, "big.json") || !strings.Contains(s, "\r\x1b[K") {
		t.Errorf("no progress bar drawn and cleared on the terminal: %q", s[:min(len(s), 400)])
	}

	var errOut bytes.Buffer
	out.Reset()
	if err := run(context.Background(), []string{"--db", filepath.Join(t.TempDir(), "pipe.db"), "import", file}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(errOut.String(), "\r\x1b") {
		t.Errorf("a bar was drawn on a stderr that is no terminal: %q", errOut.String())
	}
	if !strings.Contains(out.String()+errOut.String(), "200000 messages") && !strings.Contains(out.String()+errOut.String(), "200,000 messages") {
		t.Errorf("no report of the import: %q / %q", out.String(), errOut.String())
	}
}

// runOnTerminal runs the CLI with stderr on a pseudo-terminal (stdout to
// out) and returns what the terminal got, and run's error.
func runOnTerminal(t *testing.T, out io.Writer, args ...string) ([]byte, error) {
	t.Helper()
	return runOnPTY(t, args, func(tty io.Writer) (io.Writer, io.Writer) { return out, tty })
}
