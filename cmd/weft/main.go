// Command weft views and edits LLM conversation threads stored in a bbolt
// file. See the README, or weft --help, for the commands.
//
// The CLI is a cobra command tree run through fang, which adds styled
// help and errors, --version, shell completion and a man page. This
// package is the only place that reads the environment: readEnvironment
// reads it once per run (newService the summary endpoint's settings, once
// per service) and the values are handed on.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"charm.land/fang/v2"
	"charm.land/lipgloss/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"weft/internal/termsafe"
	"weft/ops/mcpserver"
	"weft/ops/proxy"
	"weft/tui"
)

// exitError carries an exit code: 1 for a refused request, 2 for usage.
type exitError struct {
	code int
	err  error
}

// Error is the refusal's message, without its code.
func (e *exitError) Error() string { return e.err.Error() }

// Unwrap gives the refusal itself, for errors.Is and errors.As.
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{2, fmt.Errorf(format, args...)}
}

// exitCode is the status main exits with for err: its own code, else 1.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func main() {
	// run has printed the error already, through fang.
	os.Exit(exitCode(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)))
}

// run runs weft with args (os.Args[1:]) as main does, printing a refusal
// on stderr; the error it returns carries the exit code (see exitCode).
// Tests call it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return (&app{stdout: stdout, stderr: stderr, env: readEnvironment()}).run(ctx, args)
}

// run runs the command line args on a, as the function run does.
func (a *app) run(ctx context.Context, args []string) error {
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := fang.Execute(ctx, root,
		fang.WithVersion(mcpserver.Version()),
		fang.WithErrorHandler(a.printError),
	)
	if err == nil {
		return nil
	}
	return a.refusal(err)
}

// app is one run of weft: its output streams, what it read from the
// environment, and the root's flags, which every command shares.
type app struct {
	stdout, stderr io.Writer
	env            environment

	db      string         // --db
	store   string         // --store
	theme   string         // --theme
	mcpAddr string         // --mcp-addr
	noMCP   bool           // --no-mcp
	token   string         // --token; the environment's WEFT_TOKEN when empty
	origins []string       // --allow-origin, each an origin browsers may call from
	follow  []string       // the TUI's --follow files
	globals *pflag.FlagSet // the root's flags, which every command inherits
	// maxResult is --max-result-tokens: a read's budget over MCP when
	// its call gives none (0: fitted to the client that called).
	maxResult int
	// upstreams: --upstream-anthropic and --upstream-openai, where the
	// context proxy sends requests.
	upstreams proxy.Upstreams
	// lockWait is how long a command waits for another process to let go
	// of the database file before it goes through the weft that holds it,
	// or says the file is held; 0 waits heldWait when the file's address
	// says a weft is running, else the store's default. Tests shorten it.
	lockWait time.Duration

	// started is set once cobra accepted the command line and the command
	// began: an error before that is a usage error.
	started bool
	// cmd is the command whose usage an error refers to, for the hint
	// that follows a usage error on a terminal.
	cmd *cobra.Command
}

// environment is what weft reads from its environment, once, when it
// starts.
type environment struct {
	db      string // the default database: $WEFT_STORE, else $WEFT_DB, else in the user data directory
	token   string // $WEFT_TOKEN
	noColor bool   // $NO_COLOR is set and not empty (no-color.org)
	editor  string // $VISUAL, else $EDITOR
	pager   string // $PAGER (empty: the TUI runs less)
	// claudeDir is Claude Code's folder: $CLAUDE_CONFIG_DIR, else
	// ~/.claude (weft export --format claude-code --project).
	claudeDir string
}

func readEnvironment() environment {
	return environment{
		db:        defaultDB(),
		token:     os.Getenv("WEFT_TOKEN"),
		noColor:   os.Getenv("NO_COLOR") != "",
		editor:    editorCommand(),
		pager:     os.Getenv("PAGER"),
		claudeDir: claudeConfigDir(),
	}
}

// bearer is the token listeners require and relays send: --token, else
// $WEFT_TOKEN.
func (a *app) bearer() string { return cmp.Or(a.token, a.env.token) }

// listen is what the root flags say about an embedded listener.
func (a *app) listen() listenConfig {
	return listenConfig{addr: a.mcpAddr, off: a.noMCP, token: a.bearer(), origins: a.origins, upstreams: a.upstreams, maxResult: a.maxResult}
}

// tuiOptions are the TUI's options from the flags and the environment.
func (a *app) tuiOptions() tui.Options {
	return tui.Options{Theme: a.theme, NoColor: a.env.noColor, Editor: a.env.editor, Pager: a.env.pager}
}

// refusal gives err its exit code: its own when it has one; 2 when cobra
// refused the command line before any command ran (an unknown command
// or flag, a bad flag value, a wrong number of arguments); else 1.
func (a *app) refusal(err error) *exitError {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	if !a.started {
		return &exitError{2, err}
	}
	return &exitError{1, err}
}

// printError is fang's error handler. Where stderr is no terminal (a
// script, a log) it prints one plain line, "weft: ...", as weft always
// has; on a terminal it prints fang's styled error, with a pointer to
// the command's help after a usage error.
//
// An error may quote what a thread carries (a title, a line of a file):
// its control characters are shown, not obeyed.
func (a *app) printError(w io.Writer, styles fang.Styles, err error) {
	msg := termsafe.Text(err.Error())
	if f, ok := a.stderr.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		_, _ = fmt.Fprintln(w, "weft:", msg)
		return
	}
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "?") {
		msg += "."
	}
	_, _ = fmt.Fprintln(w, styles.ErrorHeader.String())
	// Shown as written: fang's title case would change a file name or an
	// ID that begins the message.
	_, _ = fmt.Fprintln(w, styles.ErrorText.UnsetTransform().Render(msg))
	_, _ = fmt.Fprintln(w)
	if a.refusal(err).code == 2 {
		path := "weft"
		if a.cmd != nil {
			path = a.cmd.CommandPath()
		}
		_, _ = fmt.Fprintln(w, lipgloss.JoinHorizontal(lipgloss.Left,
			styles.ErrorText.UnsetWidth().Render("Try"),
			styles.Program.Flag.Render(" "+path+" --help "),
			styles.ErrorText.UnsetWidth().UnsetMargins().UnsetTransform().Render("for usage."),
		))
		_, _ = fmt.Fprintln(w)
	}
}

// editorCommand is the editor the TUI hands text to: $VISUAL, else
// $EDITOR (empty: the TUI runs vi).
func editorCommand() string {
	if e := os.Getenv("VISUAL"); e != "" {
		return e
	}
	return os.Getenv("EDITOR")
}

// defaultDB is $WEFT_STORE (a PostgreSQL database), else $WEFT_DB, else
// weft.db in the user's data directory.
func defaultDB() string {
	if u := os.Getenv("WEFT_STORE"); u != "" {
		return u
	}
	if p := os.Getenv("WEFT_DB"); p != "" {
		return p
	}
	return dataDB()
}

// dataDB is weft.db in the user's data directory.
func dataDB() string { return filepath.Join(dataDir(), "weft", "weft.db") }

func dataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return d
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d
		}
	case "darwin":
		if d, err := os.UserConfigDir(); err == nil {
			return d // ~/Library/Application Support
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share")
	}
	return "."
}
