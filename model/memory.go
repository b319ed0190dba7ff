package model

import (
	"fmt"
	"strings"
)

// MemoryPolicy is how weft keeps a session's thread within bounds by
// itself (DESIGN.md, "Tiered memory"): the seed's tiers (the latest turns
// raw, older ones digested a few at a time into summaries, the oldest
// summaries into one archive), a token budget for live agents, and a rule
// that stubs old, large tool outputs. Every change it makes is an
// ordinary operation, authored MemoryAuthor, with the rule that made it.
type MemoryPolicy struct {
	// MaxActiveTurns is how many of the latest turns stay raw.
	MaxActiveTurns int `json:"max_active_turns"`
	// SummaryTurnCount is how many turns one summary digests.
	SummaryTurnCount int `json:"summary_turn_count"`
	// MaxSummaries is how many summaries stand before the oldest are
	// digested, with the archive, into one archive summary.
	MaxSummaries int `json:"max_summaries"`
	// MaxArchivedTurns is how many turns the archive covers: turns older
	// than that are snipped from it (still stored, readable by ID).
	MaxArchivedTurns int `json:"max_archived_turns"`
	// MaxTokens is format_history_for_prompt's budget.
	MaxTokens int `json:"max_tokens"`
	// BudgetTokens, when not 0, is the most the effective thread may
	// count: past it, weft compacts it to TargetTokens (0: three
	// quarters of the budget).
	BudgetTokens int `json:"budget_tokens,omitempty"`
	TargetTokens int `json:"target_tokens,omitempty"`
	// ToolOutput, when set, stubs tool results over ToolOutput.MinTokens
	// that are older than ToolOutput.OlderThanTurns turns.
	ToolOutput *ToolOutputRule `json:"tool_output,omitempty"`
	// Summarizer names what writes the summaries: SummarizerUpstream,
	// SummarizerEndpoint, SummarizerSampling or SummarizerExtractive
	// ("": the first of those that is at hand). Model names the model
	// to ask, where the summarizer asks one ("": its own).
	Summarizer string `json:"summarizer,omitempty"`
	Model      string `json:"model,omitempty"`
}

// ToolOutputRule is a policy's rule for tool outputs.
type ToolOutputRule struct {
	MinTokens      int `json:"min_tokens"`
	OlderThanTurns int `json:"older_than_turns"`
}

// The summarizers a policy may name.
const (
	SummarizerUpstream   = "upstream"   // the proxy's provider, with the request's credentials
	SummarizerEndpoint   = "endpoint"   // WEFT_SUMMARY_URL
	SummarizerSampling   = "sampling"   // the MCP client's model
	SummarizerExtractive = "extractive" // weft's own, without a model
)

// MemoryAuthor is the author of the operations a memory policy makes.
const MemoryAuthor = "memory"

// The rules of a policy, as an operation it made names them (Op.Rule).
const (
	RuleTurns      = "turns"       // older turns digested into a summary
	RuleArchive    = "archive"     // the oldest summaries digested into the archive
	RuleArchiveCap = "archive-cap" // turns past max_archived_turns snipped
	RuleBudget     = "budget"      // turns digested to bring the thread under its budget
	RuleRounds     = "rounds"      // the latest turn's earlier tool rounds digested, for the budget
	RuleToolOutput = "tool-output" // a large, old tool output stubbed
)

// DefaultMemoryPolicy is the seed's configuration: 10 active turns,
// summaries of 5 turns, at most 3 summaries, 50 archived turns, 2000
// tokens for format_history_for_prompt; no budget, no tool-output rule.
func DefaultMemoryPolicy() MemoryPolicy {
	return MemoryPolicy{MaxActiveTurns: 10, SummaryTurnCount: 5, MaxSummaries: 3, MaxArchivedTurns: 50, MaxTokens: 2000}
}

// Target is the size compaction brings a thread over its budget down to.
func (p MemoryPolicy) Target() int {
	if p.TargetTokens > 0 {
		return p.TargetTokens
	}
	return p.BudgetTokens * 3 / 4
}

// Check says what is wrong with a policy, in words naming the field, or
// nil.
func (p MemoryPolicy) Check() error {
	var bad []string
	positive := func(name string, n, least int) {
		if n < least {
			bad = append(bad, fmt.Sprintf("%s %d must be %d or more", name, n, least))
		}
	}
	positive("max_active_turns", p.MaxActiveTurns, 1)
	positive("summary_turn_count", p.SummaryTurnCount, 1)
	positive("max_summaries", p.MaxSummaries, 1)
	positive("max_archived_turns", p.MaxArchivedTurns, 1)
	positive("max_tokens", p.MaxTokens, 100)
	if p.BudgetTokens != 0 {
		positive("budget_tokens", p.BudgetTokens, 1000)
		if p.TargetTokens < 0 || p.TargetTokens >= p.BudgetTokens {
			bad = append(bad, fmt.Sprintf("target_tokens %d must be under budget_tokens %d (0: three quarters of it)", p.TargetTokens, p.BudgetTokens))
		}
	} else if p.TargetTokens != 0 {
		bad = append(bad, "target_tokens is set without budget_tokens")
	}
	if t := p.ToolOutput; t != nil {
		positive("tool_output.min_tokens", t.MinTokens, 50)
		positive("tool_output.older_than_turns", t.OlderThanTurns, 1)
	}
	switch p.Summarizer {
	case "", SummarizerUpstream, SummarizerEndpoint, SummarizerSampling, SummarizerExtractive:
	default:
		bad = append(bad, fmt.Sprintf("summarizer %q is none of upstream, endpoint, sampling, extractive", p.Summarizer))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(bad, "; "))
}
