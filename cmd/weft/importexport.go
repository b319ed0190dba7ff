package main

import (
	"bufio"
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
	"weft/formats/export"
	"weft/formats/readers"
	"weft/formats/weftjsonl"
	"weft/ops"
)

// importCommand is weft import.
func (a *app) importCommand() *cobra.Command {
	var format, session string
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import conversation files (the format is detected)",
		Long: `import reads conversation files into the database: ` + strings.Join(formatNames(), ", ") + ` (detected when --format is not given); - reads standard input.

Importing the same file again adds nothing; importing a longer version of a growing session adds only the new messages. Records that cannot be read are reported with their line numbers, the rest is imported, and import exits 1 to say the file came in only in part. A Claude Code compaction becomes a digest over the messages it compacted. --session puts the threads of every file into one session.`,
		Example: `
weft import ~/.claude/projects/*/*.jsonl
weft import --format chatgpt conversations.json
weft import --session "research" a.jsonl b.jsonl`,
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
			return a.withService(func(svc *ops.Service) error {
				return importFiles(cmd.Context(), svc, files, formats.Format(format), session, a.stdout, a.stderr)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "the files' format (default: detected)")
	cmd.Flags().StringVar(&session, "session", "", "import into this session (ID, prefix or title; created if none matches)")
	cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formatNames(), cobra.ShellCompDirectiveNoFileComp
	})
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// importFiles imports files one after the other, reporting each; the
// error says how many were refused or imported only in part.
func importFiles(ctx context.Context, svc *ops.Service, files []string, format formats.Format, session string, stdout, stderr io.Writer) error {
	failed, partly := 0, 0
	for _, file := range files {
		if err := importFile(ctx, svc, file, format, session, stdout, stderr); err != nil {
			var fe *fileError
			if errors.As(err, &fe) {
				fmt.Fprintf(stderr, "weft: %v\n", err)
			} else {
				fmt.Fprintf(stderr, "weft: %s: %v\n", file, err)
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
		what = append(what, plural(e.unread, "record")+" could not be read")
	}
	if e.unplaced > 0 {
		what = append(what, plural(e.unplaced, "message")+" could not be placed in order")
	}
	if e.opsDropped > 0 {
		what = append(what, plural(e.opsDropped, "operation")+" had nothing left to act on")
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

func importFile(ctx context.Context, svc *ops.Service, file string, format formats.Format, session string, stdout, stderr io.Writer) error {
	var f *os.File
	if file == "-" {
		f = os.Stdin
	} else {
		var err error
		if f, err = os.Open(file); err != nil {
			return openError(file, err)
		}
		defer f.Close()
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
	br := bufio.NewReaderSize(f, formats.DetectSize)
	head, err := br.Peek(formats.DetectSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("reading it: %w", err)
	}
	if format == "" {
		if format, err = formats.Detect(head); err != nil {
			return err
		}
	}
	read, _ := readers.For(format)
	counter := &countingReader{r: br}
	bar := newImportProgress(stderr, file, size, counter)
	im := svc.NewImport(ctx, ops.ImportOptions{Session: session, Progress: bar.update})
	problems, err := read(counter, im)
	err = errors.Join(err, im.Close())
	bar.done()
	var partial partialError
	for i, p := range problems {
		switch {
		case p.Note:
		case p.More > 0:
			partial.unread += p.More
		default:
			partial.unread++
		}
		switch {
		case i == 20:
			fmt.Fprintf(stderr, "%s: … and %d more\n", file, len(problems)-20)
		case i > 20:
		case p.Note:
			fmt.Fprintf(stderr, "%s: note: %s\n", file, p)
		default:
			fmt.Fprintf(stderr, "%s: %s\n", file, p)
		}
	}
	for _, s := range im.Sessions {
		partial.unplaced += s.NotPlaced
		partial.opsDropped += s.OpsDropped
		for _, note := range s.Notes {
			fmt.Fprintf(stderr, "%s: session %s: %s\n", file, s.SessionID, note)
		}
	}
	reportImport(stdout, file, im.Sessions, partial.unread)
	if err != nil {
		return fmt.Errorf("%s import stopped: %w", format, err)
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
func reportImport(w io.Writer, file string, sessions []ops.ImportedSession, unread int) {
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
		fmt.Fprintf(w, "  %d messages %s %s %q", s.Added, verb, s.SessionID, s.Title)
		if s.Ops > 0 {
			fmt.Fprintf(w, ", %d operations", s.Ops)
		}
		if s.OpsDropped > 0 {
			fmt.Fprintf(w, " (%d not imported)", s.OpsDropped)
		}
		fmt.Fprintln(w)
	}
	if changed > listed {
		fmt.Fprintf(w, "  … and %d more sessions\n", changed-listed)
	}
	switch {
	case len(sessions) == 0:
		fmt.Fprintf(w, "%s: nothing to import\n", file)
		return
	case added == 0 && opsMade == 0 && notPlaced == 0 && opsDropped == 0 && unread == 0 && differ == 0:
		fmt.Fprintf(w, "%s: nothing new: %s already imported\n", file, plural(len(sessions), "session"))
		return
	case added == 0 && opsMade == 0:
		fmt.Fprintf(w, "%s: nothing added", file)
		if skipped > 0 {
			fmt.Fprintf(w, "; %d messages were already there", skipped)
		}
	default:
		fmt.Fprintf(w, "%s: %d messages imported into %s (%d new)", file, added, plural(changed, "session"), created)
		if skipped > 0 {
			fmt.Fprintf(w, "; %d were already there", skipped)
		}
	}
	if differ > 0 {
		fmt.Fprintf(w, "; %s already there %s in the file (kept as first imported)", plural(differ, "message"), map[bool]string{true: "differs", false: "differ"}[differ == 1])
	}
	if unread > 0 {
		fmt.Fprintf(w, "; %s could not be read", plural(unread, "record"))
	}
	if notPlaced > 0 {
		fmt.Fprintf(w, "; %s not added: %s before messages already there", plural(notPlaced, "message"), map[bool]string{true: "it belongs", false: "they belong"}[notPlaced == 1])
	}
	if opsDropped > 0 {
		fmt.Fprintf(w, "; %s not imported: nothing %s on was", plural(opsDropped, "operation"), map[bool]string{true: "it acts", false: "they act"}[opsDropped == 1])
	}
	fmt.Fprintln(w)
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
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

func (p *importProgress) update(messages int) {
	if !p.on || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	pct := min(float64(p.counter.n.Load())/float64(p.size), 1)
	fmt.Fprintf(p.w, "\r%s %s %d messages", p.name, p.bar.ViewAs(pct), messages)
	p.drawn = true
}

func (p *importProgress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// exportFormats are the formats weft export writes.
var exportFormats = []string{"openai", "anthropic", "jsonl", "markdown"}

// exportCommand is weft export.
func (a *app) exportCommand() *cobra.Command {
	var format, out string
	var raw bool
	cmd := &cobra.Command{
		Use:   "export [SESSION]",
		Short: "Write a thread as provider messages, markdown or lossless JSONL",
		Long: `export writes a session's effective thread (the stored messages with --raw) as openai or anthropic request messages, ready to send, or as markdown. jsonl is lossless: the stored messages and the operations, to move a session between files (weft import reads it back).

SESSION is an ID, a unique ID prefix or a title; default: the most recently updated session.`,
		Example: `
# the effective thread, ready to send
weft export --format anthropic
# lossless: messages and operations, to move a session between files
weft export "auth design" --format jsonl -o s.jsonl`,
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
			if !slices.Contains(exportFormats, format) {
				return usageErr("unknown export format %q: openai, anthropic, jsonl or markdown", format)
			}
			return a.withService(func(svc *ops.Service) error {
				return exportThread(cmd.Context(), svc, ref, format, raw, out, a.stdout, a.stderr)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "openai", "the format: openai, anthropic, jsonl or markdown")
	cmd.Flags().BoolVar(&raw, "raw", false, "the stored messages, without operations")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return exportFormats, cobra.ShellCompDirectiveNoFileComp
	})
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// exportThread writes weft export: ref's thread in format, to the file
// out, else to stdout.
func exportThread(ctx context.Context, svc *ops.Service, ref, format string, raw bool, out string, stdout, stderr io.Writer) error {
	w := stdout
	if out != "" {
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if format == "jsonl" {
		if raw {
			fmt.Fprintln(stderr, "weft: note: jsonl is lossless: it holds the stored messages and the operations, so --raw changes nothing")
		}
		session, err := svc.ExportWeft(ref)
		if err != nil {
			return err
		}
		if err := weftjsonl.Write(bw, session); err != nil {
			return err
		}
		return bw.Flush()
	}
	info, items, err := svc.ExportItems(ref, raw)
	if err != nil {
		return err
	}
	var report export.Report
	switch format {
	case "openai":
		report, err = export.WriteOpenAI(bw, items)
	case "anthropic":
		report, err = export.WriteAnthropic(bw, items)
	case "markdown":
		err = export.WriteMarkdown(bw, info.Title, items)
	}
	if err != nil {
		return err
	}
	for _, line := range report.Folded {
		fmt.Fprintln(stderr, "weft: note:", line)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return ctx.Err()
}
