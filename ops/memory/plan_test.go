package memory

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"weft/model"
)

// thread builds items: a system prompt, then turns of a prompt (50
// tokens), a tool call (20), its result (resultTokens) and an answer
// (100); seq counts stored messages from 1.
type thread struct {
	items []Item
	seq   uint64
}

func (t *thread) add(role model.Role, tokens int, prompt, result bool) {
	t.seq++
	t.items = append(t.items, Item{ID: model.MessageID(t.seq), Role: role, Tokens: tokens, Prompt: prompt, ToolResult: result})
}

func newThread(turns, resultTokens int) *thread {
	t := &thread{}
	t.add(model.RoleSystem, 300, false, false)
	for range turns {
		t.turn(resultTokens)
	}
	return t
}

func (t *thread) turn(resultTokens int) {
	t.add(model.RoleUser, 50, true, false)
	t.add(model.RoleAssistant, 20, false, false)
	t.add(model.RoleUser, resultTokens, false, true)
	t.add(model.RoleAssistant, 100, false, false)
}

// summary adds a summary made by an operation of author and rule.
func (t *thread) summary(op, author, rule string) {
	t.items = append(t.items, Item{ID: model.SyntheticID(op, 0), Role: model.RoleSystem, Tokens: 200, Summary: true, Op: op, Author: author, Rule: rule})
}

// turnStart is the index of turn k's prompt in a thread newThread made.
func turnStart(k int) int { return 1 + 4*k }

func seed() model.MemoryPolicy { return model.DefaultMemoryPolicy() }

func describe(acts []Action) []string {
	var out []string
	for _, a := range acts {
		out = append(out, fmt.Sprintf("%s/%s %d..%d (%d turns)", a.Type, a.Rule, a.First, a.Last, a.Turns))
	}
	return out
}

func TestPlanTiers(t *testing.T) {
	t.Parallel()
	withSummaries := func(n int) *thread {
		th := &thread{}
		th.add(model.RoleSystem, 300, false, false)
		for k := range n {
			th.summary(fmt.Sprintf("op%d", k), model.MemoryAuthor, model.RuleTurns)
		}
		for range 10 {
			th.turn(30)
		}
		return th
	}
	for _, tc := range []struct {
		name   string
		th     *thread
		policy model.MemoryPolicy
		want   []string
	}{
		{"at the most active turns, nothing", newThread(10, 30), seed(), nil},
		{"one past: the oldest five go into a summary", newThread(11, 30), seed(),
			[]string{fmt.Sprintf("digest/turns %d..%d (5 turns)", turnStart(0), turnStart(5)-1)}},
		{"long past: as many summaries as it takes", newThread(21, 30), seed(),
			[]string{
				fmt.Sprintf("digest/turns %d..%d (5 turns)", turnStart(0), turnStart(5)-1),
				fmt.Sprintf("digest/turns %d..%d (5 turns)", turnStart(5), turnStart(10)-1),
				fmt.Sprintf("digest/turns %d..%d (5 turns)", turnStart(10), turnStart(15)-1),
			}},
		{"three summaries stand", withSummaries(3), seed(), nil},
		{"a fourth: all but the newest go into the archive", withSummaries(4), seed(),
			[]string{"digest/archive 1..3 (0 turns)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(Plan(tc.th.items, tc.policy, nil))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// Past max_summaries with digests Plan makes itself, the archive takes
// their turns directly: no summary is made only to be digested at once.
func TestPlanArchiveTakesNewTurnsDirectly(t *testing.T) {
	t.Parallel()
	th := &thread{}
	th.add(model.RoleSystem, 300, false, false)
	for k := range 3 {
		th.summary(fmt.Sprintf("op%d", k), model.MemoryAuthor, model.RuleTurns)
	}
	for range 16 {
		th.turn(30)
	}
	got := describe(Plan(th.items, seed(), nil))
	// Turns 0..4 (items 4..23) would be a fourth summary: the first
	// three and they go into the archive; turns 5..9 a new summary.
	want := []string{"digest/turns 24..43 (5 turns)", "digest/archive 1..23 (5 turns)"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// An operation of the policy that the operator switched off or reverted
// is not made again over the same items; the policy goes on with others.
func TestPlanLeavesWhatTheOperatorUndid(t *testing.T) {
	t.Parallel()
	th := newThread(16, 30)
	var targets []model.ItemID
	for i := turnStart(0); i < turnStart(5); i++ {
		targets = append(targets, th.items[i].ID)
	}
	at := time.Now()
	for _, undone := range []model.Op{
		{ID: "m1", Type: model.OpDigest, Targets: targets, Author: model.MemoryAuthor, Rule: model.RuleTurns, RevertedAt: &at},
		{ID: "m1", Type: model.OpDigest, Targets: targets, Author: model.MemoryAuthor, Rule: model.RuleTurns, Active: false},
	} {
		got := describe(Plan(th.items, seed(), []model.Op{undone}))
		want := []string{fmt.Sprintf("digest/turns %d..%d (5 turns)", turnStart(5), turnStart(10)-1)}
		if !slices.Equal(got, want) {
			t.Errorf("after %+v:\ngot  %q\nwant %q", undone, got, want)
		}
	}
	// An operator's own reverted digest blocks nothing.
	op := model.Op{ID: "o1", Type: model.OpDigest, Targets: targets, Author: "operator", RevertedAt: &at}
	if got := Plan(th.items, seed(), []model.Op{op}); len(got) != 2 || got[0].First != turnStart(0) {
		t.Errorf("an operator's reverted digest changed the plan: %q", describe(got))
	}
}

// Another's operation inside a turn is taken whole, never split.
func TestPlanNestsOthersOperationsWhole(t *testing.T) {
	t.Parallel()
	th := newThread(11, 30)
	// The operator revised turn 2's answer into two messages.
	k := turnStart(2) + 3
	rev := []Item{
		{ID: model.SyntheticID("rev", 0), Role: model.RoleAssistant, Tokens: 40, Op: "rev", Author: "operator"},
		{ID: model.SyntheticID("rev", 1), Role: model.RoleUser, Tokens: 40, Prompt: true, Op: "rev", Author: "operator"},
	}
	th.items = slices.Concat(th.items[:k], rev, th.items[k+1:])
	acts := Plan(th.items, seed(), nil)
	if len(acts) != 1 {
		t.Fatalf("plan %q", describe(acts))
	}
	a := acts[0]
	in := func(i int) bool { return i >= a.First && i <= a.Last }
	if in(k) != in(k+1) {
		t.Errorf("the digest %d..%d splits the operator's revise at %d..%d", a.First, a.Last, k, k+1)
	}
}

func TestPlanStubsOldLargeToolOutputs(t *testing.T) {
	t.Parallel()
	p := seed()
	p.ToolOutput = &model.ToolOutputRule{MinTokens: 500, OlderThanTurns: 4}
	stubbedIn := func(acts []Action) (stubbed []int, digests []string) {
		for _, a := range acts {
			if a.Rule == model.RuleToolOutput && a.Type == model.OpRevise {
				stubbed = append(stubbed, a.First)
			} else {
				digests = append(digests, describe([]Action{a})...)
			}
		}
		return stubbed, digests
	}
	// Eight turns, nothing else to change: a stub alone would break the
	// prompt cache on every turn, so none is made.
	th := newThread(8, 3000)
	if acts := Plan(th.items, p, nil); len(acts) != 0 {
		t.Errorf("8 turns under every threshold: %q", describe(acts))
	}
	// Eleven: turns 0..4 go into a summary, and the stubs ride along
	// on the turns left raw that have more than 4 after them (5 and 6;
	// 6's output is small).
	th = newThread(11, 3000)
	th.items[turnStart(6)+2].Tokens = 100
	stubbed, digests := stubbedIn(Plan(th.items, p, nil))
	if want := []int{turnStart(5) + 2}; !slices.Equal(stubbed, want) || len(digests) != 1 {
		t.Errorf("stubbed %v with %q, want %v with the digest of turns 0..4", stubbed, digests, want)
	}
	// Under a budget's pressure the stubs come first, and are enough.
	th = newThread(8, 3000)
	p.BudgetTokens, p.TargetTokens = 20_000, 16_000
	stubbed, digests = stubbedIn(Plan(th.items, p, nil))
	if want := []int{turnStart(0) + 2, turnStart(1) + 2, turnStart(2) + 2}; !slices.Equal(stubbed, want) || len(digests) != 0 {
		t.Errorf("under the budget's pressure: stubbed %v and %q, want %v alone", stubbed, digests, want)
	}
}

func TestPlanBringsTheThreadToItsTarget(t *testing.T) {
	t.Parallel()
	th := newThread(9, 2000) // about 2,170 tokens a turn
	p := seed()
	p.BudgetTokens, p.TargetTokens = 15_000, 10_000
	total := 0
	for _, it := range th.items {
		total += it.Tokens
	}
	acts := Plan(th.items, p, nil)
	est := total
	for _, a := range acts {
		if a.Rule != model.RuleBudget {
			t.Errorf("unexpected action %q", describe([]Action{a}))
		}
		if a.Last >= turnStart(8) {
			t.Errorf("the latest turn is digested: %q", describe([]Action{a}))
		}
		est += estimate(a) - a.Tokens
	}
	if total <= p.BudgetTokens || est > p.TargetTokens || len(acts) == 0 {
		t.Errorf("%d tokens, budget %d: after %q about %d, want at most %d", total, p.BudgetTokens, describe(acts), est, p.TargetTokens)
	}
	// Under the budget: nothing.
	p.BudgetTokens, p.TargetTokens = 30_000, 0
	if acts := Plan(th.items, p, nil); len(acts) != 0 {
		t.Errorf("under the budget: %q", describe(acts))
	}
}

// Plan is deterministic, its actions never overlap, and none acts on the
// preamble or inside another's operation.
func TestPlanActionsAreDisjoint(t *testing.T) {
	t.Parallel()
	for turns := range 40 {
		th := newThread(turns, 900)
		p := seed()
		p.ToolOutput = &model.ToolOutputRule{MinTokens: 500, OlderThanTurns: 3}
		p.BudgetTokens = 8000
		a, b := Plan(th.items, p, nil), Plan(th.items, p, nil)
		if !slices.EqualFunc(a, b, func(x, y Action) bool { return x.First == y.First && x.Last == y.Last && x.Rule == y.Rule }) {
			t.Fatalf("%d turns: two plans differ", turns)
		}
		seen := map[int]bool{}
		for _, act := range a {
			for i := act.First; i <= act.Last; i++ {
				if seen[i] || i == 0 {
					t.Fatalf("%d turns: item %d acted on twice, or the preamble: %q", turns, i, describe(a))
				}
				seen[i] = true
			}
		}
	}
}

// Past max_archived_turns the archive lets its oldest go: the old
// archive is snipped (its turns stay stored), the summaries after it make
// the new one.
func TestPlanArchiveKeepsItsCap(t *testing.T) {
	t.Parallel()
	th := &thread{}
	th.add(model.RoleSystem, 300, false, false)
	th.summary("arch", model.MemoryAuthor, model.RuleArchive)
	th.items[1].Turns = 45
	for k := range 4 {
		th.summary(fmt.Sprintf("op%d", k), model.MemoryAuthor, model.RuleTurns)
		th.items[len(th.items)-1].Turns = 5
	}
	for range 6 {
		th.turn(30)
	}
	got := describe(Plan(th.items, seed(), nil))
	want := []string{"snip/archive-cap 1..1 (45 turns)", "digest/archive 2..4 (15 turns)"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Under the cap, the old archive is nested whole in the new one.
	th.items[1].Turns = 20
	got = describe(Plan(th.items, seed(), nil))
	if want := []string{"digest/archive 1..4 (35 turns)"}; !slices.Equal(got, want) {
		t.Errorf("under the cap: got %q, want %q", got, want)
	}
}

// An agent's one long turn past the budget: its earlier rounds are
// digested, its prompt and its latest rounds kept raw, the cut after a
// round's result.
func TestPlanCompactsWithinTheLatestTurn(t *testing.T) {
	t.Parallel()
	th := &thread{}
	th.add(model.RoleSystem, 300, false, false)
	th.add(model.RoleUser, 50, true, false) // the task
	for range 30 {
		th.add(model.RoleAssistant, 40, false, false)
		th.add(model.RoleUser, 1500, false, true)
	}
	p := seed()
	p.BudgetTokens, p.TargetTokens = 30_000, 20_000
	acts := Plan(th.items, p, nil)
	if len(acts) != 1 {
		t.Fatalf("plan %q", describe(acts))
	}
	a := acts[0]
	if a.First != 2 || !th.items[a.Last].ToolResult || th.items[a.Last+1].ToolResult || a.Last > len(th.items)-1-keptRounds {
		t.Errorf("digest %d..%d: want it to start after the prompt, end after a result, and keep the last rounds", a.First, a.Last)
	}
	total := 0
	for _, it := range th.items {
		total += it.Tokens
	}
	if after := total - a.Tokens + estimate(a); after > p.TargetTokens {
		t.Errorf("%d tokens after the digest, want at most %d", after, p.TargetTokens)
	}
}

// Claude Code's own shape of an agent's turn: the prompt, its
// environment as a system message, then rounds of a call and its result,
// a reminder of its own at the end at times. A turn past the budget with
// few rounds digests into the latest two rounds if it must; the latest
// round (what the model is to answer) stays raw whatever it counts.
func TestPlanKeepsOnlyTheLatestRoundWhenItMust(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		results  []int // the rounds' result tokens
		reminder bool  // a system message after the last result
		budget   int
		// want is the last round digested (0 the first), -1 none.
		want int
	}{
		{"within the budget", []int{3000, 2000, 2000}, false, 20_000, -1},
		{"the oldest round of three", []int{11_000, 2500, 5000}, false, 20_000, 0},
		{"two of four", []int{2000, 9000, 6000, 8000}, false, 20_000, 1},
		{"a reminder last", []int{11_000, 2500, 5000}, true, 20_000, 0},
		{"never the latest round", []int{9000, 16_000}, false, 20_000, 0},
		{"one round: nothing to digest", []int{30_000}, false, 20_000, -1},
		{"the latest two stay once within budget", []int{6000, 5000, 5000}, false, 16_000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := &thread{}
			th.add(model.RoleUser, 200, true, false)
			th.add(model.RoleSystem, 2200, false, false)
			ends := []int{}
			for _, n := range tc.results {
				th.add(model.RoleAssistant, 40, false, false)
				th.add(model.RoleUser, n, false, true)
				ends = append(ends, len(th.items)-1)
			}
			if tc.reminder {
				th.add(model.RoleSystem, 30, false, false)
			}
			p := seed()
			p.BudgetTokens = tc.budget
			acts := Plan(th.items, p, nil)
			if tc.want < 0 {
				if len(acts) != 0 {
					t.Fatalf("plan %q, want nothing", describe(acts))
				}
				return
			}
			if len(acts) != 1 || acts[0].First != 2 || acts[0].Last != ends[tc.want] {
				t.Fatalf("plan %q, want a digest of items 2..%d (the environment after the prompt kept)", describe(acts), ends[tc.want])
			}
			total := 0
			for _, it := range th.items {
				total += it.Tokens
			}
			if after := total - acts[0].Tokens + summaryCap; after > tc.budget {
				t.Errorf("%d tokens after the digest, past the budget of %d", after, tc.budget)
			}
		})
	}
}

// A turn whose earlier rounds the policy digested is still one turn: its
// prompt and the environment after it are never taken for an older turn
// to digest, and the next digest of its rounds takes the earlier one's
// summary in whole.
func TestPlanDigestsRoundsOfATurnAgain(t *testing.T) {
	t.Parallel()
	th := &thread{}
	th.add(model.RoleUser, 200, true, false)
	th.add(model.RoleSystem, 2200, false, false)
	th.summary("r1", model.MemoryAuthor, model.RuleRounds)
	for _, n := range []int{6000, 5000, 7000} {
		th.add(model.RoleAssistant, 40, false, false)
		th.add(model.RoleUser, n, false, true)
	}
	p := seed()
	p.BudgetTokens = 20_000
	acts := Plan(th.items, p, nil)
	if got, want := describe(acts), []string{"digest/rounds 2..4 (0 turns)"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q: the earlier summary and the next round, the prompt and environment kept", got, want)
	}
}
