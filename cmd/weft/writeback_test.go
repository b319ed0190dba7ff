package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"weft/formats/export"
)

// transcriptRecords reads a transcript's user and assistant records.
func transcriptRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if r["type"] == "user" || r["type"] == "assistant" {
			recs = append(recs, r)
		}
	}
	return recs
}

var resumeLine = regexp.MustCompile(`claude --resume ([0-9a-f-]{36})`)

// weft export --format claude-code --project DIR writes the effective
// thread into Claude Code's folder for DIR, under a new session ID, and
// says how to resume it; importing that file gives the same thread.
func TestExportClaudeCodeIntoProject(t *testing.T) {
	claude := filepath.Join(t.TempDir(), "claude-config")
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	db := filepath.Join(t.TempDir(), "wb.db")
	if _, code, err := weft(t, db, "import", filepath.Join(data, "claude-code/spotter_tool_heavy.jsonl")); code != 0 {
		t.Fatal(err)
	}
	if _, code, err := weft(t, db, "call", "digest_messages", "start_idx=5", "end_idx=9", "summary=Local commands and an interrupted request."); code != 0 {
		t.Fatal(err)
	}
	sid, _, _ := weft(t, db, "ls", "--json")
	var ls struct{ Sessions []struct{ ID string } }
	json.Unmarshal([]byte(sid), &ls)
	original := ls.Sessions[0].ID

	project := filepath.Join(t.TempDir(), "my.project_x")
	os.Mkdir(project, 0o700)
	// Claude Code names the folder after the real path, links resolved.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	out, errOut, code, err := runCLI(db, "export", original, "--format", "claude-code", "--project", link)
	if code != 0 {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	real, _ := filepath.EvalSymlinks(project)
	folder := filepath.Join(claude, "projects", export.ClaudeCodeProjectDir(real))
	if want := strings.NewReplacer("/", "-", ".", "-", "_", "-").Replace(real); filepath.Base(folder) != want {
		t.Errorf("folder %s, want %s", filepath.Base(folder), want)
	}
	files, _ := filepath.Glob(filepath.Join(folder, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d transcripts in %s, want 1; export said:\n%s%s", len(files), folder, out, errOut)
	}
	m := resumeLine.FindStringSubmatch(out)
	if m == nil || filepath.Base(files[0]) != m[1]+".jsonl" || !strings.Contains(out, files[0]) || !strings.Contains(out, "cd "+real) {
		t.Fatalf("export said:\n%s\nwant the file %s and the line to resume it", out, files[0])
	}
	for _, r := range transcriptRecords(t, files[0]) {
		if r["cwd"] != real || r["sessionId"] != m[1] {
			t.Fatalf("record %v: want cwd %s, session %s", r, real, m[1])
		}
	}
	if st, _ := os.Stat(files[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("the transcript is %v, want 0600", st.Mode().Perm())
	}

	// Imported again: a session of its own, with the same thread.
	said, code, err := weft(t, db, "import", files[0])
	back := regexp.MustCompile(`as new session (\S+)`).FindStringSubmatch(said)
	if code != 0 || back == nil {
		t.Fatalf("import of the transcript: %v\n%s", err, said)
	}
	a, _, _ := weft(t, db, "export", original, "--format", "anthropic")
	b, _, _ := weft(t, db, "export", back[1], "--format", "anthropic")
	if a != b || len(a) < 1000 {
		t.Errorf("the thread changed on its way through Claude Code's format:\n%.600s\n---\n%.600s", a, b)
	}

	// -o FILE: the file, and where to put it.
	path := filepath.Join(t.TempDir(), "t.jsonl")
	out, errOut, code, err = runCLI(db, "export", original, "--format", "claude-code", "-o", path)
	m = resumeLine.FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, filepath.Join(claude, "projects")) {
		t.Fatalf("export -o: %v\n%s%s", err, out, errOut)
	}
	if recs := transcriptRecords(t, path); len(recs) == 0 || recs[0]["sessionId"] != m[1] {
		t.Errorf("-o wrote %d records for session %s", len(recs), m[1])
	}
	// To stdout: the transcript there, the session on stderr.
	out, errOut, code, _ = runCLI(db, "export", original, "--format", "claude-code")
	if code != 0 || !strings.HasPrefix(out, `{"type":"custom-title"`) || resumeLine.FindString(errOut) == "" || resumeLine.FindString(out) != "" {
		t.Errorf("export to stdout:\n%.300s\nstderr: %s", out, errOut)
	}
}

func TestExportClaudeCodeRefusals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "wb.db")
	weft(t, db, "new", "s")
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--format", "claude-code", "--project", dir, "-o", filepath.Join(dir, "x")}, 2, "--project or -o"},
		{[]string{"--format", "anthropic", "--project", dir}, 2, "claude-code"},
		{[]string{"--format", "claude-code", "--project", filepath.Join(dir, "nosuch")}, 1, "does not exist"},
	}
	for _, tt := range tests {
		_, _, code, err := runCLI(db, append([]string{"export"}, tt.args...)...)
		if code != tt.code || err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("export %v: exit %d (%v), want %d saying %q", tt.args, code, err, tt.code, tt.says)
		}
	}
}

// Without CLAUDE_CONFIG_DIR, Claude Code's folder is ~/.claude.
func TestClaudeConfigDirDefault(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	if got := readEnvironment().claudeDir; got != filepath.Join(home, ".claude") {
		t.Errorf("claudeDir %q, want %q", got, filepath.Join(home, ".claude"))
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "/elsewhere")
	if got := readEnvironment().claudeDir; got != "/elsewhere" {
		t.Errorf("claudeDir %q with CLAUDE_CONFIG_DIR set", got)
	}
}

// The line that resumes an export quotes the project's folder only when
// a shell would read it otherwise.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/ana/app-2.1_x+y:z@h,v": "/home/ana/app-2.1_x+y:z@h,v",
		"":                            "''",
		"/home/ana/my app":            "'/home/ana/my app'",
		"/tmp/it's":                   `'/tmp/it'\''s'`,
		"/tmp/$HOME;rm":               "'/tmp/$HOME;rm'",
		"/tmp/a=b%c":                  "'/tmp/a=b%c'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
