package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/spf13/cobra"

	"weft/ops/reads"
)

// diffCommand is weft diff.
func (a *app) diffCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff [SESSION]",
		Short: "Print what the model gets against what was said",
		Long: `diff sets a session's stored thread against its effective one, a line per message: for each operation that changes what the model gets, an @@ header (its type, ID, author and rule, the stored messages it covers, the tokens before and after), the stored messages it removed or replaced ("-"), and what the model gets in their place ("+"); reordered messages show in their old and new order; runs of messages kept as they were are one line each, and the operations that change nothing are named at the end.

Colours show only on a terminal (and not with $NO_COLOR set). --json prints the diff_session tool's result: the hunks, line by line, and the same text.

SESSION is an ID, a unique ID prefix or a title; default: the most recently updated session. diff only reads the file; when another weft holds it, diff asks that weft.`,
		Example: `
weft diff
weft diff "auth design" --json`,
		Args: a.positional(func(args []string) error {
			if len(args) > 1 {
				return usageErr("diff takes one session at most (got %d)", len(args))
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := ""
			if len(args) == 1 {
				ref = args[0]
			}
			colour := !a.env.noColor && isTerminal(a.stdout)
			return a.withTarget(reading, func(t target) error {
				return printDiff(cmd.Context(), t, ref, asJSON, colour, a.stdout)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diff_session tool's JSON result")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// printDiff prints weft diff: ref's diff whole, as text (coloured when
// colour) or as JSON.
func printDiff(ctx context.Context, t target, ref string, asJSON, colour bool, w io.Writer) error {
	ref, err := latestIfNone(ctx, t, ref)
	if err != nil {
		return err
	}
	res, err := invoke[reads.DiffSessionResult](ctx, t, "diff_session", reads.DiffSessionArgs{SessionID: ref, MaxTokens: new(reads.NoLimit)})
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, res)
	}
	_, _ = fmt.Fprintf(w, "diff %s (version %d)\n", res.SessionID, res.Version)
	// The text is weft's rendering, the messages' control characters
	// already made visible.
	for line := range strings.Lines(res.Text) {
		if colour {
			line = paintDiffLine(strings.TrimSuffix(line, "\n")) + "\n"
		}
		_, _ = io.WriteString(w, line)
	}
	return nil
}

// The colours of a diff's lines, in the terminal's own palette.
var (
	diffHeader  = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
	diffRemoved = lipgloss.NewStyle().Foreground(lipgloss.Red)
	diffAdded   = lipgloss.NewStyle().Foreground(lipgloss.Green)
	diffNote    = lipgloss.NewStyle().Faint(true)
	diffFile    = lipgloss.NewStyle().Bold(true)
)

// paintDiffLine colours a line of a diff by what it is: a file header,
// an @@ header, a removed or added line, a kept run or a note.
func paintDiffLine(line string) string {
	switch {
	case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "):
		return diffFile.Render(line)
	case strings.HasPrefix(line, "@@ "):
		return diffHeader.Render(line)
	case strings.HasPrefix(line, "-"):
		return diffRemoved.Render(line)
	case strings.HasPrefix(line, "+"):
		return diffAdded.Render(line)
	case strings.HasPrefix(line, " ⋯"), strings.HasPrefix(line, "#"):
		return diffNote.Render(line)
	}
	return line
}
