package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"weft/internal/english"
	"weft/store/boltstore"
)

// checkCommand is weft check.
func (a *app) checkCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Verify the database file",
		Long: `check reads the whole database file, without writing to it, and lists what is wrong with it: its header pages and freelist; every page reachable from its root (in range, referenced once, of the right type, in key order: bbolt's own checks); and weft's records (every session's record, messages, heads, time index, operations and import keys decode and agree with each other).

It exits 0 when the file is sound and 1 when it found something. weft salvage OUT copies what can be read of a damaged file into a new one.`,
		Example: `
weft check
weft --db ~/threads.db check --json`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("check takes no arguments (got %q); the file is --db", args[0])
			}
			return nil
		}),
		RunE: func(*cobra.Command, []string) error {
			findings, err := boltstore.Check(a.db)
			if err != nil {
				return err
			}
			if err := printFindings(a.stdout, a.db, findings, asJSON); err != nil {
				return err
			}
			if len(findings) > 0 {
				return &exitError{1, fmt.Errorf("%s is damaged: %s found; weft salvage --db %s OUT copies what can be read into a new file OUT",
					a.db, english.Count(len(findings), "problem"), a.db)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as JSON")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// checkResult is weft check --json's output.
type checkResult struct {
	File     string              `json:"file"`
	Sound    bool                `json:"sound"`
	Findings []boltstore.Finding `json:"findings"`
}

// printFindings prints what check found: one line each, or JSON.
func printFindings(w io.Writer, file string, findings []boltstore.Finding, asJSON bool) error {
	if asJSON {
		if findings == nil {
			findings = []boltstore.Finding{}
		}
		return writeJSON(w, checkResult{File: file, Sound: len(findings) == 0, Findings: findings})
	}
	if len(findings) == 0 {
		_, err := fmt.Fprintf(w, "%s: no problems found\n", file)
		return err
	}
	for _, f := range findings {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return err
		}
	}
	return nil
}

// salvageCommand is weft salvage.
func (a *app) salvageCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "salvage OUT",
		Short: "Copy what can be read of a damaged database into a new file",
		Long: `salvage reads the database file (--db) read-only and copies every session, message, operation, import key and source mapping it can read into OUT, a new file (it refuses one that exists), then says what it copied and what it could not read.

A message that cannot be read but comes before readable ones is stored as a placeholder (a system message saying it was lost), so the messages after it keep their place and the operations their targets. A session whose record cannot be read keeps its messages under a new record. The new file passes weft check.`,
		Example: `
weft salvage rescued.db
weft --db ~/threads.db salvage ~/threads-rescued.db
weft --db ~/threads-rescued.db ls`,
		Args: a.positional(func(args []string) error {
			if len(args) != 1 {
				return usageErr("salvage needs one argument, the new file to write: weft salvage OUT")
			}
			return nil
		}),
		RunE: func(_ *cobra.Command, args []string) error {
			rep, err := boltstore.Salvage(a.db, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, rep)
			}
			return printSalvage(a.stdout, a.db, args[0], rep)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// printSalvage prints what salvage copied and what it skipped.
func printSalvage(w io.Writer, from, to string, rep boltstore.SalvageReport) error {
	_, _ = fmt.Fprintf(w, "copied from %s into %s: %s, %s", from, to,
		english.Count(rep.Sessions, "session"), english.Count(rep.Messages, "message"))
	if rep.Placeholders > 0 {
		_, _ = fmt.Fprintf(w, " (and %s for lost ones)", english.Count(rep.Placeholders, "placeholder"))
	}
	_, _ = fmt.Fprintf(w, ", %s, %s, %s\n", english.Count(rep.Ops, "operation"),
		english.Count(rep.ImportKeys, "import key"), english.Count(rep.Sources, "source mapping"))
	if len(rep.Skipped) == 0 {
		_, _ = fmt.Fprintln(w, "everything could be read")
	} else {
		_, _ = fmt.Fprintf(w, "could not read (%d):\n", len(rep.Skipped))
		for _, s := range rep.Skipped {
			_, _ = fmt.Fprintln(w, "  "+s)
		}
	}
	_, err := fmt.Fprintf(w, "open it with weft --db %s\n", to)
	return err
}
