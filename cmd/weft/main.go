// Command weft views and edits LLM conversation threads stored in a bbolt
// file. See the README for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"weft/ops"
	"weft/ops/mcpserver"
	"weft/store"
	"weft/themes"
	"weft/tui"
)

const usage = `weft — view and edit LLM conversation threads

Usage:
  weft [--db FILE] [--theme NAME] [--mcp-addr HOST:PORT | --no-mcp] [--token T] [SESSION]
                                      open the TUI; agents connect over MCP at
                                      http://127.0.0.1:7433/mcp (or a free port),
                                      with the bearer token T if given (default
                                      $WEFT_TOKEN; required off loopback)
  weft [--db FILE] COMMAND [ARGS]

Commands:
  ls [--json]                         sessions, with counts and tokens
  new TITLE                           create a session
  show [SESSION] [--raw] [--json]     print a thread (effective unless --raw)
  call TOOL [JSON | key=value ...]    run any tool, print its JSON result
  import [--format F] [--session NAME] FILE...
                                      claude-code | chatgpt | codex | openai | sharegpt | weft
                                      (detected when --format is not given)
  export [SESSION] [--format openai|anthropic|jsonl|markdown] [--raw] [-o FILE]
                                      the effective thread (stored messages with --raw)
  tools                               list the tools and their arguments
  demo                                a fresh file seeded with a sample thread
  serve [--addr HOST:PORT] [--token T]
                                      MCP (/mcp) and the HTTP API (POST /api/TOOL)
                                      without a TUI; token also from $WEFT_TOKEN,
                                      required off loopback
  mcp                                 MCP over stdio, for clients that launch it
                                      (relays to a running weft holding the file)

SESSION is an ID, a unique ID prefix or a title; default: the most
recently updated session. The database is --db, else $WEFT_DB, else
%s.
`

// isCommand reports whether word names a command rather than a session.
func isCommand(word string) bool {
	switch word {
	case "help", "-h", "--help", "tools", "demo", "mcp", "ls", "new", "show", "call", "import", "export", "serve":
		return true
	}
	return false
}

// exitError carries an exit code: 1 for a refused request, 2 for usage.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, args ...any) error {
	return &exitError{2, fmt.Errorf(format, args...)}
}

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(os.Stderr, "weft:", err)
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("weft", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dbFlag := fs.String("db", "", "database file")
	themeFlag := fs.String("theme", "", "a built-in theme (dark, light, high-contrast); default: from the terminal background")
	var lc listenConfig
	fs.StringVar(&lc.addr, "mcp-addr", "", "where the TUI's MCP listener listens (default 127.0.0.1:7433)")
	fs.BoolVar(&lc.off, "no-mcp", false, "open the TUI without the MCP listener")
	tokenFlag := fs.String("token", "", "bearer token agents must send to the embedded listener (default $WEFT_TOKEN)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usage, defaultDB())
			return nil
		}
		return usageErr("%v (weft --help shows the commands)", err)
	}
	args = fs.Args()
	cmd, rest := "", []string(nil)
	if len(args) > 0 {
		cmd, rest = args[0], args[1:]
	}
	// The TUI's flags may also follow demo or the session to open:
	// weft demo --theme light.
	if !isCommand(cmd) || cmd == "demo" {
		if err := fs.Parse(rest); err != nil {
			return usageErr("%v (weft --help shows the commands)", err)
		}
		rest = fs.Args()
	}
	if *tokenFlag != "" {
		// --token stands for WEFT_TOKEN in this process: the listener of
		// the TUI (and of demo and mcp), a relayed call and serve's
		// default all read it there.
		if err := os.Setenv("WEFT_TOKEN", *tokenFlag); err != nil {
			return err
		}
	}
	if *themeFlag != "" {
		if _, err := themes.Lookup(*themeFlag); err != nil {
			return usageErr("%v", err)
		}
	}
	tuiOpts := tui.Options{Theme: *themeFlag, NoColor: os.Getenv("NO_COLOR") != "", Editor: editorCommand()}
	db := *dbFlag
	if db == "" {
		db = defaultDB()
	}
	switch cmd {
	case "help", "-h", "--help":
		fmt.Fprintf(stdout, usage, defaultDB())
		return nil
	case "tools":
		return cmdTools(stdout)
	case "demo":
		return cmdDemo(ctx, rest, tuiOpts, lc)
	case "mcp":
		return cmdMCP(ctx, db, rest, lc, stderr)
	case "ls", "new", "show", "call", "import", "export", "serve":
	default:
		// weft [SESSION]: the TUI.
		if len(rest) > 0 {
			return usageErr("unknown command %q (weft --help shows the commands)", cmd)
		}
		tuiOpts.Session = cmd
		cmd = ""
	}

	var timeout time.Duration
	if cmd == "call" && mcpserver.ReadAddrFile(db) != "" {
		timeout = 200 * time.Millisecond // most likely held: relay soon
	}
	_, statErr := os.Stat(db)
	created := errors.Is(statErr, os.ErrNotExist)
	st, err := store.Open(db, store.Options{Timeout: timeout})
	if errors.Is(err, store.ErrInUse) && cmd == "call" {
		// Another weft holds the file: ask it, as weft mcp does.
		if url := mcpserver.ReadAddrFile(db); url != "" {
			r, err := mcpserver.NewRemote(url, os.Getenv("WEFT_TOKEN"))
			if err != nil {
				return fmt.Errorf("%s.addr: %w", db, err)
			}
			return cmdCallRemote(ctx, r, rest, stdout)
		}
	}
	if err != nil {
		return err
	}
	defer st.Close()
	if created && cmd != "" {
		// A refused request leaves the disk as it was: a file this run
		// made and left without a session goes again.
		defer func() {
			if list, lerr := st.Sessions(); err != nil && lerr == nil && len(list) == 0 {
				st.Close()
				os.Remove(db)
			}
		}()
	}
	svc := newService(st)
	return runCommand(ctx, cmd, rest, svc, tuiOpts, lc, stdout, stderr)
}

// runCommand runs a command on an open file.
func runCommand(ctx context.Context, cmd string, rest []string, svc *ops.Service, tuiOpts tui.Options, lc listenConfig, stdout, stderr io.Writer) error {
	switch cmd {
	case "":
		if tuiOpts.Session != "" {
			if _, _, err := svc.View(tuiOpts.Session); err != nil {
				return fmt.Errorf("%w (and %q is not a command: weft --help lists them)", err, tuiOpts.Session)
			}
		}
		l, err := lc.start(svc)
		if err != nil {
			return err
		}
		if l != nil {
			defer l.Close()
			tuiOpts.Listener = l
		}
		return runTUI(ctx, svc, tuiOpts)
	case "serve":
		return cmdServe(ctx, svc, rest, stderr)
	case "ls":
		return cmdLs(ctx, svc, rest, stdout)
	case "import":
		return cmdImport(ctx, svc, rest, stdout, stderr)
	case "export":
		return cmdExport(ctx, svc, rest, stdout, stderr)
	case "new":
		return cmdNew(ctx, svc, rest, stdout)
	case "show":
		return cmdShow(ctx, svc, rest, stdout)
	default:
		return cmdCall(ctx, svc, rest, stdout)
	}
}

// runTUI runs the TUI; tests replace it to look at what it is given.
var runTUI = tui.Run

// editorCommand is the editor the TUI hands text to: $VISUAL, else
// $EDITOR (empty: the TUI runs vi).
func editorCommand() string {
	if e := os.Getenv("VISUAL"); e != "" {
		return e
	}
	return os.Getenv("EDITOR")
}

// defaultDB is $WEFT_DB, else weft.db in the user's data directory.
func defaultDB() string {
	if p := os.Getenv("WEFT_DB"); p != "" {
		return p
	}
	return filepath.Join(dataDir(), "weft", "weft.db")
}

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
