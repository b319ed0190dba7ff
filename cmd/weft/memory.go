package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
	"weft/ops/memory"
	"weft/ops/tools"
)

// memoryCommand is weft memory.
func (a *app) memoryCommand() *cobra.Command {
	var scope string
	var off bool
	cmd := &cobra.Command{
		Use:   "memory [SESSION] [key=value ...]",
		Short: "Show or set a session's memory policy",
		Long: `memory shows a session's memory policy and its thread by tier: the active turns, the summaries, the archive. With key=value pairs (the arguments of set_memory_policy: max_active_turns, summary_turn_count, max_summaries, max_archived_turns, max_tokens, budget_tokens, target_tokens, tool_output_min_tokens, tool_output_older_than_turns, summarizer, model) it sets them: the pairs given change, the rest stay (on a session without a policy, the seed's defaults). A new policy applies at once, and after every write that adds messages.

Every change the policy makes is an operation by memory, listed, switched off and reverted like any other (in the TUI's o panel too); what is switched off or reverted is not made again. --off removes the policy; what it made stays. --scope file sets what every session made from now on gets, --scope proxied what the sessions the context proxy starts get.`,
		Example: `
weft memory
weft memory "auth design" budget_tokens=20000
weft memory max_active_turns=6 tool_output_min_tokens=2000 tool_output_older_than_turns=3
weft memory --scope proxied budget_tokens=150000 target_tokens=100000
weft memory --off`,
		Args: a.positional(func(args []string) error {
			_, pairs := memoryArgs(args)
			if len(pairs) > 0 || off {
				tool, _ := tools.Lookup("set_memory_policy")
				if _, err := tool.ArgsFromPairs(pairs); err != nil {
					return usageErr("%v", err)
				}
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			session, pairs := memoryArgs(args)
			return a.memory(cmd.Context(), session, pairs, scope, off)
		},
	}
	cmd.Flags().StringVar(&scope, "scope", memory.ScopeSession, "what to set: session, file (the default of sessions made from now on) or proxied (of sessions the context proxy starts)")
	cmd.Flags().BoolVar(&off, "off", false, "remove the policy: weft changes nothing more by itself")
	a.hideFlags(cmd, tuiFlags...)
	return cmd
}

// memoryArgs splits weft memory's arguments into the session (the first,
// when it is no key=value pair) and the pairs.
func memoryArgs(args []string) (session string, pairs []string) {
	if len(args) > 0 && !strings.Contains(args[0], "=") {
		return args[0], args[1:]
	}
	return "", args
}

// memory runs weft memory.
func (a *app) memory(ctx context.Context, session string, pairs []string, scope string, off bool) error {
	set := len(pairs) > 0 || off || scope != memory.ScopeSession
	acc := reading
	if set {
		acc = writing
	}
	return a.withTarget(acc, func(t target) error {
		if set {
			tool, _ := tools.Lookup("set_memory_policy")
			raw, err := tool.ArgsFromPairs(pairs)
			if err != nil {
				return usageErr("%v", err)
			}
			var args memory.SetMemoryPolicyArgs
			if err := json.Unmarshal(raw, &args); err != nil {
				return err
			}
			args.SessionID, args.Scope, args.Off = session, scope, off
			res, err := invoke[memory.MemoryPolicyResult](ctx, t, "set_memory_policy", args)
			if err != nil {
				return err
			}
			if scope != memory.ScopeSession {
				printDefaults(a.stdout, res)
				return nil
			}
			if res.Check != nil && len(res.Check.Made) > 0 {
				_, _ = fmt.Fprintf(a.stdout, "made %s: %s → %s tokens\n", english.Count(len(res.Check.Made), "operation"), english.Thousands(res.Check.TokensBefore), english.Thousands(res.Check.TokensAfter))
			}
		}
		tiers, err := invoke[memory.TieredResult](ctx, t, "get_tiered_history", memory.TieredHistoryArgs{SessionID: session})
		if err != nil {
			return err
		}
		printTiers(a.stdout, tiers)
		return nil
	})
}

// printDefaults writes the file's default policies.
func printDefaults(w io.Writer, res memory.MemoryPolicyResult) {
	line := func(what string, p *model.MemoryPolicy) {
		if p == nil {
			_, _ = fmt.Fprintf(w, "%s: none\n", what)
			return
		}
		_, _ = fmt.Fprintf(w, "%s: %s\n", what, memory.Describe(*p))
	}
	line("new sessions", res.File)
	line("sessions the proxy starts", res.Proxied)
}

// printTiers writes a session's memory, tier by tier.
func printTiers(w io.Writer, r memory.TieredResult) {
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	if r.Policy == nil {
		p("session %s: no memory policy (weft changes nothing by itself; weft memory key=value sets one)\n", termsafe.Line(r.SessionID))
	} else {
		p("session %s: %s\n", termsafe.Line(r.SessionID), memory.Describe(*r.Policy))
	}
	p("tokens: %s stored, %s sent\n", english.Thousands(r.RawTokens), english.Thousands(r.Tokens))
	tier := func(name string, t memory.Tier, turns bool) {
		if t.Items == 0 {
			return
		}
		what := english.Count(t.Items, "item")
		if turns {
			what = english.Count(t.Turns, "turn") + ", " + what
		}
		p("%-10s %s, %s tokens%s\n", name+":", what, english.Thousands(t.Tokens), span(t))
	}
	tier("preamble", r.Preamble, false)
	if a := r.Archive; a != nil {
		p("%-10s %s, %s tokens%s (%s)\n", "archive:", english.Count(a.Turns, "turn"), english.Thousands(a.Tokens), span(a.Tier), a.Source)
	}
	for _, s := range r.Summaries {
		by := s.Author
		if s.Source != "" {
			by += ", " + s.Source
		}
		turns := english.Count(s.Messages, "message")
		if s.Turns > 0 {
			turns = english.Count(s.Turns, "turn")
		}
		p("%-10s %s at %d, %s, %s tokens%s (%s)\n", "summary:", s.ID, s.Index, turns, english.Thousands(s.Tokens), span(s.Tier), termsafe.Line(by))
	}
	if r.SummariesOmitted > 0 {
		p("%-10s and %s before them\n", "", english.Count(r.SummariesOmitted, "summary"))
	}
	tier("older", r.Older, true)
	tier("active", r.Active, true)
	if st := r.Proxy; st != nil {
		line := fmt.Sprintf("%s through the proxy, %s of the prompt cache's prefix", english.Count(st.Requests, "request"), english.Count(st.PrefixBreaks, "break"))
		if u := st.Usage; u != nil {
			line += fmt.Sprintf("; the last answer: %s input tokens read from the cache, %s written to it, %s neither", english.Thousands(u.CacheRead), english.Thousands(u.CacheWrite), english.Thousands(u.Input))
		}
		p("%s\n", line)
		if l := st.LastSent; l != nil {
			p("the last request sent: system %s, tools %s, summaries %s, turns %s, tool outputs %s tokens\n",
				english.Thousands(l.System), english.Thousands(l.Tools), english.Thousands(l.Summaries), english.Thousands(l.Turns), english.Thousands(l.ToolOutputs))
		}
	}
}

// span writes a tier's time span, " (Jan 02 15:04 – Jan 03 09:00)", in
// local time.
func span(t memory.Tier) string {
	from, err1 := time.Parse(time.RFC3339Nano, t.TimeSpanStart)
	to, err2 := time.Parse(time.RFC3339Nano, t.TimeSpanEnd)
	if err1 != nil || err2 != nil {
		return ""
	}
	const layout = "Jan 02 15:04"
	return fmt.Sprintf(" (%s – %s)", from.Local().Format(layout), to.Local().Format(layout))
}
