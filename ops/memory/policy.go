package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"weft/internal/english"
	"weft/model"
	"weft/ops"
	"weft/store"
)

// The scopes a policy is set for.
const (
	ScopeSession = "session" // one session's
	ScopeFile    = "file"    // what every session made from now on gets
	ScopeProxied = "proxied" // what sessions the context proxy starts get
)

var scopes = []string{ScopeSession, ScopeFile, ScopeProxied}

// Scopes lists the scopes set_memory_policy takes, the default first.
func Scopes() []string { return slices.Clone(scopes) }

// MemoryPolicyArgs are get_memory_policy's arguments.
type MemoryPolicyArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
}

// MemoryPolicyResult is get_memory_policy's result, and set_memory_policy's.
type MemoryPolicyResult struct {
	SessionID string `json:"session_id,omitempty"`
	Version   uint64 `json:"version,omitempty"`
	// Policy is the session's; nil: weft changes nothing by itself.
	Policy *model.MemoryPolicy `json:"policy"`
	// File and Proxied are what new sessions get.
	File    *model.MemoryPolicy `json:"file_default"`
	Proxied *model.MemoryPolicy `json:"proxied_default"`
	// Check is what set_memory_policy made at once under the new policy.
	Check *CheckResult `json:"check,omitempty"`
	// Proxy is the session's requests through the context proxy since
	// this weft started (what they sent, what they cost).
	Proxy *ops.ProxyStats `json:"proxy,omitempty"`
}

// GetMemoryPolicy returns a session's memory policy and the file's defaults
// (get_memory_policy).
func GetMemoryPolicy(s *ops.Service, ctx context.Context, a MemoryPolicyArgs) (MemoryPolicyResult, error) {
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return MemoryPolicyResult{}, err
	}
	res := MemoryPolicyResult{SessionID: snap.Info.ID, Version: snap.Info.Version, Policy: snap.Info.Memory, Proxy: s.ProxyStatsOf(snap.Info.ID)}
	res.File, res.Proxied, err = s.DefaultPolicies()
	return res, err
}

// SetMemoryPolicyArgs are set_memory_policy's arguments: the fields given
// change, the others stay (on a session without a policy, the seed's
// defaults).
type SetMemoryPolicyArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session (scope session); default: the one the operator has open in weft, else the most recently updated"`
	Scope     string `json:"scope,omitempty" jsonschema:"session (default: this session's policy), file (what every session made from now on gets) or proxied (what sessions the context proxy starts get)"`
	// Off removes the policy: weft changes nothing more by itself (what
	// it made stays, to toggle or revert).
	Off bool `json:"off,omitempty" jsonschema:"remove the policy: weft makes no more changes by itself (the operations it made stay, to switch off or revert)"`

	MaxActiveTurns           *int    `json:"max_active_turns,omitempty" jsonschema:"how many of the latest turns stay raw (default 10)"`
	SummaryTurnCount         *int    `json:"summary_turn_count,omitempty" jsonschema:"how many turns one summary digests (default 5)"`
	MaxSummaries             *int    `json:"max_summaries,omitempty" jsonschema:"how many summaries stand before the oldest go into one archive summary (default 3)"`
	MaxArchivedTurns         *int    `json:"max_archived_turns,omitempty" jsonschema:"how many turns the archive covers (default 50)"`
	MaxTokens                *int    `json:"max_tokens,omitempty" jsonschema:"format_history_for_prompt's budget (default 2000)"`
	BudgetTokens             *int    `json:"budget_tokens,omitempty" jsonschema:"the most the effective thread may count: past it, older turns are digested down to target_tokens (0: no budget)"`
	TargetTokens             *int    `json:"target_tokens,omitempty" jsonschema:"what a thread past its budget is brought down to (0: three quarters of the budget)"`
	ToolOutputMinTokens      *int    `json:"tool_output_min_tokens,omitempty" jsonschema:"stub tool outputs of at least this many tokens (with tool_output_older_than_turns; 0: no stubs)"`
	ToolOutputOlderThanTurns *int    `json:"tool_output_older_than_turns,omitempty" jsonschema:"stub tool outputs older than this many turns"`
	Summarizer               *string `json:"summarizer,omitempty" jsonschema:"what writes the summaries: upstream, endpoint, sampling or extractive (default: the first at hand)"`
	Model                    *string `json:"model,omitempty" jsonschema:"the model the summarizer asks, where it asks one"`

	ExpectedVersion *uint64 `json:"expected_version,omitempty" jsonschema:"scope session: refuse the request if the session's version is not this one"`
}

// apply sets the fields a gives on p.
func (a SetMemoryPolicyArgs) apply(p model.MemoryPolicy) model.MemoryPolicy {
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.MaxActiveTurns, a.MaxActiveTurns)
	set(&p.SummaryTurnCount, a.SummaryTurnCount)
	set(&p.MaxSummaries, a.MaxSummaries)
	set(&p.MaxArchivedTurns, a.MaxArchivedTurns)
	set(&p.MaxTokens, a.MaxTokens)
	set(&p.BudgetTokens, a.BudgetTokens)
	set(&p.TargetTokens, a.TargetTokens)
	if a.ToolOutputMinTokens != nil || a.ToolOutputOlderThanTurns != nil {
		t := model.ToolOutputRule{MinTokens: 2000, OlderThanTurns: 3}
		if p.ToolOutput != nil {
			t = *p.ToolOutput
		}
		set(&t.MinTokens, a.ToolOutputMinTokens)
		set(&t.OlderThanTurns, a.ToolOutputOlderThanTurns)
		p.ToolOutput = &t
		if t.MinTokens == 0 {
			p.ToolOutput = nil
		}
	}
	if a.Summarizer != nil {
		p.Summarizer = strings.TrimSpace(*a.Summarizer)
	}
	if a.Model != nil {
		p.Model = strings.TrimSpace(*a.Model)
	}
	return p
}

// SetMemoryPolicy sets a session's memory policy, or the file's defaults
// (set_memory_policy). A session's new policy is checked at once: the
// result says what it made.
func SetMemoryPolicy(s *ops.Service, ctx context.Context, a SetMemoryPolicyArgs) (MemoryPolicyResult, error) {
	scope, err := ops.ChoiceArg("scope", a.Scope, scopes)
	if err != nil {
		return MemoryPolicyResult{}, err
	}
	if scope != ScopeSession {
		if a.ExpectedVersion != nil {
			return MemoryPolicyResult{}, ops.Invalidf("expected_version is a session's: scope %s sets the file's default", scope)
		}
		return setDefault(s, ctx, a, scope)
	}
	var policy *model.MemoryPolicy
	_, err = s.Write(ctx, a.SessionID, a.ExpectedVersion, func(_ store.Tx, th *ops.Thread, next *model.Session) (*ops.Change, error) {
		if a.Off {
			if th.Info.Memory == nil {
				return nil, nil
			}
			next.Memory = nil
			return &ops.Change{What: "memory policy removed", Event: ops.Event{Kind: ops.EventSessionChanged}}, nil
		}
		base := model.DefaultMemoryPolicy()
		if th.Info.Memory != nil {
			base = *th.Info.Memory
		}
		p := a.apply(base)
		if err := p.Check(); err != nil {
			return nil, ops.Invalidf("memory policy: %v", err)
		}
		if th.Info.Memory != nil && samePolicy(*th.Info.Memory, p) {
			policy = th.Info.Memory
			return nil, nil
		}
		policy = &p
		next.Memory = policy
		return &ops.Change{What: "memory policy: " + Describe(p), Event: ops.Event{Kind: ops.EventSessionChanged}}, nil
	})
	if err != nil {
		return MemoryPolicyResult{}, err
	}
	res, err := GetMemoryPolicy(s, ctx, MemoryPolicyArgs{SessionID: a.SessionID})
	if err != nil || res.Policy == nil {
		return res, err
	}
	chk, err := Check(ctx, s, res.SessionID)
	if err != nil {
		return res, fmt.Errorf("the policy is set, but bringing the thread within it failed: %w", err)
	}
	res.Check, res.Version = &chk, chk.Version
	return res, nil
}

// samePolicy reports whether two policies say the same.
func samePolicy(a, b model.MemoryPolicy) bool {
	ta, tb := a.ToolOutput, b.ToolOutput
	a.ToolOutput, b.ToolOutput = nil, nil
	return a == b && (ta == nil) == (tb == nil) && (ta == nil || *ta == *tb)
}

// setDefault sets the file's default policy of scope.
func setDefault(s *ops.Service, ctx context.Context, a SetMemoryPolicyArgs, scope string) (MemoryPolicyResult, error) {
	name := ops.SettingMemoryFile
	if scope == ScopeProxied {
		name = ops.SettingMemoryProxied
	}
	file, proxied, err := s.DefaultPolicies()
	if err != nil {
		return MemoryPolicyResult{}, err
	}
	current := file
	if scope == ScopeProxied {
		current = proxied
	}
	var p *model.MemoryPolicy
	if !a.Off {
		base := model.DefaultMemoryPolicy()
		if current != nil {
			base = *current
		}
		next := a.apply(base)
		p = &next
	}
	if err := s.SetDefaultPolicy(name, p); err != nil {
		return MemoryPolicyResult{}, err
	}
	res, err := GetMemoryPolicy(s, ctx, MemoryPolicyArgs{SessionID: a.SessionID})
	if err != nil {
		// The defaults hold without a session to show.
		res = MemoryPolicyResult{}
		res.File, res.Proxied, err = s.DefaultPolicies()
	}
	return res, err
}

// Describe says a policy in a line: "10 active turns, summaries of 5,
// at most 3, budget 20,000 → 15,000 tokens, tool outputs over 2,000
// tokens older than 3 turns stubbed".
func Describe(p model.MemoryPolicy) string {
	parts := []string{
		english.Count(p.MaxActiveTurns, "active turn"),
		fmt.Sprintf("summaries of %d turns, at most %d", p.SummaryTurnCount, p.MaxSummaries),
	}
	if p.BudgetTokens > 0 {
		parts = append(parts, fmt.Sprintf("budget %s → %s tokens", english.Thousands(p.BudgetTokens), english.Thousands(p.Target())))
	}
	if t := p.ToolOutput; t != nil {
		parts = append(parts, fmt.Sprintf("tool outputs over %s tokens older than %s stubbed", english.Thousands(t.MinTokens), english.Count(t.OlderThanTurns, "turn")))
	}
	if p.Summarizer != "" {
		parts = append(parts, "summaries by "+p.Summarizer)
	}
	return strings.Join(parts, ", ")
}
