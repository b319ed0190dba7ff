package dialog

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/model"
	"weft/ops"
	"weft/ops/memory"
	"weft/ops/tools"
	"weft/themes"
)

// M shows and sets the session's memory policy as text: a key=value
// line for each of set_memory_policy's fields, the current values (the
// seed's defaults for a session without one); the line "off" alone
// removes the policy.

// NewMemory opens M's dialog on policy p (nil: none yet), saying what
// the session's last request through the proxy sent (st, nil: none
// since weft started); submit sets what the text says (the dialog waits,
// open, until it is set, and says why when it is refused).
func NewMemory(st *themes.Styles, title string, p *model.MemoryPolicy, stats *ops.ProxyStats, submit func(text string) tea.Cmd) *Text {
	note := "weft keeps this thread within it by itself, with operations by memory you can switch off or revert; \"off\" alone removes it"
	if p == nil {
		note = "no policy yet: weft changes nothing by itself. ctrl+s sets this one; " + note
	}
	if stats != nil && stats.LastSent != nil {
		l := stats.LastSent
		note += fmt.Sprintf(". The last request sent: system %s · tools %s · summaries %s · turns %s · tool outputs %s tokens; %s of the prompt cache's prefix in %s",
			english.Thousands(l.System), english.Thousands(l.Tools), english.Thousands(l.Summaries), english.Thousands(l.Turns), english.Thousands(l.ToolOutputs),
			english.Count(stats.PrefixBreaks, "break"), english.Count(stats.Requests, "request"))
		if u := stats.Usage; u != nil {
			note += fmt.Sprintf("; the provider read %s input tokens from its cache, wrote %s, and %s neither", english.Thousands(u.CacheRead), english.Thousands(u.CacheWrite), english.Thousands(u.Input))
		}
	}
	return NewText(st, "Memory policy of "+title, note, "to set it", MemoryText(p), submit)
}

// MemoryArgs reads M's text as set_memory_policy's arguments.
func MemoryArgs(text string) (memory.SetMemoryPolicyArgs, error) {
	var a memory.SetMemoryPolicyArgs
	pairs, off := MemoryPairs(text)
	tool, _ := tools.Lookup("set_memory_policy")
	raw, err := tool.ArgsFromPairs(pairs)
	if err == nil {
		err = json.Unmarshal(raw, &a)
	}
	a.Off = off
	return a, err
}

// MemoryText is policy p as M's dialog shows it.
func MemoryText(p *model.MemoryPolicy) string {
	if p == nil {
		d := model.DefaultMemoryPolicy()
		p = &d
	}
	t := model.ToolOutputRule{}
	if p.ToolOutput != nil {
		t = *p.ToolOutput
	}
	lines := []string{
		fmt.Sprintf("max_active_turns=%d", p.MaxActiveTurns),
		fmt.Sprintf("summary_turn_count=%d", p.SummaryTurnCount),
		fmt.Sprintf("max_summaries=%d", p.MaxSummaries),
		fmt.Sprintf("max_archived_turns=%d", p.MaxArchivedTurns),
		fmt.Sprintf("max_tokens=%d", p.MaxTokens),
		fmt.Sprintf("budget_tokens=%d", p.BudgetTokens),
		fmt.Sprintf("target_tokens=%d", p.TargetTokens),
		fmt.Sprintf("tool_output_min_tokens=%d", t.MinTokens),
		fmt.Sprintf("tool_output_older_than_turns=%d", t.OlderThanTurns),
		"summarizer=" + p.Summarizer,
		"model=" + p.Model,
	}
	return strings.Join(lines, "\n")
}

// MemoryPairs reads M's text: its key=value lines (blank ones and those
// of a tool-output rule left at 0 skipped), and whether it says "off".
func MemoryPairs(text string) (pairs []string, off bool) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.EqualFold(line, "off"):
			off = true
		case line == "tool_output_older_than_turns=0":
			// 0 with no stubs: the rule is off, and set_memory_policy
			// takes no 0 here.
		default:
			pairs = append(pairs, line)
		}
	}
	return pairs, off
}
