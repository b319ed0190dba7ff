package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/mcpserver"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// parseFlags parses a subcommand's flags, which may come before or after
// its positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageErr("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func cmdLs(ctx context.Context, svc *ops.Service, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("ls takes no arguments (got %q)", pos[0])
	}
	res, err := svc.ListSessions(ctx, ops.ListSessionsArgs{})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, res)
	}
	if len(res.Sessions) == 0 {
		fmt.Fprintln(w, "no sessions yet: weft new TITLE creates one")
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight|tabwriter.DiscardEmptyColumns)
	// Numbers line up on the right; the title comes last, left-aligned.
	fmt.Fprintln(tw, "ID\tMESSAGES\tRAW TOKENS\tEFFECTIVE\tOPS\tUPDATED\t  TITLE")
	for _, s := range res.Sessions {
		updated, _ := time.Parse(time.RFC3339Nano, s.UpdatedAt)
		eff := "?"
		if s.EffectiveTokens != nil {
			eff = thousands(*s.EffectiveTokens)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t  %s\n", s.SessionID, thousands(s.MessageCount), thousands(s.Tokens), eff, s.OpCount, updated.Local().Format("2006-01-02 15:04"), s.Title)
	}
	return tw.Flush()
}

// thousands writes n with comma separators: 165,521.
func thousands(n int) string {
	s := strconv.Itoa(n)
	start := 0
	if n < 0 {
		start = 1
	}
	var b strings.Builder
	b.WriteString(s[:start])
	digits := s[start:]
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func cmdNew(ctx context.Context, svc *ops.Service, args []string, w io.Writer) error {
	if len(args) == 0 {
		return usageErr("new needs a title: weft new TITLE")
	}
	res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: strings.Join(args, " ")})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, res.SessionID)
	return nil
}

func cmdShow(ctx context.Context, svc *ops.Service, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	raw := fs.Bool("raw", false, "the stored messages, without operations")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("show takes one session at most (got %d)", len(pos))
	}
	ref := ""
	if len(pos) == 1 {
		ref = pos[0]
	}
	info, v, err := svc.View(ref)
	if err != nil {
		return err
	}
	viewName, total := "effective", v.Len()
	if *raw {
		viewName, total = "raw", info.MessageCount
	}
	var msgs []ops.MessageOut
	for start := 0; start < total; start += 2000 {
		end := min(start+2000, total) - 1
		res, err := svc.GetMessageRange(ctx, ops.MessageRangeArgs{SessionID: info.ID, StartIdx: &start, EndIdx: &end, View: viewName})
		if err != nil {
			return err
		}
		msgs = append(msgs, res.Messages...)
	}
	if *asJSON {
		return writeJSON(w, ops.MessageRangeResult{SessionID: info.ID, Version: info.Version, Total: total, Messages: orEmpty(msgs)})
	}
	fmt.Fprintf(w, "%s  %s · %d messages · %d operations · version %d · %d → %d tokens\n\n",
		info.Title, info.ID, info.MessageCount, info.OpCount, info.Version, v.RawTokens, v.Tokens)
	mi := 0
	for i, m := range msgs {
		for !*raw && mi < len(v.Markers) && v.Markers[mi].At == i {
			writeMarker(w, v, &v.Markers[mi])
			mi++
		}
		writeMessage(w, m)
	}
	for ; !*raw && mi < len(v.Markers); mi++ {
		writeMarker(w, v, &v.Markers[mi])
	}
	return nil
}

func orEmpty(m []ops.MessageOut) []ops.MessageOut {
	if m == nil {
		return []ops.MessageOut{}
	}
	return m
}

func writeMarker(w io.Writer, v *model.View, m *model.Marker) {
	var what string
	switch m.OpType {
	case model.OpDigest:
		what = fmt.Sprintf("digest of %d items", len(m.Hidden))
	case model.OpRevise:
		what = fmt.Sprintf("revision of %d items into %d", len(m.Hidden), m.Added)
	case model.OpSnip:
		what = fmt.Sprintf("snipped %d items", len(m.Hidden))
	case model.OpResequence:
		what = fmt.Sprintf("reordered %d items", len(m.Hidden))
	case model.OpInsert:
		what = fmt.Sprintf("inserted %d items", m.Added)
	}
	fmt.Fprintf(w, "      ── %s · %s by %s ──\n", what, m.OpID, m.Author)
}

func writeMessage(w io.Writer, m ops.MessageOut) {
	at, _ := time.Parse(time.RFC3339Nano, m.CreatedAt)
	flags := ""
	if m.Synthetic {
		flags = " (synthetic)"
	}
	if len(m.Tags) > 0 {
		flags += " #" + strings.Join(m.Tags, " #")
	}
	fmt.Fprintf(w, "%5d  %-9s %s  %s%s\n", m.Index, m.Role, at.Local().Format("2006-01-02 15:04"), m.ID, flags)
	for line := range strings.Lines(strings.TrimRight(m.Content, "\n")) {
		fmt.Fprintf(w, "       %s", line)
		if !strings.HasSuffix(line, "\n") {
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
}

func cmdCall(ctx context.Context, svc *ops.Service, args []string, w io.Writer) error {
	tool, raw, err := callArgs(args)
	if err != nil {
		return err
	}
	res, err := tool.Call(ctx, svc, raw)
	if err != nil {
		return err
	}
	return writeJSON(w, res)
}

// cmdCallRemote runs weft call through the weft that holds the database.
func cmdCallRemote(ctx context.Context, r *mcpserver.Remote, args []string, w io.Writer) error {
	tool, raw, err := callArgs(args)
	if err != nil {
		return err
	}
	res, err := r.Call(ctx, tool, raw)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, res, "", "  "); err != nil {
		return fmt.Errorf("the running weft answered %s with something that is not JSON: %w", tool.Name, err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// callArgs reads weft call's tool and arguments, checked before anything
// runs.
func callArgs(args []string) (*ops.Tool, json.RawMessage, error) {
	if len(args) == 0 {
		return nil, nil, usageErr("call needs a tool name: weft call TOOL [JSON | key=value ...] (weft tools lists them)")
	}
	tool, ok := ops.LookupTool(args[0])
	if !ok {
		return nil, nil, usageErr("no tool %q; the tools are: %s", args[0], strings.Join(ops.ToolNames(), ", "))
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

func cmdTools(w io.Writer) error {
	for _, t := range ops.Tools() {
		fmt.Fprintf(w, "%s(%s)\n    %s\n", t.Name, strings.Join(t.ArgNames(), ", "), t.Description)
	}
	return nil
}
