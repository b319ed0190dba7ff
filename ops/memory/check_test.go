package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/memory"
	"weft/ops/opstest"
)

// turns is n turns of a prompt and an answer, the k-th's text naming k.
func turns(from, n int) []model.NewMessage {
	var out []model.NewMessage
	for k := from; k < from+n; k++ {
		out = append(out,
			model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("Question %d: how does the limiter behave under load?", k)},
			model.NewMessage{Role: model.RoleAssistant, Content: fmt.Sprintf("Answer %d: the token bucket refills at a fixed rate, so bursts drain it.", k)})
	}
	return out
}

func setSeed(t *testing.T, f *opstest.Fixture, sid string) memory.MemoryPolicyResult {
	t.Helper()
	res, err := memory.SetMemoryPolicy(f.Svc, context.Background(), memory.SetMemoryPolicyArgs{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func memoryOps(t *testing.T, f *opstest.Fixture, sid string) []model.Op {
	t.Helper()
	all, err := f.Svc.Operations(sid)
	if err != nil {
		t.Fatal(err)
	}
	var out []model.Op
	for _, op := range all {
		if op.Author == model.MemoryAuthor {
			out = append(out, op)
		}
	}
	return out
}

// The seed's tiers on a real file: a policy set on a thread of 12 turns
// digests the oldest five at once, as an operation of the policy's with
// its rule and what wrote the summary; the latest turns stay raw.
func TestSetPolicyBringsTheThreadWithin(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	sid := f.Messages("limiter", turns(0, 12))
	res := setSeed(t, f, sid)
	if res.Policy == nil || res.Check == nil || len(res.Check.Made) != 1 {
		t.Fatalf("set_memory_policy: %+v", res)
	}
	made := res.Check.Made[0]
	ops := memoryOps(t, f, sid)
	if len(ops) != 1 || ops[0].ID != made.OperationID || ops[0].Type != model.OpDigest || ops[0].Rule != model.RuleTurns ||
		ops[0].Payload.SummarySource != "extractive" || len(ops[0].Targets) != 10 {
		t.Fatalf("memory's operations: %+v (made %+v)", ops, made)
	}
	v := f.View(sid)
	if v.Len() != 1+14 || !v.IsSummary(0) {
		t.Errorf("the thread is %d items (summary first: %v), want the summary and 7 turns", v.Len(), v.IsSummary(0))
	}
	if res.Check.TokensAfter >= res.Check.TokensBefore {
		t.Errorf("tokens %d → %d", res.Check.TokensBefore, res.Check.TokensAfter)
	}
	// Checking again changes nothing.
	again, err := memory.Check(context.Background(), f.Svc, sid)
	if err != nil || len(again.Made) != 0 {
		t.Errorf("a second check: %+v, %v", again, err)
	}
}

// What the operator reverts, the policy does not make again; it goes on
// with the turns that come after.
func TestPolicyLeavesWhatTheOperatorReverted(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	sid := f.Messages("limiter", turns(0, 12))
	res := setSeed(t, f, sid)
	first := res.Check.Made[0].OperationID
	if _, err := f.Svc.RevertOperation(ctx, ops.OperationArgs{SessionID: sid, OperationID: first}); err != nil {
		t.Fatal(err)
	}
	chk, err := memory.Check(ctx, f.Svc, sid)
	if err != nil || len(chk.Made) != 0 {
		t.Fatalf("after the revert, the check made %+v (%v)", chk.Made, err)
	}
	if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: turns(12, 4)}); err != nil {
		t.Fatal(err)
	}
	chk, err = memory.Check(ctx, f.Svc, sid)
	if err != nil || len(chk.Made) != 1 {
		t.Fatalf("16 turns, 5 kept raw by the operator: made %+v (%v)", chk.Made, err)
	}
	op := memoryOps(t, f, sid)[1]
	if got := op.Targets[0]; got != model.MessageID(11) {
		t.Errorf("the new digest starts at %s, want m11 (turn 5): the reverted turns stay raw", got)
	}
}

// A tool output old and large enough becomes a stub that keeps its call
// ID and says how to read it back; the call stays paired with it.
func TestPolicyStubsOldToolOutputs(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	var msgs []model.NewMessage
	for k := range 6 {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("Run the tests, round %d.", k)})
		msgs = append(msgs, opstest.ToolTurn(fmt.Sprintf("call-%d", k), "bash", `{"cmd":"go test ./..."}`, strings.Repeat("ok  \tweft/pkg\t0.1s\n", 400), 0)...)
		msgs = append(msgs, model.NewMessage{Role: model.RoleAssistant, Content: "All green."})
	}
	sid := f.Messages("tests", msgs)
	// Past the budget, the stubs come first (they lose least).
	min, older, budget := 500, 2, 20_000
	res, err := memory.SetMemoryPolicy(f.Svc, ctx, memory.SetMemoryPolicyArgs{SessionID: sid, ToolOutputMinTokens: &min, ToolOutputOlderThanTurns: &older, BudgetTokens: &budget})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Check.Made) != 3 {
		t.Fatalf("made %+v, want the outputs of the 3 turns older than 2 of 6 stubbed", res.Check.Made)
	}
	_, v, err := f.Svc.View(sid)
	if err != nil {
		t.Fatal(err)
	}
	stub := v.Synth[v.Items[2].Synth]
	parts := model.DecodeParts(stub.Parts)
	if v.Items[2].Seq != 0 || len(parts) != 1 || parts[0].ToolCallID != "call-0" || !strings.Contains(stub.Content, "get_message_range view=raw start_idx=2 end_idx=2") {
		t.Errorf("item 2 is %+v, parts %+v: want a stub of call-0's output that says how to read it", stub, parts)
	}
}

// A policy that does not hold is refused and changes nothing.
func TestSetPolicyRefusesABadPolicy(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	sid := f.Messages("limiter", turns(0, 3))
	before := f.FileHash()
	zero, budget := 0, 500
	for _, a := range []memory.SetMemoryPolicyArgs{
		{SessionID: sid, MaxActiveTurns: &zero},
		{SessionID: sid, BudgetTokens: &budget},
		{SessionID: sid, Summarizer: new("a-friend")},
		{SessionID: sid, Scope: "everywhere"},
	} {
		if _, err := memory.SetMemoryPolicy(f.Svc, context.Background(), a); err == nil {
			t.Errorf("%+v was taken", a)
		}
	}
	if f.FileHash() != before {
		t.Error("a refused policy changed the file")
	}
}

// The file's defaults go to sessions made from then on.
func TestDefaultPolicyGoesToNewSessions(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	old := f.Messages("before", turns(0, 2))
	active := 4
	if _, err := memory.SetMemoryPolicy(f.Svc, context.Background(), memory.SetMemoryPolicyArgs{Scope: memory.ScopeFile, MaxActiveTurns: &active}); err != nil {
		t.Fatal(err)
	}
	newer := f.Messages("after", turns(0, 2))
	for sid, want := range map[string]bool{old: false, newer: true} {
		res, err := memory.GetMemoryPolicy(f.Svc, context.Background(), memory.MemoryPolicyArgs{SessionID: sid})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Policy != nil) != want || (want && res.Policy.MaxActiveTurns != 4) || res.File == nil {
			t.Errorf("session %s: policy %+v, file default %+v", sid, res.Policy, res.File)
		}
	}
}

// With memory.Keep, every append is followed by a check before it
// returns: a thread fed a turn at a time never has more active turns
// than the policy keeps, and changes once every summary_turn_count
// turns, not on every one.
func TestKeepChecksAfterEveryAppend(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	f.Svc = ops.New(f.St, memory.Keep())
	ctx := context.Background()
	sid := f.Messages("limiter", turns(0, 1))
	setSeed(t, f, sid)
	changes := 0
	for k := 1; k < 40; k++ {
		before := len(memoryOps(t, f, sid))
		if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: turns(k, 1)}); err != nil {
			t.Fatal(err)
		}
		tiers, err := memory.GetTieredHistory(f.Svc, ctx, memory.TieredHistoryArgs{SessionID: sid})
		if err != nil {
			t.Fatal(err)
		}
		if tiers.Active.Turns > 10 || len(tiers.Summaries) > 3 {
			t.Fatalf("after turn %d: %d active turns, %d summaries", k, tiers.Active.Turns, len(tiers.Summaries))
		}
		if len(memoryOps(t, f, sid)) != before {
			changes++
		}
	}
	if changes == 0 || changes > 8 {
		t.Errorf("the thread changed after %d of 39 appends, want about one in five", changes)
	}
}

// WouldAct tells, before the messages are stored, whether the request
// that brings them crosses the policy: the proxy waits only then.
func TestWouldAct(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	sid := f.Messages("limiter", turns(0, 10))
	setSeed(t, f, sid)
	snap, err := f.Svc.Snapshot(sid)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(msgs []model.NewMessage) []ops.CallerMessage {
		var out []ops.CallerMessage
		for _, m := range msgs {
			m.Tokens = 10
			out = append(out, ops.CallerMessage{Message: m})
		}
		return out
	}
	for _, tc := range []struct {
		fresh []ops.CallerMessage
		want  bool
	}{
		{nil, false},
		{fresh(turns(10, 1)[:1]), true}, // the eleventh turn's prompt
		{fresh([]model.NewMessage{{Role: model.RoleAssistant, Content: "More."}}), false},
	} {
		got, err := memory.WouldAct(f.Svc, snap, tc.fresh)
		if err != nil || got != tc.want {
			t.Errorf("%d fresh messages: %v, %v; want %v", len(tc.fresh), got, err, tc.want)
		}
	}
	// A session without a policy never would.
	other := f.Messages("plain", turns(0, 30))
	snap, _ = f.Svc.Snapshot(other)
	if got, _ := memory.WouldAct(f.Svc, snap, nil); got {
		t.Error("a session without a policy would act")
	}
}

// A thread fed a turn at a time under a small max_archived_turns: the
// archive never stands for more than the cap and the summaries after it,
// and what it let go is snipped by memory, still stored.
func TestArchiveCapOverManyTurns(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	f.Svc = ops.New(f.St, memory.Keep())
	ctx := context.Background()
	sid := f.Messages("limiter", turns(0, 1))
	capTurns := 10
	if _, err := memory.SetMemoryPolicy(f.Svc, ctx, memory.SetMemoryPolicyArgs{SessionID: sid, MaxArchivedTurns: &capTurns}); err != nil {
		t.Fatal(err)
	}
	for k := 1; k < 80; k++ {
		if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: turns(k, 1)}); err != nil {
			t.Fatal(err)
		}
		tiers, err := memory.GetTieredHistory(f.Svc, ctx, memory.TieredHistoryArgs{SessionID: sid})
		if err != nil {
			t.Fatal(err)
		}
		if a := tiers.Archive; a != nil && a.Turns > capTurns+3*5 {
			t.Fatalf("after turn %d the archive stands for %d turns, over the cap of %d and three summaries", k, a.Turns, capTurns)
		}
	}
	snipped := 0
	for _, op := range memoryOps(t, f, sid) {
		if op.Rule == model.RuleArchiveCap && op.Type == model.OpSnip {
			snipped++
		}
	}
	info, _, _ := f.Svc.View(sid)
	if snipped == 0 || info.MessageCount != 160 {
		t.Errorf("%d archive snips, %d messages stored: want the archive to let some go, every message kept", snipped, info.MessageCount)
	}
}
