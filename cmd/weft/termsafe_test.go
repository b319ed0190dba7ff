package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The escape sequences a hostile thread may carry: a window title, a
// clipboard write, a screen clear, and a carriage return that goes back
// over what was printed.
var hostileSeqs = []string{"\x1b]0;pwned\x07", "\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b[2J", "\r\x1b[1A\x1b[K"}

// hostileThread writes a weft JSONL file whose title, message contents,
// tags and operation author carry every sequence of hostileSeqs.
func hostileThread(t *testing.T) string {
	t.Helper()
	all := strings.Join(hostileSeqs, " ")
	line := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	type msg struct {
		ID        string `json:"id"`
		Seq       int    `json:"seq"`
		Role      string `json:"role"`
		Content   string `json:"content"`
		CreatedAt string `json:"created_at"`
	}
	var b strings.Builder
	b.WriteString(line(map[string]any{"weft": 1, "type": "session", "session": map[string]any{
		"id": "hostile0000000001", "title": "evil " + all, "created_at": "2026-01-02T10:00:00Z", "updated_at": "2026-01-02T10:05:00Z",
	}}))
	for i, s := range append(hostileSeqs, "all of them: "+all+"\nand a second line") {
		b.WriteString(line(map[string]any{"type": "message", "message": msg{
			ID: "m" + string(rune('1'+i)), Seq: i + 1, Role: []string{"user", "assistant"}[i%2],
			Content: "before " + s + " after", CreatedAt: "2026-01-02T10:0" + string(rune('0'+i)) + ":00Z",
		}}))
	}
	b.WriteString(line(map[string]any{"type": "op", "op": map[string]any{
		"id": "0000hostileop0001", "type": "snip", "targets": []string{"m2"}, "payload": map[string]any{},
		"active": true, "created_at": "2026-01-02T10:06:00Z", "author": "agent " + all, "version": 7,
	}}))
	b.WriteString(line(map[string]any{"type": "op", "op": map[string]any{
		"id": "0000hostileop0002", "type": "tag", "targets": []string{"m1"}, "payload": map[string]any{"tags": []string{"t\x1b]0;x\x07"}},
		"active": true, "created_at": "2026-01-02T10:07:00Z", "author": "operator", "version": 8,
	}}))
	path := filepath.Join(t.TempDir(), "hostile.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rawControls lists the control characters in s other than newline and
// tab, which reach a terminal's control channel when printed.
func rawControls(s string) []rune {
	var found []rune
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) {
			found = append(found, r)
		}
	}
	return found
}

// weft ls and weft show print what an imported thread carries without
// letting its escape sequences act on the terminal: each shows as a
// picture (␛ for ESC), nothing is dropped, and the JSON forms, which are
// data, keep the text exact.
func TestHostileTextIsShownNotObeyed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "hostile.db")
	if out, code, err := weft(t, db, "import", hostileThread(t)); code != 0 {
		t.Fatalf("import: exit %d (%v)\n%s", code, err, out)
	}
	for _, args := range [][]string{{"ls"}, {"show"}, {"show", "--raw"}, {"show", "evil " + strings.Join(hostileSeqs, " ")}} {
		out, errOut, code, err := runCLI(db, args...)
		if code != 0 {
			t.Fatalf("weft %v: exit %d (%v)\n%s", args, code, err, errOut)
		}
		if raw := rawControls(out + errOut); len(raw) > 0 {
			t.Errorf("weft %v printed raw controls %q:\n%s", args, raw, out)
		}
		if !strings.Contains(out, "␛]0;pwned␇") {
			t.Errorf("weft %v does not show the title sequence as ␛]0;pwned␇:\n%s", args, out)
		}
	}
	out, _, _, _ := runCLI(db, "show")
	for _, want := range []string{"␛]52;c;cm0gLXJmIH4=␇", "␛[2J", "␍␛[1A␛[K", "by agent ␛]0;pwned␇", "#t␛]0;x␇", "and a second line"} {
		if !strings.Contains(out, want) {
			t.Errorf("weft show does not show %q:\n%s", want, out)
		}
	}
	// An error that quotes what the thread carries shows it too.
	_, errOut, code, err := runCLI(db, "show", "no such \x1b]0;x\x07 session")
	if code != 1 || len(rawControls(errOut+err.Error())) > 0 {
		t.Errorf("a refusal quoting the session asked for: exit %d, %q", code, errOut)
	}
	// JSON is data: the text is exact once read back, and still escaped
	// on the wire.
	for _, args := range [][]string{{"ls", "--json"}, {"show", "--json"}, {"call", "get_message_range", "start_idx=0", "end_idx=3", "view=raw"}} {
		out, _, code, err := runCLI(db, args...)
		if code != 0 {
			t.Fatalf("weft %v: %v", args, err)
		}
		if raw := rawControls(out); len(raw) > 0 {
			t.Errorf("weft %v printed raw controls %q", args, raw)
		}
		if !strings.Contains(out, `\u001b]0;pwned\u0007`) {
			t.Errorf("weft %v does not carry the sequence, escaped:\n%s", args, out)
		}
	}
}

// An export is data: to a file or a pipe it is exact, control characters
// and all; on a terminal, where people read it, they are shown instead.
func TestExportIsExactButNotOnATerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "hostile.db")
	if out, code, err := weft(t, db, "import", hostileThread(t)); code != 0 {
		t.Fatalf("import: exit %d (%v)\n%s", code, err, out)
	}
	md, _, _ := weft(t, db, "export", "--format", "markdown")
	if !strings.Contains(md, "\x1b]0;pwned\x07") {
		t.Errorf("the markdown export to a pipe is not exact:\n%q", md)
	}
	for _, format := range []string{"markdown", "openai", "jsonl"} {
		var errOut bytes.Buffer
		onTTY, err := runOnTerminalOut(t, &errOut, "--db", db, "export", "--format", format)
		if err != nil {
			t.Fatalf("export --format %s on a terminal: %v (%s)", format, err, errOut.String())
		}
		if strings.ContainsAny(string(onTTY), "\x1b\x07") || len(onTTY) < 100 {
			t.Errorf("export --format %s on a terminal printed raw controls:\n%q", format, onTTY)
		}
		if format == "markdown" && !strings.Contains(string(onTTY), "␛]0;pwned␇") {
			t.Errorf("the markdown export on a terminal does not show the sequence:\n%s", onTTY)
		}
	}
}

// runOnTerminalOut runs the CLI with stdout on a pseudo-terminal (stderr
// to errOut) and returns what the terminal got, and run's error.
func runOnTerminalOut(t *testing.T, errOut io.Writer, args ...string) ([]byte, error) {
	t.Helper()
	return runOnPTY(t, args, func(tty io.Writer) (io.Writer, io.Writer) { return tty, errOut })
}

// runOnPTY runs the CLI with the outputs wire chooses, one of them a
// pseudo-terminal, and returns what the terminal got, and run's error.
func runOnPTY(t *testing.T, args []string, wire func(tty io.Writer) (stdout, stderr io.Writer)) ([]byte, error) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	seen := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, ptmx)
		seen <- b.Bytes()
	}()
	stdout, stderr := wire(tty)
	err = run(context.Background(), args, stdout, stderr)
	tty.Close()
	select {
	case b := <-seen:
		return b, err
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	return nil, err
}

// reordering is a title and a body with the characters that reorder a
// line or hide between letters: printed raw, the title reads
// "invoice exe.pdf".
const (
	reorderingTitle = "invoice \u202efdp.exe"
	reorderingBody  = "pay\u200bpal \u2066isolated\u2069 \u202aembedded\u202c \u200emark\u200f \u061carabic \u200c\u200d\u2060 \ufeffbom \u202dforced\u202c"
)

// hidesText lists the characters of s that reorder or hide text.
func hidesText(s string) []rune {
	var found []rune
	for _, r := range s {
		if (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x061c || r == 0x2060 || r == 0xfeff {
			found = append(found, r)
		}
	}
	return found
}

// weft ls and weft show show the characters that reorder or hide text
// as marks (\u202e), in the text and the JSON forms alike; the file
// keeps them as they came.
func TestReorderingTextIsShown(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "bidi.db")
	if _, errOut, code, err := runCLI(db, "new", reorderingTitle); code != 0 {
		t.Fatalf("new: %v\n%s", err, errOut)
	}
	msgs, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": reorderingBody}}})
	if _, errOut, code, err := runCLI(db, "call", "append_messages", string(msgs)); code != 0 {
		t.Fatalf("append_messages: %v\n%s", err, errOut)
	}
	for _, args := range [][]string{{"ls"}, {"show"}, {"show", "--raw"}, {"ls", "--json"}, {"show", "--json"}} {
		out, errOut, code, err := runCLI(db, args...)
		if code != 0 {
			t.Fatalf("weft %v: %v\n%s", args, err, errOut)
		}
		if raw := hidesText(out + errOut); len(raw) > 0 {
			t.Errorf("weft %v printed %U raw:\n%s", args, raw, out)
		}
		if !slices.Equal(args, []string{"show", "--json"}) && !strings.Contains(out, `invoice \u202efdp.exe`) {
			t.Errorf("weft %v does not show the title as invoice \\u202efdp.exe:\n%s", args, out)
		}
		if args[0] == "show" && !strings.Contains(out, `pay\u200bpal \u2066isolated\u2069`) {
			t.Errorf("weft %v does not show the body's marks:\n%s", args, out)
		}
	}
	// Read back, the JSON holds the text as it was stored: verbatim.
	out, _, _, _ := runCLI(db, "show", "--json")
	var got struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].Content != reorderingBody {
		t.Errorf("the stored text changed: %+q", got)
	}
	out, _, _, _ = runCLI(db, "ls", "--json")
	if !strings.Contains(out, `"title": "invoice \u202efdp.exe"`) {
		t.Errorf("ls --json: %s", out)
	}
	var ls struct {
		Sessions []struct {
			Title string `json:"title"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Sessions) != 1 || ls.Sessions[0].Title != reorderingTitle {
		t.Errorf("the stored title changed: %+q (%v)", ls, err)
	}
}
