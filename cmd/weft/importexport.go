package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/progress"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"weft/formats"
	"weft/formats/readers"
	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/ops/ingest"
	"weft/ops/tools"
)

// importCommand is weft import.
func (a *app) importCommand() *cobra.Command {
	var format, session string
	var followFlag bool
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import conversation files (the format is detected)",
		Long: `import reads conversation files into the database: ` + strings.Join(formatNames(), ", ") + ` (detected when --format is not given); - reads standard input.

Importing the same file again adds nothing; importing a longer version of a growing session adds only the new messages. Records that cannot be read are reported with their line numbers, the rest is imported, and import exits 1 to say the file came in only in part. A Claude Code compaction becomes a digest over the messages it compacted. --session puts the threads of every file into one session.

When another weft holds the database (the TUI is open on it), import sends the files to that weft, which imports them as it would here: the TUI shows them as they land.

--follow keeps watching the files (Claude Code sessions, Codex rollouts: any format whose records are appended a line at a time) and imports what they gain as it is written, a line per batch, until ctrl+c: whole lines only, and a response still being written waits until it is complete. A file not there yet is waited for; one cut short or replaced is said and read again from its start.`,
		Example: `
weft import ~/.claude/projects/*/*.jsonl
weft import --format chatgpt conversations.json
weft import --session "research" a.jsonl b.jsonl
# keep importing a Claude Code session as it is written
weft import --follow ~/.claude/projects/-home-ana-app/0f3c2a55-6b1e-4c8e-9d2a-3b4c5d6e7f80.jsonl`,
		Args: a.positional(func(args []string) error {
			if len(args) == 0 {
				return usageErr("import needs a file: weft import [--format F] [--session NAME] FILE...")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, files []string) error {
			if format != "" {
				if _, ok := readers.For(formats.Format(format)); !ok {
					return usageErr("unknown format %q; the formats are %s", format, strings.Join(formatNames(), ", "))
				}
			}
			if followFlag {
				return a.followFiles(cmd.Context(), files, formats.Format(format), session)
			}
			return a.withTarget(writing, func(t target) error {
				return importFiles(cmd.Context(), t, files, formats.Format(format), session, a.stdout, a.stderr)
			})
		},
	}
	cmd.Flags().BoolVar(&followFlag, "follow", false, "keep importing what the files gain as they are written, until ctrl+c")
	cmd.Flags().StringVar(&format, "format", "", "the files' format (default: detected)")
	cmd.Flags().StringVar(&session, "session", "", "import into this session (ID, prefix or title; created if none matches)")
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formatNames(), cobra.ShellCompDirectiveNoFileComp
	})
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// importFiles imports files one after the other, reporting each; the
// error says how many were refused or imported only in part.
func importFiles(ctx context.Context, t target, files []string, format formats.Format, session string, stdout, stderr io.Writer) error {
	failed, partly := 0, 0
	for _, file := range files {
		if err := importFile(ctx, t, file, format, session, stdout, stderr); err != nil {
			// The error may quote the file: shown, not obeyed.
			var fe *fileError
			if errors.As(err, &fe) {
				_, _ = fmt.Fprintf(stderr, "weft: %s\n", termsafe.Text(err.Error()))
			} else {
				_, _ = fmt.Fprintf(stderr, "weft: %s: %s\n", file, termsafe.Text(err.Error()))
			}
			var pe *partialError
			if errors.As(err, &pe) {
				partly++
			} else {
				failed++
			}
		}
	}
	switch {
	case failed > 0 && partly > 0:
		return &exitError{1, fmt.Errorf("%d of %d files not imported, %d only in part", failed, len(files), partly)}
	case failed > 0:
		return &exitError{1, fmt.Errorf("%d of %d files not imported", failed, len(files))}
	case partly > 0:
		return &exitError{1, fmt.Errorf("%d of %d files imported only in part", partly, len(files))}
	}
	return nil
}

// partialError is an import that left something of the file out: the
// rest is imported.
type partialError struct{ unread, unplaced, opsDropped int }

// Error says what was left out, in one sentence.
func (e *partialError) Error() string {
	var what []string
	if e.unread > 0 {
		what = append(what, english.Count(e.unread, "record")+" could not be read")
	}
	if e.unplaced > 0 {
		what = append(what, english.Count(e.unplaced, "message")+" could not be placed in order")
	}
	if e.opsDropped > 0 {
		what = append(what, english.Count(e.opsDropped, "operation")+" had nothing left to act on")
	}
	return "imported in part: " + strings.Join(what, ", ") + " (see above); the rest was imported"
}

func formatNames() []string {
	var names []string
	for _, f := range formats.Formats {
		names = append(names, string(f))
	}
	return names
}

// importFile imports one file and reports it: what was read and what
// was not, the same whether this weft imports it or the running weft
// that holds the database does.
func importFile(ctx context.Context, t target, file string, format formats.Format, session string, stdout, stderr io.Writer) error {
	var f *os.File
	if file == "-" {
		f = os.Stdin
	} else {
		var err error
		if f, err = os.Open(file); err != nil {
			return openError(file, err)
		}
		defer func() { _ = f.Close() }()
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil {
		if st.IsDir() {
			return &fileError{fmt.Errorf("%s is a directory, not a file: name the files in it (weft import %s)", file, filepath.Join(file, "*.jsonl"))}
		}
		if st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	counter := &countingReader{r: f}
	bar := newImportProgress(stderr, file, size, counter)
	rep, err := t.Import(ctx, counter, tools.ImportArgs{Format: format, Session: session}, bar)
	bar.done()
	if err != nil {
		return err
	}
	if rep.Refused != nil {
		return rep.Refused
	}
	problems := rep.Problems
	var partial partialError
	for i, p := range problems {
		switch {
		case p.Note:
		case p.More > 0:
			partial.unread += p.More
		default:
			partial.unread++
		}
		// Problems and notes quote the file: shown, not obeyed.
		switch {
		case i == 20:
			_, _ = fmt.Fprintf(stderr, "%s: … and %d more\n", file, len(problems)-20)
		case i > 20:
		case p.Note:
			_, _ = fmt.Fprintf(stderr, "%s: note: %s\n", file, termsafe.Text(p.String()))
		default:
			_, _ = fmt.Fprintf(stderr, "%s: %s\n", file, termsafe.Text(p.String()))
		}
	}
	for _, s := range rep.Sessions {
		partial.unplaced += s.NotPlaced
		partial.opsDropped += s.OpsDropped
		for _, note := range s.Notes {
			_, _ = fmt.Fprintf(stderr, "%s: session %s: %s\n", file, s.SessionID, termsafe.Text(note))
		}
	}
	reportImport(stdout, file, rep.Sessions, partial.unread)
	if rep.Stopped != nil {
		return fmt.Errorf("%s import stopped: %w", rep.Format, rep.Stopped)
	}
	if partial != (partialError{}) {
		return &partial
	}
	return nil
}

// fileError is an error that names its file itself.
type fileError struct{ err error }

// Error is the message, which names the file.
func (e *fileError) Error() string { return e.err.Error() }

// Unwrap gives the underlying error.
func (e *fileError) Unwrap() error { return e.err }

// openError says why a file could not be opened, naming it once.
func openError(file string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &fileError{fmt.Errorf("%s does not exist", file)}
	case errors.Is(err, fs.ErrPermission):
		return &fileError{fmt.Errorf("%s cannot be read: permission denied", file)}
	}
	return err
}

// reportImport lists the sessions an import changed (the first few) and
// sums it up in one line.
func reportImport(w io.Writer, file string, sessions []ingest.ImportedSession, unread int) {
	const listed = 10
	var added, skipped, opsMade, opsDropped, notPlaced, differ, created, changed int
	for _, s := range sessions {
		added, skipped, opsMade, opsDropped = added+s.Added, skipped+s.Skipped, opsMade+s.Ops, opsDropped+s.OpsDropped
		notPlaced, differ = notPlaced+s.NotPlaced, differ+s.Changed
		if s.Created {
			created++
		}
		if s.Added == 0 && s.Ops == 0 {
			continue
		}
		changed++
		if changed > listed {
			continue
		}
		verb := "into"
		if s.Created {
			verb = "as new session"
		}
		_, _ = fmt.Fprintf(w, "  %s %s %s %q", english.Count(s.Added, "message"), verb, s.SessionID, s.Title)
		if s.Ops > 0 {
			_, _ = fmt.Fprintf(w, ", %s", english.Count(s.Ops, "operation"))
		}
		if s.OpsDropped > 0 {
			_, _ = fmt.Fprintf(w, " (%s not imported)", english.Thousands(s.OpsDropped))
		}
		_, _ = fmt.Fprintln(w)
	}
	if changed > listed {
		_, _ = fmt.Fprintf(w, "  … and %s more\n", english.Count(changed-listed, "session"))
	}
	switch {
	case len(sessions) == 0:
		_, _ = fmt.Fprintf(w, "%s: nothing to import\n", file)
		return
	case added == 0 && opsMade == 0 && notPlaced == 0 && opsDropped == 0 && unread == 0 && differ == 0:
		_, _ = fmt.Fprintf(w, "%s: nothing new: %s already imported\n", file, english.Count(len(sessions), "session"))
		return
	case added == 0 && opsMade == 0:
		_, _ = fmt.Fprintf(w, "%s: nothing added", file)
		if skipped > 0 {
			_, _ = fmt.Fprintf(w, "; %s %s already there", english.Count(skipped, "message"), map[bool]string{true: "was", false: "were"}[skipped == 1])
		}
	default:
		_, _ = fmt.Fprintf(w, "%s: %s imported into %s (%s new)", file, english.Count(added, "message"), english.Count(changed, "session"), english.Thousands(created))
		if skipped > 0 {
			_, _ = fmt.Fprintf(w, "; %s already there", map[bool]string{true: "1 was", false: english.Thousands(skipped) + " were"}[skipped == 1])
		}
	}
	if differ > 0 {
		_, _ = fmt.Fprintf(w, "; %s already there %s in the file (kept as first imported)", english.Count(differ, "message"), map[bool]string{true: "differs", false: "differ"}[differ == 1])
	}
	if unread > 0 {
		_, _ = fmt.Fprintf(w, "; %s could not be read", english.Count(unread, "record"))
	}
	if notPlaced > 0 {
		_, _ = fmt.Fprintf(w, "; %s not added: %s before messages already there", english.Count(notPlaced, "message"), map[bool]string{true: "it belongs", false: "they belong"}[notPlaced == 1])
	}
	if opsDropped > 0 {
		_, _ = fmt.Fprintf(w, "; %s not imported: nothing %s on was", english.Count(opsDropped, "operation"), map[bool]string{true: "it acts", false: "they act"}[opsDropped == 1])
	}
	_, _ = fmt.Fprintln(w)
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// importProgress draws a progress bar on a terminal's stderr, and nothing
// when stderr is not a terminal.
type importProgress struct {
	w       io.Writer
	on      bool
	name    string
	size    int64
	counter *countingReader
	bar     progress.Model
	last    time.Time
	drawn   bool
}

func newImportProgress(w io.Writer, name string, size int64, counter *countingReader) *importProgress {
	p := &importProgress{w: w, name: name, size: size, counter: counter}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && size > 0 {
		p.on = true
		p.bar = progress.New(progress.WithDefaultBlend(), progress.WithWidth(30))
	}
	return p
}

// Messages draws the bar with the messages read so far (tools.Progress).
func (p *importProgress) Messages(messages int) {
	if !p.on || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	pct := min(float64(p.counter.n.Load())/float64(p.size), 1)
	_, _ = fmt.Fprintf(p.w, "\r%s %s %d messages", p.name, p.bar.ViewAs(pct), messages)
	p.drawn = true
}

// Waiting draws the bar every 100 ms, by how much of the file was read,
// until the function it returns is called: for an import whose messages
// are counted elsewhere (by the running weft that does it).
func (p *importProgress) Waiting() (stop func()) {
	if !p.on {
		return func() {}
	}
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				pct := min(float64(p.counter.n.Load())/float64(p.size), 1)
				_, _ = fmt.Fprintf(p.w, "\r%s %s", p.name, p.bar.ViewAs(pct))
				p.drawn = true
			}
		}
	}()
	return func() { close(quit); <-stopped }
}

func (p *importProgress) done() {
	if p.drawn {
		_, _ = fmt.Fprint(p.w, "\r\033[K")
	}
}

// exportCommand is weft export.
func (a *app) exportCommand() *cobra.Command {
	var format, out, project string
	var raw bool
	cmd := &cobra.Command{
		Use:   "export [SESSION]",
		Short: "Write a thread as provider messages, markdown, a Claude Code session or lossless JSONL",
		Long: `export writes a session's effective thread (the stored messages with --raw) as openai or anthropic request messages, ready to send, or as markdown. jsonl is lossless: the stored messages and the operations, to move a session between files (weft import reads it back).

claude-code writes it as a Claude Code session under a new session ID, the transcript claude --resume reads; --project DIR puts it straight into Claude Code's folder for the project DIR (in $CLAUDE_CONFIG_DIR, else ~/.claude), and export prints the line that resumes it there. Importing the transcript gives the same thread.

SESSION is an ID, a unique ID prefix or a title; default: the most recently updated session. export only reads the database; when another weft holds it, export asks that weft. On a terminal, control characters of the thread are shown as pictures (␛ for ESC); to a file or a pipe the export is exact.`,
		Example: `
# the effective thread, ready to send
weft export --format anthropic
# lossless: messages and operations, to move a session between files
weft export "auth design" --format jsonl -o s.jsonl
# the edited thread as a Claude Code session of the project in ~/src/app
weft export "auth design" --format claude-code --project ~/src/app`,
		Args: a.positional(func(args []string) error {
			if len(args) > 1 {
				return usageErr("export takes one session at most (got %d)", len(args))
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := ""
			if len(args) == 1 {
				ref = args[0]
			}
			if !slices.Contains(tools.ExportFormats, format) {
				return usageErr("unknown export format %q: %s", format, strings.Join(tools.ExportFormats, ", "))
			}
			if format == "claude-code" {
				return a.exportClaudeCode(cmd.Context(), ref, raw, out, project)
			}
			if project != "" {
				return usageErr("--project is for --format claude-code: it puts the transcript in Claude Code's folder for that project")
			}
			return a.withTarget(reading, func(t target) error {
				return exportThread(cmd.Context(), t, ref, format, raw, out, nil, a.stdout, a.stderr)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "openai", "the format: "+strings.Join(tools.ExportFormats, ", "))
	cmd.Flags().BoolVar(&raw, "raw", false, "the stored messages, without operations")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	cmd.Flags().StringVar(&project, "project", "", "claude-code: write into Claude Code's folder for this project's directory")
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return tools.ExportFormats, cobra.ShellCompDirectiveNoFileComp
	})
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// exportThread writes weft export: ref's thread in format, to the file
// out, else to stdout. An export is data, written exactly; only on a
// terminal, where it is read by people, are the thread's control
// characters shown as pictures (termsafe).
func exportThread(ctx context.Context, t target, ref, format string, raw bool, out string, cc *tools.ClaudeCodeArgs, stdout, stderr io.Writer) (err error) {
	ref, err = latestIfNone(ctx, t, ref)
	if err != nil {
		return err
	}
	if format == "jsonl" && raw {
		_, _ = fmt.Fprintln(stderr, "weft: note: jsonl is lossless: it holds the stored messages and the operations, so --raw changes nothing")
	}
	w := stdout
	var screen *bytes.Buffer
	if out != "" {
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		// A write that only the close reports failing fails the export.
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	} else if isTerminal(stdout) {
		screen = &bytes.Buffer{}
		w = screen
	}
	notes, err := t.Export(ctx, w, tools.ExportArgs{SessionID: ref, Format: format, Raw: raw, ClaudeCode: cc})
	if err != nil {
		return err
	}
	for _, line := range notes {
		_, _ = fmt.Fprintln(stderr, "weft: note:", termsafe.Text(line))
	}
	if screen != nil {
		b := screen.Bytes()
		if format == "markdown" {
			b = []byte(termsafe.Text(string(b)))
		} else {
			b = termsafe.JSON(b)
		}
		_, err = stdout.Write(b)
	}
	return err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
