package demo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/store/boltstore"
)

func seeded(t *testing.T) (*ops.Service, string) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "demo.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := ops.New(st)
	sid, err := Seed(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	return svc, sid
}

func TestSeed(t *testing.T) {
	svc, sid := seeded(t)
	info, v, err := svc.View(sid)
	if err != nil {
		t.Fatal(err)
	}
	if info.MessageCount < 250 || info.Title != Title {
		t.Errorf("%d messages titled %q", info.MessageCount, info.Title)
	}
	opsList, _ := svc.Operations(sid)
	types := map[model.OpType]int{}
	for _, o := range opsList {
		if v.Status[o.ID] != model.StatusActive {
			t.Errorf("%s %s is %s", o.Type, o.ID, v.Status[o.ID])
		}
		types[o.Type]++
	}
	for _, typ := range []model.OpType{model.OpTag, model.OpDigest, model.OpSnip, model.OpInsert} {
		if types[typ] != 1 {
			t.Errorf("%d %s operations, want 1", types[typ], typ)
		}
	}
	if v.Tokens >= v.RawTokens {
		t.Errorf("effective tokens %d not below raw %d", v.Tokens, v.RawTokens)
	}
	// The thread spans several days and has tool calls with paired results.
	items, err := func() ([]string, error) {
		_, it, err := svc.ExportItems(sid, true)
		var days []string
		calls := map[string]bool{}
		for _, x := range it {
			if d := x.CreatedAt.Format("2006-01-02"); len(days) == 0 || days[len(days)-1] != d {
				days = append(days, d)
			}
			for _, p := range x.Parts {
				if p.Type == model.PartToolCall {
					calls[p.ToolCallID] = true
				}
				if p.Type == model.PartToolResult && !calls[p.ToolCallID] {
					t.Errorf("result %s before its call", p.ToolCallID)
				}
			}
		}
		if len(calls) < 30 {
			t.Errorf("%d tool calls", len(calls))
		}
		return days, err
	}()
	if err != nil || len(items) < 4 {
		t.Errorf("days %v (%v)", items, err)
	}
	from, to, misplaced := Digression()
	if to-from < 40 || misplaced <= to {
		t.Errorf("digression %d..%d, misplaced %d", from, to, misplaced)
	}
	res, _ := reads.SearchSessionHistory(svc, context.Background(), reads.SearchArgs{SessionID: sid, Query: "per API key, not per client IP"})
	if res.TotalMatches != 2 { // the misplaced message and the inserted note
		t.Errorf("%d matches for the misplaced clarification", res.TotalMatches)
	}
}

func TestSeedIsDeterministic(t *testing.T) {
	a, sa := seeded(t)
	b, sb := seeded(t)
	_, ia, _ := a.ExportItems(sa, false)
	_, ib, _ := b.ExportItems(sb, false)
	if len(ia) != len(ib) {
		t.Fatalf("%d vs %d items", len(ia), len(ib))
	}
	for i := range ia {
		// Operations are made when the demo is seeded, so only stored
		// messages have fixed times.
		sameTime := ia[i].Synthetic || ia[i].CreatedAt.Equal(ib[i].CreatedAt)
		if ia[i].Content != ib[i].Content || !sameTime || ia[i].Role != ib[i].Role {
			t.Fatalf("item %d differs: %q vs %q", i, ia[i].Content, ib[i].Content)
		}
		if !ia[i].Synthetic && ia[i].ID != ib[i].ID {
			t.Fatalf("item %d: %s vs %s", i, ia[i].ID, ib[i].ID)
		}
	}
	if !strings.Contains(ia[0].Content, "Set up the workspace") {
		t.Errorf("the thread does not open with the setup digest: %q", ia[0].Content)
	}
}
