package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/ops/mcpserver"
	"weft/ops/tools"
	"weft/tui"
)

// Every command answers --help and -h on stdout with its usage line,
// its description and its flags, exits 0, and touches no file.
func TestEveryCommandHasHelp(t *testing.T) {
	db := filepath.Join(t.TempDir(), "help.db")
	for _, tt := range []struct {
		args []string
		says []string
	}{
		{nil, []string{"weft [command] [SESSION]", "--no-mcp", "call TOOL", "Serve MCP over stdio"}},
		{[]string{"ls"}, []string{"weft ls", "--json", "raw tokens"}},
		{[]string{"new"}, []string{"weft new TITLE", `weft new "auth design"`}},
		{[]string{"show"}, []string{"weft show [SESSION]", "--raw", "--json"}},
		{[]string{"diff"}, []string{"weft diff [SESSION]", "--json", "what the model gets"}},
		{[]string{"call"}, []string{"weft call TOOL [JSON | key=value ...]", "weft call digest_messages start_idx=0", "--token"}},
		{[]string{"import"}, []string{"weft import FILE...", "--format", "--session", "claude-code, chatgpt"}},
		{[]string{"export"}, []string{"weft export [SESSION]", "--format", "-o --output", "--raw"}},
		{[]string{"tools"}, []string{"weft tools", "with its arguments"}},
		{[]string{"demo"}, []string{"weft demo", "--theme", "--no-mcp", "253 messages"}},
		{[]string{"serve"}, []string{"weft serve", "--addr", "--token", "127.0.0.1:7433"}},
		{[]string{"mcp"}, []string{"weft mcp", "--no-mcp", "relays"}},
		{[]string{"completion"}, []string{"weft completion", "bash"}},
	} {
		for _, flag := range []string{"--help", "-h"} {
			args := append(append([]string{}, tt.args...), flag)
			out, errOut, code, err := runCLI(db, args...)
			if code != 0 || err != nil || errOut != "" {
				t.Errorf("weft %v: exit %d (%v), stderr %q", args, code, err, errOut)
				continue
			}
			if !strings.Contains(out, "USAGE") || strings.Contains(out, "help requested") {
				t.Errorf("weft %v prints no usage:\n%s", args, out)
			}
			for _, want := range tt.says {
				if !strings.Contains(out, want) {
					t.Errorf("weft %v does not say %q:\n%s", args, want, out)
				}
			}
		}
	}
	// Flags the command has no use for are accepted but not shown.
	out, _, _, _ := runCLI(db, "ls", "--help")
	if strings.Contains(out, "--theme") || strings.Contains(out, "--no-mcp") {
		t.Errorf("weft ls --help shows the TUI's flags:\n%s", out)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("asking for help made %s (%v)", db, err)
	}
}

func TestCompletionScripts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	for shell, want := range map[string]string{
		"bash": "__start_weft",
		"zsh":  "#compdef weft",
		"fish": "complete -c weft",
	} {
		out, _, code, err := runCLI(db, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("weft completion %s: exit %d (%v), no %q in %d bytes", shell, code, err, want, len(out))
		}
	}
	// Tool names complete after weft call, argument names after the tool.
	out, _, _, _ := runCLI(db, "__complete", "call", "snip_")
	if !strings.Contains(out, "snip_messages\n") {
		t.Errorf("completing weft call snip_: %q", out)
	}
	out, _, _, _ = runCLI(db, "__complete", "call", "snip_messages", "")
	if !strings.Contains(out, "start_idx=\n") || !strings.Contains(out, "expected_version=\n") {
		t.Errorf("completing snip_messages' arguments: %q", out)
	}
}

func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		out, _, code, err := runCLI(filepath.Join(t.TempDir(), "v.db"), flag)
		if want := "weft version " + mcpserver.Version() + "\n"; code != 0 || out != want {
			t.Errorf("weft %s: exit %d (%v), %q; want %q", flag, code, err, out, want)
		}
	}
}

// weft man prints the man page in roff; fang writes it to the process's
// stdout, so the test runs weft as a process.
func TestManPage(t *testing.T) {
	t.Parallel()
	cmd := weftProcess("--db", filepath.Join(t.TempDir(), "m.db"), "man")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("weft man: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{".TH WEFT 1", ".SH NAME", ".SH OPTIONS", `\fB--db\fP`} {
		if !strings.Contains(out, want) {
			t.Errorf("the man page has no %q:\n%s", want, out[:min(len(out), 600)])
		}
	}
}

// A command line weft cannot take exits 2, says what is wrong on
// stderr, once, and makes no file.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "u.db")
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"show", "--bogus"}, "show: unknown flag: --bogus"},
		{[]string{"export", "--format"}, "flag needs an argument: --format"},
		{[]string{"ls", "--json=maybe"}, `invalid argument "maybe" for "--json"`},
		{[]string{"new"}, "new needs a title"},
		{[]string{"call"}, "call needs a tool name"},
		{[]string{"import"}, "import needs a file"},
		{[]string{"import", "--format", "yaml", "x.jsonl"}, `unknown format "yaml"`},
		{[]string{"export", "--format", "yaml"}, `unknown export format "yaml"`},
		{[]string{"tools", "extra"}, "tools takes no arguments"},
		{[]string{"frobnicate", "x", "y"}, `unknown command "frobnicate"`},
		{[]string{"completion", "bash", "extra"}, `unknown command "extra"`},
		{[]string{"--theme", "sepia", "ls"}, `no theme "sepia"`},
	} {
		_, errOut, code, err := runCLI(db, tt.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("weft %v: exit %d (%v), want 2 saying %q", tt.args, code, err, tt.says)
			continue
		}
		if want := "weft: " + err.Error() + "\n"; errOut != want {
			t.Errorf("weft %v: stderr %q, want %q", tt.args, errOut, want)
		}
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a usage error made %s (%v)", db, err)
	}
}

// On a terminal a refusal is fang's styled error, and a usage error
// points at the command's help.
func TestStyledErrorOnATerminal(t *testing.T) {
	var out bytes.Buffer
	onTTY, err := runOnTerminal(t, &out, "--db", filepath.Join(t.TempDir(), "t.db"), "ls", "--bogus")
	if exitCode(err) != 2 {
		t.Fatalf("exit %d (%v)", exitCode(err), err)
	}
	s := string(onTTY)
	for _, want := range []string{"ERROR", "ls: unknown flag: --bogus.", "Try", "weft ls --help", "for usage."} {
		if !strings.Contains(s, want) {
			t.Errorf("the styled error does not say %q: %q", want, s)
		}
	}
	if strings.Contains(s, "weft: ") {
		t.Errorf("a terminal got the plain error line: %q", s)
	}
}

// tuiRun replaces runTUI for the test and returns the options of the last
// run.
func tuiRun(t *testing.T) *tui.Options {
	t.Helper()
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	got := new(tui.Options)
	runTUI = func(_ context.Context, _ tools.Desk, opts tui.Options) error {
		*got = opts
		return nil
	}
	return got
}

// NO_COLOR (set and not empty) and the editor reach the TUI as values.
func TestTUIOptionsFromEnvironment(t *testing.T) {
	db, _ := seededDB(t)
	got := tuiRun(t)
	for _, tt := range []struct {
		noColor, visual, editor string
		wantNoColor             bool
		wantEditor              string
	}{
		{"1", "vim", "nano", true, "vim"},
		{"", "", "nano", false, "nano"},
		{"", "", "", false, ""},
	} {
		t.Setenv("NO_COLOR", tt.noColor)
		t.Setenv("VISUAL", tt.visual)
		t.Setenv("EDITOR", tt.editor)
		*got = tui.Options{}
		if _, code, err := weft(t, db, "--no-mcp"); code != 0 {
			t.Fatalf("weft: exit %d: %v", code, err)
		}
		if got.NoColor != tt.wantNoColor || got.Editor != tt.wantEditor {
			t.Errorf("NO_COLOR=%q VISUAL=%q EDITOR=%q: NoColor %v, Editor %q; want %v, %q",
				tt.noColor, tt.visual, tt.editor, got.NoColor, got.Editor, tt.wantNoColor, tt.wantEditor)
		}
	}
}

// The TUI's flags may come before or after the session, and the root's
// flags before a command, as they always could.
func TestFlagsBeforeAndAfterArguments(t *testing.T) {
	db, sid := seededDB(t)
	got := tuiRun(t)
	for _, tt := range []struct {
		args    []string
		session string
	}{
		{[]string{"--theme", "light", "--no-mcp", sid}, sid},
		{[]string{sid, "--no-mcp", "--theme", "light"}, sid},
		{[]string{"--no-mcp", sid[:6], "--theme=light"}, sid[:6]},
	} {
		*got = tui.Options{}
		if _, code, err := weft(t, db, tt.args...); code != 0 {
			t.Fatalf("weft %v: exit %d: %v", tt.args, code, err)
		}
		if got.Session != tt.session || got.Theme != "light" || got.Listener != nil {
			t.Errorf("weft %v: the TUI got %+v", tt.args, *got)
		}
	}
	for _, args := range [][]string{
		{"--no-mcp", "--theme", "dark", "ls"},
		{"ls", "--json"},
		{"--token", "t", "show", sid[:6], "--raw"},
	} {
		if _, code, err := weft(t, db, args...); code != 0 {
			t.Errorf("weft %v: exit %d: %v", args, code, err)
		}
	}
}
