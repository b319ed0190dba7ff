package diff_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/ops/diff"
	"weft/ops/thread"
)

var t0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

// heads are n stored messages, user and assistant in turn, message s
// counting 10*s tokens.
func heads(n int) []model.Head {
	hs := make([]model.Head, n)
	for i := range hs {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		hs[i] = model.Head{At: t0.Add(time.Duration(i) * time.Minute).UnixNano(), Tokens: uint32(10 * (i + 1)), Role: role.Code()}
	}
	return hs
}

func ids(s ...string) []model.ItemID {
	out := make([]model.ItemID, len(s))
	for i, x := range s {
		out[i] = model.ItemID(x)
	}
	return out
}

func msg(role model.Role, content string, tokens int) model.NewMessage {
	return model.NewMessage{Role: role, Content: content, Tokens: tokens}
}

// op makes an active operation by the operator, made k minutes after t0.
func op(id string, typ model.OpType, targets []model.ItemID, k int) model.Op {
	return model.Op{ID: id, Type: typ, Targets: targets, Active: true, Author: "operator", CreatedAt: t0.Add(time.Duration(k) * time.Hour)}
}

func digest(id string, targets []model.ItemID, summary string, tokens int) model.Op {
	o := op(id, model.OpDigest, targets, 0)
	o.Payload.Summary, o.Payload.SummaryTokens = summary, tokens
	return o
}

func revise(id string, targets []model.ItemID, msgs ...model.NewMessage) model.Op {
	o := op(id, model.OpRevise, targets, 0)
	o.Payload.Messages = msgs
	return o
}

func insert(id string, anchor model.ItemID, msgs ...model.NewMessage) model.Op {
	o := op(id, model.OpInsert, nil, 0)
	o.Anchor, o.Payload.Messages = anchor, msgs
	return o
}

// brief writes a diff compactly, in thread order: "=m1..m2" for a run
// of kept messages, a hunk as "digest d1 m3..m5 30>5: -m3 -m4 +d1/0
// {digest d0 1: m3..m4}", the unchanged operations last as "~tag t1".
func brief(d *diff.Diff) string {
	var parts []string
	k := 0
	run := func(r diff.Run) string { return fmt.Sprintf("=m%d..m%d", r.First, r.Last) }
	for _, h := range d.Hunks {
		for ; k < len(d.Kept) && d.Kept[k].At < h.At; k++ {
			parts = append(parts, run(d.Kept[k]))
		}
		s := fmt.Sprintf("%s %s m%d..m%d %d>%d:", h.Op.Type, h.Op.ID, h.First, h.Last, h.StoredTokens, h.EffectiveTokens)
		for _, l := range h.Lines {
			s += " " + l.Sign + string(l.ID)
		}
		for _, in := range h.Within {
			s += fmt.Sprintf(" {%s %s %d: m%d..m%d}", in.Op.Type, in.Op.ID, in.Depth, in.First, in.Last)
		}
		parts = append(parts, s)
	}
	for ; k < len(d.Kept); k++ {
		parts = append(parts, run(d.Kept[k]))
	}
	for _, o := range d.Unchanged {
		parts = append(parts, "~"+string(o.Type)+" "+o.ID)
	}
	return strings.Join(parts, " | ")
}

// checkAccounts: every stored message is kept, or on the "-" side of
// one hunk, or moved; every item of the effective thread is kept, or on
// the "+" side of one hunk as added, or moved; and the totals add up.
// A moved item shows in each reordering that moved it (a synthetic one
// also under the operation that made it), and is on no other side.
func checkAccounts(t *testing.T, d *diff.Diff, v *model.View, n int) {
	t.Helper()
	stored := map[model.ItemID]int{} // kept or taken out
	eff := map[int]int{}             // kept or added
	moved := map[int]int{}           // shown by reorderings
	kept := 0
	for _, r := range d.Kept {
		for s := r.First; s <= r.Last; s++ {
			stored[model.MessageID(s)]++
			eff[r.At+int(s-r.First)]++
		}
		kept += r.Tokens
	}
	if kept != d.KeptTokens {
		t.Errorf("kept runs count %d tokens, the diff says %d", kept, d.KeptTokens)
	}
	for _, h := range d.Hunks {
		reorders := 0
		for _, l := range h.Lines {
			switch {
			case l.Sign == "-" && l.Change != diff.Moved && l.Stored():
				stored[l.ID]++
			case l.Change == diff.Added:
				eff[*l.Index]++
			case l.Sign == "+" || l.Sign == " ":
				moved[*l.Index]++
				reorders++
				if v.ID(v.Items[*l.Index]) != l.ID {
					t.Errorf("line %s says index %d, where %s is", l.ID, *l.Index, v.ID(v.Items[*l.Index]))
				}
			}
		}
		if reorders > 0 && h.Op.Type != model.OpResequence && !slices.ContainsFunc(h.Within, func(in diff.Inner) bool { return in.Op.Type == model.OpResequence }) {
			t.Errorf("hunk %s shows moves, and has no reordering", h.Op.ID)
		}
	}
	for s := 1; s <= n; s++ {
		id := model.MessageID(uint64(s))
		idx := v.IndexOfSeq(uint64(s))
		switch c := stored[id]; {
		case idx >= 0 && moved[idx] > 0 && c != 0:
			t.Errorf("m%d is moved, and kept or taken out too (%d)", s, c)
		case !(idx >= 0 && moved[idx] > 0) && c != 1:
			t.Errorf("m%d is accounted for %d times", s, c)
		}
	}
	for i, it := range v.Items {
		switch {
		case it.Seq > 0 && moved[i] > 0 && eff[i] != 0:
			t.Errorf("effective item %d (%s) is moved, and kept too", i, v.ID(it))
		case !(it.Seq > 0 && moved[i] > 0) && eff[i] != 1:
			t.Errorf("effective item %d (%s) is accounted for %d times", i, v.ID(it), eff[i])
		}
	}
	if d.StoredTokens != v.RawTokens || d.EffectiveTokens != v.Tokens || d.EffectiveItems != len(v.Items) || d.StoredMessages != n {
		t.Errorf("totals %d/%d tokens, %d/%d items; the view has %d/%d, %d/%d", d.StoredTokens, d.EffectiveTokens, d.StoredMessages, d.EffectiveItems, v.RawTokens, v.Tokens, n, len(v.Items))
	}
}

func TestDiffByOperation(t *testing.T) {
	t.Parallel()
	off := digest("d1", ids("m2", "m3", "m4"), "Setup.", 5)
	off.Active = false
	reverted := op("s1", model.OpSnip, ids("m3"), 0)
	reverted.RevertedAt = new(t0.Add(time.Hour))
	memory := digest("d1", ids("m1", "m2", "m3"), "Early turns.", 7)
	memory.Author, memory.Rule = "memory", "turns"
	tag := op("t1", model.OpTag, ids("m2"), 0)
	tag.Payload.Tags = []string{"db"}
	revertedDigest := digest("d1", ids("m2", "m3", "m4"), "Setup.", 5)
	revertedDigest.RevertedAt = new(t0.Add(time.Hour))
	waiting := op("s1", model.OpSnip, ids("m2"), 0)
	waiting.WhenTags = []string{"short"}
	cases := []struct {
		name string
		n    int
		ops  []model.Op
		want string
	}{
		{"nothing", 4, nil, "=m1..m4"},
		{"a digest", 6, []model.Op{digest("d1", ids("m3", "m4", "m5"), "Setup.", 5)},
			"=m1..m2 | digest d1 m3..m5 120>5: -m3 -m4 -m5 +d1/0 | =m6..m6"},
		{"a snip", 4, []model.Op{op("s1", model.OpSnip, ids("m2", "m3"), 0)},
			"=m1..m1 | snip s1 m2..m3 50>0: -m2 -m3 | =m4..m4"},
		{"a revise into two", 4, []model.Op{revise("r1", ids("m2"), msg(model.RoleAssistant, "One.", 3), msg(model.RoleAssistant, "Two.", 4))},
			"=m1..m1 | revise r1 m2..m2 20>7: -m2 +r1/0 +r1/1 | =m3..m4"},
		{"a revise into none", 3, []model.Op{revise("r1", ids("m2"))},
			"=m1..m1 | revise r1 m2..m2 20>0: -m2 | =m3..m3"},
		{"a resequence", 5, []model.Op{op("q1", model.OpResequence, ids("m4", "m2", "m3"), 0)},
			"=m1..m1 | resequence q1 m2..m4 90>90: -m2 -m3 -m4 +m4 +m2 +m3 | =m5..m5"},
		{"a swap with a message between", 5, []model.Op{op("q1", model.OpResequence, ids("m4", "m2"), 0)},
			"=m1..m1 | resequence q1 m2..m4 60>60: -m2 -m4 +m4 +m2 | =m3..m3 | =m5..m5"},
		{"a resequence that keeps one in place", 4, []model.Op{op("q1", model.OpResequence, ids("m1", "m3", "m2"), 0)},
			"resequence q1 m1..m3 50>50: -m2 -m3  m1 +m3 +m2 | =m4..m4"},
		{"an insert", 3, []model.Op{insert("i1", "m2", msg(model.RoleUser, "Also:", 2), msg(model.RoleUser, "this.", 3))},
			"=m1..m2 | insert i1 m0..m0 0>5: +i1/0 +i1/1 | =m3..m3"},
		{"an insert at the start", 2, []model.Op{insert("i1", "", msg(model.RoleSystem, "Be brief.", 4))},
			"insert i1 m0..m0 0>4: +i1/0 | =m1..m2"},
		{"a tag changes nothing", 3, []model.Op{tag}, "=m1..m3 | ~tag t1"},
		{"a switched-off digest changes nothing", 5, []model.Op{off}, "=m1..m5 | ~digest d1"},
		{"a reverted snip changes nothing", 4, []model.Op{reverted}, "=m1..m4 | ~snip s1"},
		{"an orphaned snip changes nothing", 2, []model.Op{op("s1", model.OpSnip, ids("m7"), 0)}, "=m1..m2 | ~snip s1"},
		{"a digest inside a later digest", 7, []model.Op{
			digest("d1", ids("m2", "m3", "m4"), "Setup.", 5),
			digest("d2", ids("m1", "d1/0", "m5"), "Everything early.", 6),
		}, "digest d2 m1..m5 150>6: -m1 -m2 -m3 -m4 -m5 +d2/0 {digest d1 1: m2..m4} | =m6..m7"},
		{"a digest of digests, three deep", 8, []model.Op{
			digest("d1", ids("m1", "m2"), "A.", 2),
			digest("d2", ids("d1/0", "m3"), "B.", 3),
			digest("d3", ids("d2/0", "m4", "m5"), "C.", 4),
		}, "digest d3 m1..m5 150>4: -m1 -m2 -m3 -m4 -m5 +d3/0 {digest d2 1: m1..m3} {digest d1 2: m1..m2} | =m6..m8"},
		{"a revise of a summary", 5, []model.Op{
			digest("d1", ids("m2", "m3"), "Setup.", 5),
			revise("r1", ids("d1/0"), msg(model.RoleSystem, "Setup, shorter.", 3)),
		}, "=m1..m1 | revise r1 m2..m3 50>3: -m2 -m3 +r1/0 {digest d1 1: m2..m3} | =m4..m5"},
		{"a digest over a switched-off digest takes its messages", 6, []model.Op{
			off,
			digest("d2", ids("d1/0", "m5"), "All of it.", 4),
		}, "=m1..m1 | digest d2 m2..m5 140>4: -m2 -m3 -m4 -m5 +d2/0 | =m6..m6 | ~digest d1"},
		{"a snip of a revision's second item", 4, []model.Op{
			revise("r1", ids("m2"), msg(model.RoleAssistant, "One.", 3), msg(model.RoleAssistant, "Two.", 4)),
			op("s1", model.OpSnip, ids("r1/1"), 0),
		}, "=m1..m1 | revise r1 m2..m2 20>3: -m2 +r1/0 | snip s1 m0..m0 0>0: -r1/1 | =m3..m4"},
		{"a digest over a snip's place", 6, []model.Op{
			op("s1", model.OpSnip, ids("m3"), 0),
			digest("d2", ids("m2", "m4"), "Around it.", 4),
		}, "=m1..m1 | digest d2 m2..m4 90>4: -m2 -m3 -m4 +d2/0 {snip s1 1: m3..m3} | =m5..m6"},
		{"a digest over an insertion", 4, []model.Op{
			insert("i1", "m1", msg(model.RoleUser, "Also.", 2)),
			digest("d2", ids("m1", "i1/0", "m2"), "Start.", 4),
		}, "digest d2 m1..m2 30>4: -m1 -m2 +d2/0 {insert i1 1: m0..m0} | =m3..m4"},
		{"a digest over a reverted digest takes its messages", 6, []model.Op{
			revertedDigest,
			digest("d2", ids("d1/0", "m5"), "All of it.", 4),
		}, "=m1..m1 | digest d2 m2..m5 140>4: -m2 -m3 -m4 -m5 +d2/0 | =m6..m6 | ~digest d1"},
		{"a digest inside a snip", 5, []model.Op{
			digest("d1", ids("m2", "m3"), "Setup.", 5),
			op("s1", model.OpSnip, ids("d1/0", "m4"), 0),
		}, "=m1..m1 | snip s1 m2..m4 90>0: -m2 -m3 -m4 {digest d1 1: m2..m3} | =m5..m5"},
		{"a partial snip", 4, []model.Op{op("s1", model.OpSnip, ids("m2", "m9"), 0)},
			"=m1..m1 | snip s1 m2..m2 20>0: -m2 | =m3..m4"},
		{"a snip waiting for its tags changes nothing", 3, []model.Op{waiting}, "=m1..m3 | ~snip s1"},
		{"a policy's digest", 4, []model.Op{memory}, "digest d1 m1..m3 60>7: -m1 -m2 -m3 +d1/0 | =m4..m4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hs := heads(c.n)
			v := thread.Apply(hs, c.ops, nil)
			d := diff.Compute(v, c.ops, hs)
			if got := brief(d); got != c.want {
				t.Errorf("diff\n got %s\nwant %s\n(view %s)", got, c.want, viewString(v))
			}
			checkAccounts(t, d, v, c.n)
			// The same inputs give the same diff.
			if again := brief(diff.Compute(thread.Apply(hs, c.ops, nil), c.ops, hs)); again != brief(d) {
				t.Errorf("a second diff differs: %s", again)
			}
		})
	}
}

func viewString(v *model.View) string {
	var s []string
	for _, it := range v.Items {
		s = append(s, string(v.ID(it)))
	}
	return strings.Join(s, " ")
}

// The text: a header with both threads' totals, a line per run of kept
// messages, an @@ header per operation (and per operation inside it),
// the items a line each with a preview of their text.
func TestRender(t *testing.T) {
	t.Parallel()
	hs := heads(7)
	d1 := digest("0000000000000d01", ids("m2", "m3", "m4"), "Setup.", 5)
	d2 := digest("0000000000000d02", ids("0000000000000d01/0", "m5"), "Setup, then the schema.\nMore lines.", 9)
	d2.Author, d2.Rule = "memory", "turns"
	off := op("0000000000000s01", model.OpSnip, ids("m7"), 0)
	off.Active = false
	ops := []model.Op{d1, d2, off}
	v := thread.Apply(hs, ops, nil)
	d := diff.Compute(v, ops, hs)
	text := func(id model.ItemID) string {
		if seq, ok := id.Seq(); ok {
			return fmt.Sprintf("\n  message %d says\x1b[31m hello\nand more", seq)
		}
		return v.Synth[v.Items[v.IndexOf(id)].Synth].Content
	}
	want := `--- stored     7 messages, 280 tokens
+++ effective  4 items, 149 tokens
 ⋯ m1 kept (1 message, 10 tokens)
@@ digest 0000000000000d02 by memory (rule turns): m2..m5 (4 messages, 140 → 9 tokens) @@
@@ ↳ digest 0000000000000d01 by operator: m2..m4 (3 messages, 90 → 5 tokens) @@
-m2                  assistant     20  message 2 says␛[31m hello
-m3                  user          30  message 3 says␛[31m hello
-m4                  assistant     40  message 4 says␛[31m hello
-m5                  user          50  message 5 says␛[31m hello
+0000000000000d02/0  system         9  Setup, then the schema.
 ⋯ m6..m7 kept (2 messages, 130 tokens)
# 1 operation changes nothing the model gets:
#   snip 0000000000000s01 by operator (inactive)
`
	if got := d.Render(text); got != want {
		t.Errorf("render\n%s\nwant\n%s", got, want)
	}
	if d.Hunks[0].Op.Rule != "turns" || d.Hunks[0].Op.Author != "memory" {
		t.Errorf("the hunk's operation %+v", d.Hunks[0].Op)
	}
}

// A long hunk cut to fit keeps its first and last lines and says how
// many it left out, where they were.
func TestCut(t *testing.T) {
	t.Parallel()
	hs := heads(30)
	var targets []model.ItemID
	for s := 1; s <= 30; s++ {
		targets = append(targets, model.MessageID(uint64(s)))
	}
	ops := []model.Op{op("s1", model.OpSnip, targets, 0)}
	d := diff.Compute(thread.Apply(hs, ops, nil), ops, hs)
	h := &d.Hunks[0]
	h.Cut(5)
	var got []string
	for _, l := range h.Lines {
		got = append(got, string(l.ID))
	}
	if strings.Join(got, " ") != "m1 m2 m3 m29 m30" || h.LinesOmitted != 25 {
		t.Fatalf("cut to %v, %d left out", got, h.LinesOmitted)
	}
	lines := strings.Split(d.Render(nil), "\n")
	if !strings.HasPrefix(lines[6], " ⋯ 25 lines left out") || !strings.HasPrefix(lines[5], "-m3") || !strings.HasPrefix(lines[7], "-m29") {
		t.Errorf("rendered:\n%s", strings.Join(lines, "\n"))
	}
}

// A hunk says when its operation found only some of its targets, and a
// tag is named as changing nothing the model gets.
func TestRenderSaysPartialAndTags(t *testing.T) {
	t.Parallel()
	hs := heads(4)
	tag := op("t1", model.OpTag, ids("m1"), 0)
	tag.Payload.Tags = []string{"db"}
	ops := []model.Op{op("s1", model.OpSnip, ids("m2", "m9"), 0), tag}
	text := diff.Compute(thread.Apply(hs, ops, nil), ops, hs).Render(nil)
	for _, want := range []string{"@@ snip s1 by operator: m2 (1 message, 20 → 0 tokens, partial) @@", "#   tag t1 by operator (tags only)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}
