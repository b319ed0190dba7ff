package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"weft/internal/termsafe"
	"weft/ops/fork"
)

// forkCommand is weft fork.
func (a *app) forkCommand() *cobra.Command {
	var at int
	var title string
	cmd := &cobra.Command{
		Use:   "fork [SESSION] [--at IDX]",
		Short: "Fork a session: a new one with its thread up to an item",
		Long:  `fork makes a new session whose thread is SESSION's effective thread up to the item at index IDX (0-based; default the last), with SESSION's operations carried as far as they apply there, and prints the new session's ID. SESSION is unchanged, and the fork says where it came from (weft ls, the TUI's session picker). Try another path without losing this one.`,
		Example: `
weft fork --at 41
weft fork "auth design" --at 12 --title "auth design: sessions instead of JWT"`,
		Args: a.positional(func(args []string) error {
			if len(args) > 1 {
				return usageErr("fork takes one session at most: weft fork [SESSION] --at IDX")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			fa := fork.Args{Title: title}
			if len(args) == 1 {
				fa.SessionID = args[0]
			}
			if cmd.Flags().Changed("at") {
				fa.AtIdx = &at
			}
			return a.withTarget(writing, func(t target) error {
				res, err := invoke[fork.Result](cmd.Context(), t, "fork_session", fa)
				if err != nil {
					return err
				}
				_, _ = fmt.Fprintln(a.stdout, res.SessionID)
				_, _ = fmt.Fprintf(a.stderr, "forked %s at item %d (%s): %q, %d items\n", termsafe.Line(res.ForkOf.SessionID), res.ForkOf.Index, res.ForkOf.At, termsafe.Line(res.Title), res.Items)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&at, "at", 0, "the index of the last item the fork keeps (default: the last)")
	cmd.Flags().StringVar(&title, "title", "", "the fork's title (default: the source's, marked as a fork)")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}
