package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
)

// writeJSON prints v as indented JSON, with the control characters
// encoding/json lets through escaped too (termsafe.JSON): the same data,
// safe on a terminal.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}

// lsCommand is weft ls.
func (a *app) lsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the sessions, with counts and tokens",
		Long: `ls lists the sessions in the file: for each its ID, messages, raw tokens (the stored messages), effective tokens (with the active operations applied), operations, last update and title.

--json prints the list_sessions tool's result. ls only reads the file: it opens it read-only, and makes none where --db names nothing. When another weft holds the file, ls asks that weft.`,
		Example: `
weft ls
weft --db ~/threads.db ls --json`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("ls takes no arguments (got %q)", args[0])
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withTarget(reading, func(t target) error {
				return listSessions(cmd.Context(), t, asJSON, a.stdout)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// listSessions prints weft ls.
func listSessions(ctx context.Context, t target, asJSON bool, w io.Writer) error {
	res, err := invoke[reads.ListSessionsResult](ctx, t, "list_sessions", reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)})
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, res)
	}
	if len(res.Sessions) == 0 {
		_, _ = fmt.Fprintln(w, "no sessions yet: weft new TITLE creates one")
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight|tabwriter.DiscardEmptyColumns)
	// Numbers line up on the right; the title comes last, left-aligned.
	_, _ = fmt.Fprintln(tw, "ID\tMESSAGES\tRAW TOKENS\tEFFECTIVE\tOPS\tUPDATED\t  TITLE")
	for _, s := range res.Sessions {
		updated, _ := time.Parse(time.RFC3339Nano, s.UpdatedAt)
		eff := "?"
		if s.EffectiveTokens != nil {
			eff = english.Thousands(*s.EffectiveTokens)
		}
		// Titles come from the threads: their control characters are
		// shown, not obeyed (and a tab would split the table's cells).
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t  %s\n", termsafe.Line(s.SessionID), english.Thousands(s.MessageCount), english.Thousands(s.Tokens), eff, s.OpCount, updated.Local().Format("2006-01-02 15:04"), termsafe.Line(s.Title))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A session that cannot be read is listed, and why said after.
	for _, s := range res.Sessions {
		if s.Unreadable != "" {
			_, _ = fmt.Fprintf(w, "%s cannot be read: %s (weft check says more; weft salvage OUT copies what can be read)\n", termsafe.Line(s.SessionID), termsafe.Line(s.Unreadable))
		}
	}
	return nil
}

// newCommand is weft new.
func (a *app) newCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "new TITLE",
		Short: "Create a session",
		Long:  `new creates an empty session titled TITLE (several words are joined with spaces) and prints its ID.`,
		Example: `
weft new "auth design"
weft call append_messages messages='[{"role":"user","content":"JWT or sessions?"}]'`,
		Args: a.positional(func(args []string) error {
			if len(args) == 0 {
				return usageErr("new needs a title: weft new TITLE")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withTarget(writing, func(t target) error {
				res, err := invoke[ops.CreateSessionResult](cmd.Context(), t, "create_session", ops.CreateSessionArgs{Title: strings.Join(args, " ")})
				if err != nil {
					return err
				}
				_, _ = fmt.Fprintln(a.stdout, res.SessionID)
				return nil
			})
		},
	}
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// showCommand is weft show.
func (a *app) showCommand() *cobra.Command {
	var raw, asJSON bool
	cmd := &cobra.Command{
		Use:   "show [SESSION]",
		Short: "Print a thread (effective unless --raw)",
		Long: `show prints a session's effective thread: the stored messages with the active operations applied, and a marker where each operation acted. --raw prints the stored messages instead; --json prints the messages as the get_message_range tool does.

SESSION is an ID, a unique ID prefix or a title; default: the most recently updated session. show only reads the file; when another weft holds it, show asks that weft.`,
		Example: `
# the effective thread, with a marker where each operation acted
weft show
# the stored messages of one session, as JSON
weft show "auth design" --raw --json`,
		Args: a.positional(func(args []string) error {
			if len(args) > 1 {
				return usageErr("show takes one session at most (got %d)", len(args))
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := ""
			if len(args) == 1 {
				ref = args[0]
			}
			return a.withTarget(reading, func(t target) error {
				return showThread(cmd.Context(), t, ref, raw, asJSON, a.stdout)
			})
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "the stored messages, without operations")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// showThread prints weft show: ref's thread, effective unless raw.
func showThread(ctx context.Context, t target, ref string, raw, asJSON bool, w io.Writer) error {
	ref, err := latestIfNone(ctx, t, ref)
	if err != nil {
		return err
	}
	o, msgs, err := readThread(ctx, t, ref, raw)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, reads.MessageRangeResult{SessionID: o.SessionID, Version: o.Version, Total: len(msgs), Messages: orEmpty(msgs)})
	}
	_, _ = fmt.Fprintf(w, "%s  %s · %s · %s · version %d · %s → %s tokens\n\n",
		termsafe.Line(o.Title), termsafe.Line(o.SessionID), english.Count(o.MessageCount, "message"), english.Count(o.OpCount, "operation"), o.Version, english.Thousands(o.RawTokens), english.Thousands(o.Tokens))
	mi := 0
	for i, m := range msgs {
		for !raw && mi < len(o.Markers) && o.Markers[mi].At == i {
			writeMarker(w, o.Markers[mi])
			mi++
		}
		writeMessage(w, m)
	}
	for ; !raw && mi < len(o.Markers); mi++ {
		writeMarker(w, o.Markers[mi])
	}
	return nil
}

// readThread reads a session's outline and all of its messages (the
// stored ones when raw), in pages, all of one version: when the thread
// changes meanwhile (the weft that holds the file is being used), it is
// read again.
func readThread(ctx context.Context, t target, ref string, raw bool) (tools.Outline, []reads.MessageOut, error) {
	const page = 2000 // get_message_range's most
	for attempt := 1; ; attempt++ {
		o, err := t.Outline(ctx, ref)
		if err != nil {
			return o, nil, err
		}
		viewName, total := "effective", o.Items
		if raw {
			viewName, total = "raw", o.MessageCount
		}
		msgs := make([]reads.MessageOut, 0, total)
		changed := false
		for start := 0; start < total && !changed; start += page {
			end := min(start+page, total) - 1
			res, err := invoke[reads.MessageRangeResult](ctx, t, "get_message_range", reads.MessageRangeArgs{SessionID: o.SessionID, StartIdx: &start, EndIdx: &end, View: viewName, MaxTokens: new(reads.NoLimit)})
			if err != nil && !errors.Is(err, ops.ErrInvalid) {
				return o, nil, err
			}
			// A range past a thread that got shorter is refused as
			// invalid: the thread changed.
			changed = err != nil || res.Version != o.Version
			msgs = append(msgs, res.Messages...)
		}
		if !changed {
			return o, msgs, nil
		}
		if attempt == 5 {
			return o, nil, fmt.Errorf("session %s changed while it was read, five times over: try again when it is quieter", o.SessionID)
		}
	}
}

// latestIfNone names the most recently updated session when ref names
// none, as weft show and export promise: a running weft would otherwise
// take the session open in its TUI.
func latestIfNone(ctx context.Context, t target, ref string) (string, error) {
	if ref != "" {
		return ref, nil
	}
	list, err := invoke[reads.ListSessionsResult](ctx, t, "list_sessions", reads.ListSessionsArgs{Limit: 1})
	if err != nil || len(list.Sessions) == 0 {
		return "", err // with no session, the request says there is none
	}
	return list.Sessions[0].SessionID, nil
}

func orEmpty(m []reads.MessageOut) []reads.MessageOut {
	if m == nil {
		return []reads.MessageOut{}
	}
	return m
}

func writeMarker(w io.Writer, m tools.OutlineMarker) {
	var what string
	switch m.OpType {
	case model.OpDigest:
		what = "digest of " + english.Count(m.Hidden, "item")
	case model.OpRevise:
		what = fmt.Sprintf("revision of %s into %s", english.Count(m.Hidden, "item"), english.Thousands(m.Added))
	case model.OpSnip:
		what = "snipped " + english.Count(m.Hidden, "item")
	case model.OpResequence:
		what = "reordered " + english.Count(m.Hidden, "item")
	case model.OpInsert:
		what = "inserted " + english.Count(m.Added, "item")
	}
	_, _ = fmt.Fprintf(w, "      ── %s · %s by %s ──\n", what, termsafe.Line(m.OperationID), termsafe.Line(m.Author))
}

func writeMessage(w io.Writer, m reads.MessageOut) {
	at, _ := time.Parse(time.RFC3339Nano, m.CreatedAt)
	flags := ""
	if m.Synthetic {
		flags = " (synthetic)"
	}
	if len(m.Tags) > 0 {
		flags += " #" + strings.Join(m.Tags, " #")
	}
	_, _ = fmt.Fprintf(w, "%5d  %-9s %s  %s%s\n", m.Index, termsafe.Line(string(m.Role)), at.Local().Format("2006-01-02 15:04"), termsafe.Line(string(m.ID)), termsafe.Line(flags))
	// The content is the thread's: its control characters are shown, not
	// obeyed; its lines and tabs stay.
	for line := range strings.Lines(termsafe.Text(strings.TrimRight(m.Content, "\n"))) {
		_, _ = fmt.Fprintf(w, "       %s", line)
		if !strings.HasSuffix(line, "\n") {
			_, _ = fmt.Fprintln(w)
		}
	}
	_, _ = fmt.Fprintln(w)
}

// callCommand is weft call.
func (a *app) callCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON | key=value ...]",
		Short: "Run any tool, print its JSON result",
		Long: `call runs one of weft's tools (weft tools lists them) and prints its JSON result on stdout. When another weft holds the file, call asks that weft to run it, with the same results and refusals.

The arguments are one JSON object, or key=value words read by each argument's type (lists may be comma-separated: tags=db,auth). A refused request prints why on stderr, exits 1 (2 for a usage error), and changes nothing.`,
		Example: `
weft call append_messages messages='[{"role":"user","content":"JWT or sessions?"}]'
weft call digest_messages start_idx=0 end_idx=1 summary="Chose JWT"
weft call list_operations
weft call revert_operation '{"operation_id":"…"}'
weft call assemble_context format=anthropic max_tokens=8000`,
		Args: a.positional(func(args []string) error {
			_, _, err := callArgs(args)
			return err
		}),
		ValidArgsFunction: completeCall,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd.Context(), args)
		},
	}
	a.describeFlag(cmd, "token", "bearer token for a running weft that holds the file (default $WEFT_TOKEN)")
	a.hideFlags(cmd, "theme", "mcp-addr", "no-mcp", "allow-origin", "max-result-tokens")
	return cmd
}

// call runs weft call: in-process, or through the weft that holds the
// file.
func (a *app) call(ctx context.Context, args []string) (err error) {
	tool, raw, err := callArgs(args)
	if err != nil {
		return err
	}
	// A tool that only reads (the registry says which) never writes the
	// file, nor makes one.
	acc := writing
	if tool.ReadOnly {
		acc = reading
	}
	return a.withTarget(acc, func(t target) error {
		res, _, err := t.Call(ctx, tool, raw)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := json.Indent(&out, res, "", "  "); err != nil {
			return fmt.Errorf("%s answered with something that is not JSON: %w", tool.Name, err)
		}
		out.WriteByte('\n')
		_, err = a.stdout.Write(termsafe.JSON(out.Bytes()))
		return err
	})
}

// completeCall completes weft call's tool, then its argument names.
func completeCall(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return tools.Names(), cobra.ShellCompDirectiveNoFileComp
	}
	tool, ok := tools.Lookup(args[0])
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, n := range tool.ArgNames() {
		names = append(names, n+"=")
	}
	return names, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// callArgs reads weft call's tool and arguments, checked before anything
// runs.
func callArgs(args []string) (*tools.Tool, json.RawMessage, error) {
	if len(args) == 0 {
		return nil, nil, usageErr("call needs a tool name: weft call TOOL [JSON | key=value ...] (weft tools lists them)")
	}
	tool, ok := tools.Lookup(args[0])
	if !ok {
		return nil, nil, usageErr("no tool %q; the tools are: %s", args[0], strings.Join(tools.Names(), ", "))
	}
	var raw json.RawMessage
	switch rest := args[1:]; {
	case len(rest) == 1 && strings.HasPrefix(strings.TrimSpace(rest[0]), "{"):
		raw = json.RawMessage(rest[0])
	default:
		var err error
		if raw, err = tool.ArgsFromPairs(rest); err != nil {
			return nil, nil, usageErr("%v", err)
		}
	}
	if _, err := tool.Decode(raw); err != nil {
		return nil, nil, usageErr("%v", err)
	}
	return tool, raw, nil
}

// toolsCommand is weft tools.
func (a *app) toolsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools and their arguments",
		Long:  `tools lists every tool weft call, MCP and the HTTP API run, with its arguments and what it does.`,
		Example: `
weft tools
weft call get_turns_since timestamp=-2h`,
		Args: a.positional(func(args []string) error {
			if len(args) > 0 {
				return usageErr("tools takes no arguments (got %q)", args[0])
			}
			return nil
		}),
		RunE: func(*cobra.Command, []string) error {
			for _, t := range tools.All() {
				_, _ = fmt.Fprintf(a.stdout, "%s(%s)\n    %s\n", t.Name, strings.Join(t.ArgNames(), ", "), t.Description)
			}
			return nil
		},
	}
	a.hideFlags(cmd, "db", "theme", "mcp-addr", "no-mcp", "token", "allow-origin", "max-result-tokens")
	return cmd
}
