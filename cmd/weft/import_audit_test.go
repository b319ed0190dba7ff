package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// weftErr runs the CLI in-process and returns stdout, stderr (where run
// prints a refusal, as main's user sees it) and the exit code main would
// use.
func weftErr(t *testing.T, db string, args ...string) (string, string, int) {
	t.Helper()
	out, errOut, code, _ := runCLI(db, args...)
	return out, errOut, code
}

// sessionCount is how many sessions weft ls counts in db: "0" when there
// is no db at all.
func sessionCount(t *testing.T, db string) string {
	t.Helper()
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return "0"
	}
	out, _, _ := weft(t, db, "ls", "--json")
	i := strings.Index(out, `"total": `)
	if i < 0 {
		t.Fatalf("ls --json: %s", out)
	}
	// Fields may follow total (the fit of the result): its line may end
	// in a comma.
	return strings.TrimSuffix(strings.TrimSpace(strings.SplitN(out[i+len(`"total": `):], "\n", 2)[0]), ",")
}

func TestImportDirectoryOrMissingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "d.db")
	for _, tt := range []struct{ path, says string }{
		{dir, dir + " is a directory"},
		{filepath.Join(dir, "nosuch.jsonl"), filepath.Join(dir, "nosuch.jsonl") + " does not exist"},
	} {
		out, errOut, code := weftErr(t, db, "import", tt.path)
		if code != 1 || !strings.Contains(errOut, tt.says) || strings.Contains(errOut, "unknown format") {
			t.Errorf("import %s: exit %d\nout: %s\nerr: %s\nwant %q", tt.path, code, out, errOut, tt.says)
		}
	}
	if n := sessionCount(t, db); n != "0" {
		t.Errorf("a refused import left %s sessions", n)
	}
}

// A Claude Code session whose first line is cut off is told and imported
// without --format.
func TestImportDetectsPastABrokenFirstLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(data, "claude-code/spotter_long_session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(p, append([]byte(`{"type":"file-hist`), src[bytes.IndexByte(src, '\n'):]...), 0o600)
	out, errOut, _ := weftErr(t, filepath.Join(dir, "c.db"), "import", p)
	if !strings.Contains(out, "292 messages imported into 1 session") || !strings.Contains(errOut, "line 1: not JSON") {
		t.Fatalf("out: %s\nerr: %s", out, errOut)
	}
}

// weft ls shows the stored (raw) and the effective tokens, as weft show
// does; ls --json carries both.
func TestLsShowsRawAndEffectiveTokens(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "ls.db")
	weft(t, db, "new", "empty")
	if _, code, err := weft(t, db, "import", filepath.Join(data, "claude-code/spotter_long_session.jsonl")); code != 0 {
		t.Fatal(err)
	}
	show, _, _ := weft(t, db, "show")
	if !strings.Contains(show, "166,143 → 51,457 tokens") {
		t.Fatalf("show: %.300s", show)
	}
	out, _, _ := weft(t, db, "ls")
	if !strings.Contains(out, "EFFECTIVE") || !regexp.MustCompile(`\b292\s+166,143\s+51,457\s+1\b`).MatchString(out) ||
		!regexp.MustCompile(`\s0\s+0\s+0\s+0\s+[0-9-]+ [0-9:]+\s+empty\b`).MatchString(out) {
		t.Errorf("ls:\n%s", out)
	}
	out, _, _ = weft(t, db, "ls", "--json")
	var ls struct {
		Sessions []struct {
			Title           string `json:"title"`
			Tokens          int    `json:"tokens"`
			EffectiveTokens *int   `json:"effective_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Sessions) != 2 {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	for _, s := range ls.Sessions {
		want := [2]int{0, 0}
		if s.Title != "empty" {
			want = [2]int{166143, 51457}
		}
		if s.EffectiveTokens == nil || [2]int{s.Tokens, *s.EffectiveTokens} != want {
			t.Errorf("ls --json %q: tokens %d, effective %v; want %v", s.Title, s.Tokens, s.EffectiveTokens, want)
		}
	}
}

// A file of many conversations imported into one session: every message
// is kept, the report counts one session, and importing it again adds
// nothing.
func TestImportManyThreadsIntoOneSession(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "s.db")
	file := filepath.Join(data, "sharegpt/fastchat_dummy_conversation.json")
	out, _, code := weftErr(t, db, "import", "--session", "merged", file)
	if code != 0 || !strings.Contains(out, "2,000 messages imported into 1 session (1 new)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, _, code = weftErr(t, db, "import", "--session", "merged", file)
	if code != 0 || !strings.Contains(out, "nothing new: 1 session already imported") {
		t.Fatalf("again: exit %d:\n%s", code, out)
	}
	if n := sessionCount(t, db); n != "1" {
		t.Errorf("%s sessions, want 1", n)
	}
}

// brokenWeftExport exports a session of spotter_tool_heavy.jsonl with a
// few operations as weft JSONL, and breaks the line of message m6, which
// one operation alone acts on.
func brokenWeftExport(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "src.db")
	if _, code, err := weft(t, db, "import", filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")); code != 0 {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tag_messages", `{"ids":["m1","m2"],"tags":["early"]}`},
		{"tag_messages", `{"ids":["m6"],"tags":["six"]}`},
		{"digest_messages", `{"ids":["m5","m6","m7"],"summary":"three messages"}`},
	} {
		if _, code, err := weft(t, db, append([]string{"call"}, args...)...); code != 0 {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.jsonl")
	if _, code, err := weft(t, db, "export", "--format", "jsonl", "-o", path); code != 0 {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	if !strings.Contains(lines[6], `"seq":6`) {
		t.Fatalf("line 7 is not m6: %.100s", lines[6])
	}
	lines[6] = "{broken"
	os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600)
	return path
}

func TestImportWeftWithABrokenLineKeepsItsOperations(t *testing.T) {
	t.Parallel()
	path := brokenWeftExport(t)
	db := filepath.Join(t.TempDir(), "dst.db")
	out, errOut, code := weftErr(t, db, "import", path)
	if code != 1 {
		t.Errorf("exit %d, want 1: a line and an operation were not imported", code)
	}
	for _, says := range []string{"16 messages as new session", "2 operations (1 not imported)", "16 messages imported into 1 session (1 new); 1 record could not be read; 1 operation not imported"} {
		if !strings.Contains(out, says) {
			t.Errorf("out does not say %q:\n%s", says, out)
		}
	}
	for _, says := range []string{"line 7: not JSON", "(tag) not imported: none of its targets (m6) was imported", "(digest): 1 of its 3 targets (m6) were not imported",
		"imported in part: 1 record could not be read, 1 operation had nothing left to act on"} {
		if !strings.Contains(errOut, says) {
			t.Errorf("stderr does not say %q:\n%s", says, errOut)
		}
	}
	ls, _, _ := weft(t, db, "ls", "--json")
	if !strings.Contains(ls, `"message_count": 16`) || !strings.Contains(ls, `"op_count": 2`) {
		t.Errorf("ls: %s", ls)
	}
}

// A Claude Code session with a broken line: every other message is
// imported, the report says the thread is joined across the line, and
// weft import exits 1; importing the repaired file then adds nothing out
// of order and says what it could not do.
func TestImportClaudeCodeWithABrokenLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	whole := filepath.Join(data, "claude-code/spotter_long_session.jsonl")
	src, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	broken := func(n int) string {
		lines := strings.Split(string(src), "\n")
		lines[n-1] = "{broken"
		p := filepath.Join(dir, fmt.Sprintf("broken%d.jsonl", n))
		os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600)
		return p
	}
	for _, tt := range []struct {
		line     int
		imported string
		again    string // importing the repaired file afterwards
		code     int
	}{
		// one block of an assistant reply: the reply is kept without it
		{1000, "292 messages imported into 1 session (1 new); 1 record could not be read",
			"nothing added; 292 messages were already there; 1 message already there differs in the file (kept as first imported)", 0},
		// a tool result: it cannot be put back between stored messages
		{998, "291 messages imported into 1 session (1 new); 1 record could not be read",
			"nothing added; 291 messages were already there; 1 message not added: it belongs before messages already there", 1},
	} {
		db := filepath.Join(dir, fmt.Sprintf("cc%d.db", tt.line))
		out, errOut, code := weftErr(t, db, "import", broken(tt.line))
		if code != 1 || !strings.Contains(out, tt.imported) ||
			!strings.Contains(errOut, fmt.Sprintf("line %d: not JSON", tt.line)) || !strings.Contains(errOut, "the thread is joined across it") ||
			!strings.Contains(errOut, "imported in part: 1 record could not be read") {
			t.Errorf("line %d broken: exit %d\nout: %s\nerr: %s", tt.line, code, out, errOut)
		}
		out, errOut, code = weftErr(t, db, "import", whole)
		if code != tt.code || !strings.Contains(out, tt.again) {
			t.Errorf("line %d repaired: exit %d, want %d\nout: %s\nerr: %s", tt.line, code, tt.code, out, errOut)
		}
		ls, _, _ := weft(t, db, "ls", "--json")
		if !strings.Contains(ls, fmt.Sprintf(`"message_count": %d`, 292-(1000-tt.line)/2)) {
			t.Errorf("line %d: the repaired file changed the session: %s", tt.line, ls)
		}
	}
	// A clean file: exit 0.
	if _, errOut, code := weftErr(t, filepath.Join(dir, "clean.db"), "import", whole); code != 0 {
		t.Errorf("a clean file: exit %d\n%s", code, errOut)
	}
}
