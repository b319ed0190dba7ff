package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"weft/internal/termsafe"
	"weft/ops"
	"weft/ops/listen"
	"weft/ops/proxy"
	"weft/ops/reads"
	"weft/ops/tools"
	"weft/store"
	"weft/store/boltstore"
	"weft/themes"
	"weft/tui"
)

// tuiFlags are the root flags that only the TUI (and demo, and mcp's
// listener) use.
var tuiFlags = []string{"theme", "mcp-addr", "no-mcp", "token", "allow-origin", "max-result-tokens", "upstream-anthropic", "upstream-openai"}

// rootCommand builds weft's command tree: weft [SESSION] opens the TUI,
// and each command is a child.
func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "weft [SESSION]",
		Short: "View and edit LLM conversation threads",
		Long: `weft views and edits LLM conversation threads stored in a bbolt file: tag, digest, revise, snip, resequence and insert, each a reversible operation over immutable stored messages.

With no command, weft opens the TUI on SESSION. Agents connect to it over MCP at http://127.0.0.1:7433/mcp (or a free port; --mcp-addr moves it, --no-mcp turns it off), with the bearer token --token or $WEFT_TOKEN if one is given (required off loopback). On a file another weft holds (weft serve), the TUI works through that weft, whose agents stay connected to it; q leaves it running.

SESSION is an ID, a unique ID prefix or a title; default: the most recently updated session. The database is --db, else $WEFT_DB, else ` + dataDB() + `.`,
		Example: `
# the TUI on a fresh file seeded with a sample thread
weft demo
# the TUI on a session of your own file, in the light theme
weft --db ~/threads.db --theme light "auth design"
# the TUI without the MCP listener
weft "auth design" --no-mcp
# the TUI on a Claude Code session, following it as it is written
weft --follow ~/.claude/projects/-home-ana-app/0f3c2a55-6b1e-4c8e-9d2a-3b4c5d6e7f80.jsonl`,
		Args: a.positional(func(args []string) error {
			if len(args) > 1 {
				return usageErr("unknown command %q (weft --help shows the commands)", args[0])
			}
			return nil
		}),
		// Today's flags come before the command name too (weft --no-mcp
		// ls): every command inherits them, and hides those it has no use
		// for.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.cmd = cmd
			switch {
			case a.store != "":
				a.db = a.store
			case a.db == "":
				a.db = a.env.db
			}
			if err := a.checkToken(cmd); err != nil {
				return err
			}
			for _, o := range a.origins {
				if _, err := listen.CheckOrigin(o); err != nil {
					return usageErr("--allow-origin: %v", err)
				}
			}
			if n := a.maxResult; n != 0 && (n < reads.MinMaxTokens || n > reads.MaxMaxTokens) {
				return usageErr("--max-result-tokens %d: give %d to %d, or 0 for the budget that fits the client", n, reads.MinMaxTokens, reads.MaxMaxTokens)
			}
			for _, u := range []string{a.upstreams.Anthropic, a.upstreams.OpenAI} {
				if err := proxy.CheckUpstream(u); err != nil {
					return usageErr("%v", err)
				}
			}
			if a.theme != "" {
				if _, err := themes.Lookup(a.theme); err != nil {
					return usageErr("%v", err)
				}
			}
			a.started = true
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			session := ""
			if len(args) == 1 {
				session = args[0]
			}
			return a.openTUI(cmd.Context(), session)
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		a.cmd = cmd
		if cmd.HasParent() {
			return usageErr("%s: %v", cmd.Name(), err)
		}
		return usageErr("%v (weft --help shows the commands)", err)
	})
	fs := root.PersistentFlags()
	fs.StringVar(&a.db, "db", "", "the database file (default $WEFT_STORE, else $WEFT_DB, else "+dataDB()+")")
	fs.StringVar(&a.store, "store", "", "where sessions are kept, for a team: a PostgreSQL database, postgres://USER@HOST/DB (default $WEFT_STORE); in place of --db")
	fs.StringVar(&a.theme, "theme", "", "a built-in theme (dark, light, high-contrast); default: from the terminal background")
	fs.StringVar(&a.mcpAddr, "mcp-addr", "", "where the TUI's MCP listener listens (default 127.0.0.1:7433)")
	fs.BoolVar(&a.noMCP, "no-mcp", false, "open the TUI without the MCP listener")
	fs.StringVar(&a.token, "token", "", "bearer token agents must send to the embedded listener (default $WEFT_TOKEN)")
	fs.StringArrayVar(&a.origins, "allow-origin", nil, "a browser `ORIGIN` (scheme://host[:port]) allowed to call the embedded listener, with CORS; repeatable")
	fs.IntVar(&a.maxResult, "max-result-tokens", 0, "the budget, in tokens, of an agent's read that gives no max_tokens (default: one that fits the client, Claude Code, Codex or another)")
	fs.StringVar(&a.upstreams.Anthropic, "upstream-anthropic", proxy.DefaultAnthropicUpstream, "where the listener's context proxy sends Messages API requests")
	fs.StringVar(&a.upstreams.OpenAI, "upstream-openai", proxy.DefaultOpenAIUpstream, "where the listener's context proxy sends Chat Completions and Responses requests (with its /v1)")
	_ = root.RegisterFlagCompletionFunc("theme", completeThemes)
	a.globals = fs
	root.Flags().StringArrayVar(&a.follow, "follow", nil, "import this file (a Claude Code session, a Codex rollout) and keep importing what it gains while the TUI is open; repeat for more files")

	root.AddCommand(
		a.lsCommand(), a.newCommand(), a.showCommand(), a.diffCommand(), a.callCommand(),
		a.importCommand(), a.exportCommand(), a.toolsCommand(),
		a.demoCommand(), a.serveCommand(), a.mcpCommand(), a.checkCommand(), a.salvageCommand(),
		a.memoryCommand(), a.forkCommand(), a.migrateCommand(),
	)
	return root
}

// checkToken refuses a blank token, --token's or $WEFT_TOKEN's: a
// listener would take it and then no client could send it (clients'
// tokens are read without the blanks around them).
func (a *app) checkToken(cmd *cobra.Command) error {
	if f := cmd.Flags().Lookup("token"); f != nil && f.Changed && strings.TrimSpace(a.token) == "" {
		return usageErr("--token is blank: give a token with something in it, or leave --token out")
	}
	if a.token == "" && a.env.token != "" && strings.TrimSpace(a.env.token) == "" {
		return usageErr("WEFT_TOKEN is blank: set it to a token with something in it, or unset it")
	}
	return nil
}

// positional wraps a check of a command's positional arguments; check's
// refusal is a usage error (usageErr).
func (a *app) positional(check func(args []string) error) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		a.cmd = cmd
		return check(args)
	}
}

// describeFlag gives cmd its own entry for the root flag name, sharing
// its value: described as usage, or hidden when usage is empty. A hidden
// flag is still accepted, as it was before the command name, but stays
// out of cmd's help and completion.
func (a *app) describeFlag(cmd *cobra.Command, name, usage string) {
	f := a.globals.Lookup(name)
	cmd.Flags().AddFlag(&pflag.Flag{
		Name:        f.Name,
		Usage:       usage,
		Value:       f.Value,
		DefValue:    f.DefValue,
		NoOptDefVal: f.NoOptDefVal,
		Hidden:      usage == "",
	})
}

// hideFlags hides the root flags names from cmd's help (see
// describeFlag).
func (a *app) hideFlags(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		a.describeFlag(cmd, n, "")
	}
}

func completeThemes(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return themes.Names(), cobra.ShellCompDirectiveNoFileComp
}

// openTUI opens the TUI on session ("" for the latest), with the
// embedded listener unless --no-mcp; on a file another weft holds, it
// opens it through that weft (held.go).
//
// A file that is not there is made only when it is the default database
// (weft's first run) or --follow imports into it; one named with --db is
// otherwise more likely mistyped.
func (a *app) openTUI(ctx context.Context, session string) error {
	if _, err := os.Stat(a.db); !isStoreURL(a.db) && errors.Is(err, os.ErrNotExist) && a.db != a.env.db && len(a.follow) == 0 {
		return a.noDatabase()
	}
	st, err := openStore(a.db, boltstore.Options{Timeout: a.lockTimeout()})
	if errors.Is(err, store.ErrInUse) {
		return a.openThroughHolder(ctx, session, err) // held.go
	}
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	logger, closeLog := fileLog(sidePath(a.db, ".log"))
	defer closeLog()
	svc := newService(st, logger)
	opts := a.tuiOptions()
	opts.Logger = logger
	// The TUI's first read is made here, before it takes the screen: a
	// file whose damage shows only when it is read (store.Open found its
	// headers sound) is refused with the whole error and what to run,
	// and let go, rather than drawn as one cut-off line on a screen that
	// waits for a key.
	if _, _, err := svc.View(session); err != nil {
		switch {
		case errors.Is(err, store.ErrDamaged), errors.Is(err, store.ErrCorrupt):
			return err
		case session != "":
			return fmt.Errorf("%w (and %q is not a command: weft --help lists them)", err, session)
		}
	}
	opts.Session = session
	if len(a.follow) > 0 {
		stop, err := a.followInTUI(ctx, tools.Local{Service: svc}, logger, &opts)
		if err != nil {
			return err
		}
		defer stop()
	}
	lc := a.listen()
	lc.logger = logger
	return runWithListener(ctx, svc, opts, lc)
}

// runWithListener runs the TUI with the embedded listener lc starts (none
// with --no-mcp), which closes with it.
//
// A signal that ends weft (SIGINT, SIGTERM, or SIGHUP when the terminal
// goes) cancels the TUI's context, so the listener closes (its .addr
// file goes) and the callers' deferred clean-ups run, as on q.
func runWithListener(ctx context.Context, svc *ops.Service, opts tui.Options, lc listenConfig) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	l, err := lc.start(svc)
	if err != nil {
		return err
	}
	if l != nil {
		defer func() { _ = l.Close() }()
		opts.Listener = l
	}
	err = runTUI(ctx, tools.Local{Service: svc}, opts)
	if ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return nil // stopped by a signal: cleaned up, nothing to report
	}
	return err
}

// runTUI runs the TUI; tests replace it to look at what it is given.
var runTUI = tui.Run

// dbFile is the database file opened for a command, and the service
// over it.
type dbFile struct {
	st       store.Store
	svc      *ops.Service
	closeLog func()
	path     string
	created  bool // this run made the file
}

// openDB opens the database file, read-only when readOnly, waiting up to
// timeout (0: the store's default) for another process to let go of it.
func (a *app) openDB(timeout time.Duration, readOnly bool) (*dbFile, error) {
	_, statErr := os.Stat(a.db)
	st, err := a.openUpgrading(a.db, timeout, readOnly)
	if err != nil {
		return nil, err
	}
	logger, closeLog := commandLog(a.stderr, sidePath(a.db, ".log"))
	return &dbFile{st: st, svc: newService(st, logger), closeLog: closeLog, path: a.db, created: !isStoreURL(a.db) && errors.Is(statErr, os.ErrNotExist)}, nil
}

// openUpgrading opens a store, read-only when readOnly: a file of an
// older weft, which cannot be read as it is, is brought up to date once
// (a write), as every command does, then read as any other.
func (a *app) openUpgrading(path string, timeout time.Duration, readOnly bool) (store.Store, error) {
	st, err := openStore(path, boltstore.Options{Timeout: timeout, ReadOnly: readOnly})
	if readOnly && errors.Is(err, store.ErrNeedsMigration) {
		if st, err = openStore(path, boltstore.Options{Timeout: timeout}); err == nil {
			_, _ = fmt.Fprintf(a.stderr, "weft: note: %s was brought up to this weft's file layout (once; older wefts cannot read it now)\n", termsafe.Text(path))
		}
	}
	return st, err
}

// close closes the file. A refused request leaves the disk as it was: a
// file this run made and left without a session goes again when failed
// is not nil.
func (f *dbFile) close(failed error) {
	defer f.closeLog()
	if f.created && failed != nil {
		if list, err := reads.ListSessions(f.svc, context.Background(), reads.ListSessionsArgs{}); err == nil && list.Total == 0 {
			_ = f.st.Close()
			_ = os.Remove(f.path)
			return
		}
	}
	_ = f.st.Close()
}

// withService runs fn on the service over the database file, opened
// here for writing (see dbFile.close for a file this run made); weft
// serve needs the file itself.
func (a *app) withService(fn func(*ops.Service) error) (err error) {
	f, err := a.openDB(0, false)
	if err != nil {
		return err
	}
	defer func() { f.close(err) }()
	return fn(f.svc)
}
