package thread

import (
	"testing"
	"time"

	"weft/internal/viewtest"
	"weft/model"
)

var t0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

// heads makes n stored messages, one minute apart, 10 tokens each.
func heads(n int) []model.Head {
	h := make([]model.Head, n)
	for i := range h {
		h[i] = model.Head{At: t0.Add(time.Duration(i) * time.Minute).UnixNano(), Tokens: 10, Role: model.RoleUser.Code()}
	}
	return h
}

// render writes a view compactly (viewtest.Render).
var render = viewtest.Render

func ms(seqs ...int) []model.ItemID {
	out := make([]model.ItemID, len(seqs))
	for i, s := range seqs {
		out[i] = model.MessageID(uint64(s))
	}
	return out
}

func spanIDs(from, to int) []model.ItemID {
	var out []model.ItemID
	for s := from; s <= to; s++ {
		out = append(out, model.MessageID(uint64(s)))
	}
	return out
}

func op(id string, typ model.OpType, targets []model.ItemID) model.Op {
	return model.Op{ID: id, Type: typ, Targets: targets, Active: true, CreatedAt: t0.Add(24 * time.Hour), Author: "test"}
}

func withSummary(o model.Op, s string) model.Op      { o.Payload.Summary = s; return o }
func withTags(o model.Op, tags ...string) model.Op   { o.Payload.Tags = tags; return o }
func withWhen(o model.Op, tags ...string) model.Op   { o.WhenTags = tags; return o }
func withAnchor(o model.Op, a model.ItemID) model.Op { o.Anchor = a; return o }
func inactive(o model.Op) model.Op                   { o.Active = false; return o }
func reverted(o model.Op) model.Op                   { t := t0; o.RevertedAt = &t; return o }
func withMsgs(o model.Op, contents ...string) model.Op {
	for _, c := range contents {
		o.Payload.Messages = append(o.Payload.Messages, model.NewMessage{Role: model.RoleAssistant, Content: c})
	}
	return o
}

func TestApplySeedExamples(t *testing.T) {
	// Twelve messages: index i holds m(i+1), as in seed 002's examples.
	tests := []struct {
		name   string
		ops    []model.Op
		active []string
		want   string
		status map[string]model.OpStatus
	}{
		{"no operations", nil, nil, "m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", nil},
		{"digest 3-8",
			[]model.Op{withSummary(op("d", model.OpDigest, spanIDs(4, 9)), "Discussed auth options; chose JWT")}, nil,
			"m1 m2 m3 [digest:d] d/0 m10 m11 m12", map[string]model.OpStatus{"d": model.StatusActive}},
		{"snip 5-8",
			[]model.Op{op("s", model.OpSnip, spanIDs(6, 9))}, nil,
			"m1 m2 m3 m4 m5 [snip:s] m10 m11 m12", nil},
		{"resequence [8,9,5,6,7,10,11]",
			[]model.Op{op("r", model.OpResequence, ms(9, 10, 6, 7, 8, 11, 12))}, nil,
			"m1 m2 m3 m4 m5 [resequence:r] m9 m10 m6 m7 m8 m11 m12", nil},
		{"insert after 5",
			[]model.Op{withAnchor(withMsgs(op("i", model.OpInsert, nil), "(Context: user meant PostgreSQL)"), "m6")}, nil,
			"m1 m2 m3 m4 m5 m6 [insert:i] i/0 m7 m8 m9 m10 m11 m12", nil},
		{"insert at the start",
			[]model.Op{withMsgs(op("i", model.OpInsert, nil), "a", "b")}, nil,
			"[insert:i] i/0 i/1 m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", nil},
		{"revise 5-10 into 2",
			[]model.Op{withMsgs(op("v", model.OpRevise, spanIDs(6, 11)), "q", "a")}, nil,
			"m1 m2 m3 m4 m5 [revise:v] v/0 v/1 m12", nil},
		{"revise into nothing is a snip",
			[]model.Op{op("v", model.OpRevise, spanIDs(2, 3))}, nil,
			"m1 [revise:v] m4 m5 m6 m7 m8 m9 m10 m11 m12", nil},
		{"tag 5-10",
			[]model.Op{withTags(op("t", model.OpTag, spanIDs(6, 11)), "database-design")}, nil,
			"m1 m2 m3 m4 m5 m6{database-design} m7{database-design} m8{database-design} m9{database-design} m10{database-design} m11{database-design} m12", nil},
		{"tags accumulate and stay sorted",
			[]model.Op{withTags(op("t1", model.OpTag, ms(1, 2)), "z"), withTags(op("t2", model.OpTag, ms(2)), "a", "z")}, nil,
			"m1{z} m2{a,z} m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", nil},
		{"inactive operation is skipped",
			[]model.Op{inactive(op("s", model.OpSnip, spanIDs(1, 11)))}, nil,
			"m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"s": model.StatusInactive}},
		{"reverted operation is skipped",
			[]model.Op{reverted(op("s", model.OpSnip, spanIDs(1, 11)))}, nil,
			"m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"s": model.StatusReverted}},
		{"conditional op without its tag",
			[]model.Op{withWhen(op("s", model.OpSnip, spanIDs(1, 11)), "brief")}, []string{"other"},
			"m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"s": model.StatusInactive}},
		{"conditional op with its tag",
			[]model.Op{withWhen(op("s", model.OpSnip, spanIDs(1, 11)), "brief")}, []string{"brief", "other"},
			"[snip:s] m12", map[string]model.OpStatus{"s": model.StatusActive}},
		{"snip then digest over it: partial, marker nested",
			[]model.Op{op("s", model.OpSnip, spanIDs(6, 9)), withSummary(op("d", model.OpDigest, spanIDs(4, 10)), "x")}, nil,
			"m1 m2 m3 [digest:d] d/0 m11 m12", map[string]model.OpStatus{"s": model.StatusActive, "d": model.StatusPartial}},
		{"digest swallows everything later revised: orphaned revise",
			[]model.Op{withSummary(op("d", model.OpDigest, spanIDs(4, 9)), "x"), withMsgs(op("v", model.OpRevise, ms(5)), "y")}, nil,
			"m1 m2 m3 [digest:d] d/0 m10 m11 m12", map[string]model.OpStatus{"v": model.StatusOrphaned}},
		{"revise inside a digest's replacement (nesting)",
			[]model.Op{withMsgs(op("v", model.OpRevise, spanIDs(3, 4)), "r0", "r1"), withSummary(op("d", model.OpDigest, append([]model.ItemID{"v/0", "v/1"}, ms(5)...)), "sum")}, nil,
			"m1 m2 [digest:d] d/0 m6 m7 m8 m9 m10 m11 m12", nil},
		{"synthetic items can be resequenced",
			[]model.Op{withAnchor(withMsgs(op("i", model.OpInsert, nil), "x"), "m1"), op("r", model.OpResequence, []model.ItemID{"m2", "i/0"})}, nil,
			"m1 [resequence:r] m2 [insert:i] i/0 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", nil},
		{"insert after a missing anchor is orphaned",
			[]model.Op{op("s", model.OpSnip, ms(3)), withAnchor(withMsgs(op("i", model.OpInsert, nil), "x"), "m3")}, nil,
			"m1 m2 [snip:s] m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"i": model.StatusOrphaned}},
		{"resequence after toggled positions uses current positions",
			[]model.Op{op("r", model.OpResequence, ms(3, 1, 2))}, nil,
			"[resequence:r] m3 m1 m2 m4 m5 m6 m7 m8 m9 m10 m11 m12", nil},
		{"digest with non-contiguous targets lands at the first",
			[]model.Op{op("r", model.OpResequence, ms(4, 2, 3)), withSummary(op("d", model.OpDigest, ms(2, 3, 4)), "s")}, nil,
			"m1 [digest:d] d/0 m5 m6 m7 m8 m9 m10 m11 m12", nil},
		{"an inner revise switched off: its originals stay under the outer digest",
			[]model.Op{inactive(withMsgs(op("v", model.OpRevise, ms(5, 6)), "REV-A")), withSummary(op("d", model.OpDigest, []model.ItemID{"m3", "m4", "v/0", "m7"}), "outer")}, nil,
			"m1 m2 [digest:d] d/0 m8 m9 m10 m11 m12", map[string]model.OpStatus{"v": model.StatusInactive, "d": model.StatusActive}},
		{"an inner revise reverted: the same",
			[]model.Op{reverted(withMsgs(op("v", model.OpRevise, ms(5, 6)), "REV-A", "REV-B")), withSummary(op("d", model.OpDigest, []model.ItemID{"m3", "m4", "v/1", "m7"}), "outer")}, nil,
			"m1 m2 [digest:d] d/0 m8 m9 m10 m11 m12", map[string]model.OpStatus{"d": model.StatusActive}},
		{"an inner digest switched off: its messages stay under the outer one",
			[]model.Op{inactive(withSummary(op("d1", model.OpDigest, spanIDs(2, 4)), "inner")), withSummary(op("d2", model.OpDigest, append([]model.ItemID{"d1/0"}, spanIDs(6, 8)...)), "outer")}, nil,
			"m1 [digest:d2] d2/0 m5 m9 m10 m11 m12", map[string]model.OpStatus{"d2": model.StatusActive}},
		{"nested three deep, the middle one off",
			[]model.Op{
				withMsgs(op("v", model.OpRevise, ms(4)), "r"),
				inactive(withSummary(op("d1", model.OpDigest, []model.ItemID{"m3", "v/0", "m5"}), "inner")),
				op("s", model.OpSnip, []model.ItemID{"m2", "d1/0", "m6"}),
			}, nil,
			"m1 [snip:s] m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"v": model.StatusActive, "s": model.StatusActive}},
		{"a tag on an inner item switched off tags its originals",
			[]model.Op{inactive(withMsgs(op("v", model.OpRevise, ms(2, 3)), "r")), withTags(op("t", model.OpTag, []model.ItemID{"v/0"}), "x")}, nil,
			"m1 m2{x} m3{x} m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"t": model.StatusActive}},
		{"an insert after an inner item switched off lands after its originals",
			[]model.Op{inactive(withMsgs(op("v", model.OpRevise, ms(2, 3)), "r")), withAnchor(withMsgs(op("i", model.OpInsert, nil), "x"), "v/0")}, nil,
			"m1 m2 m3 [insert:i] i/0 m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"i": model.StatusActive}},
		{"an inserted item switched off stands for nothing",
			[]model.Op{inactive(withAnchor(withMsgs(op("i", model.OpInsert, nil), "x"), "m2")), op("s", model.OpSnip, []model.ItemID{"i/0", "m3"})}, nil,
			"m1 m2 [snip:s] m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"s": model.StatusPartial}},
		{"unknown targets only: orphaned",
			[]model.Op{op("s", model.OpSnip, ms(99)), op("x", model.OpSnip, []model.ItemID{"nope/0", "garbage"})}, nil,
			"m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12", map[string]model.OpStatus{"s": model.StatusOrphaned, "x": model.StatusOrphaned}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Apply(heads(12), tt.ops, tt.active)
			if got := render(v); got != tt.want {
				t.Errorf("view\n got: %s\nwant: %s", got, tt.want)
			}
			for id, want := range tt.status {
				if got := v.Status[id]; got != want {
					t.Errorf("status of %s = %s, want %s", id, got, want)
				}
			}
			checkWhere(t, v, 12)
		})
	}
}

// checkWhere verifies the view's map from stored messages to places.
func checkWhere(t *testing.T, v *model.View, n int) {
	t.Helper()
	if len(v.Where) != n {
		t.Fatalf("len(Where) = %d, want %d", len(v.Where), n)
	}
	for seq := 1; seq <= n; seq++ {
		idx, visible := v.PlaceOfSeq(uint64(seq))
		if visible {
			if v.Items[idx].Seq != uint64(seq) {
				t.Errorf("Where says m%d is at %d, but that is %s", seq, idx, v.ID(v.Items[idx]))
			}
		} else if idx < 0 || idx > len(v.Items) {
			t.Errorf("hidden m%d placed at %d, outside 0..%d", seq, idx, len(v.Items))
		}
	}
}

func TestApplyDigestCoverage(t *testing.T) {
	v := Apply(heads(12), []model.Op{
		op("s", model.OpSnip, ms(5)),
		withSummary(op("d1", model.OpDigest, spanIDs(2, 4)), "first"),
		withSummary(op("d2", model.OpDigest, append([]model.ItemID{"d1/0"}, spanIDs(6, 8)...)), "second"),
	}, nil)
	if got, want := render(v), "m1 [digest:d2] d2/0 m9 m10 m11 m12"; got != want {
		t.Fatalf("view %s, want %s", got, want)
	}
	s := v.Synth[v.Items[1].Synth]
	if s.MessageCount != 6 {
		t.Errorf("d2 covers %d messages, want 6 (m2-m4 via d1, m6-m8)", s.MessageCount)
	}
	if want := t0.Add(1 * time.Minute); !s.TimeSpanStart.Equal(want) {
		t.Errorf("span start %v, want %v", s.TimeSpanStart, want)
	}
	if want := t0.Add(7 * time.Minute); !s.TimeSpanEnd.Equal(want) {
		t.Errorf("span end %v, want %v", s.TimeSpanEnd, want)
	}
	m := v.Markers[0]
	if len(m.Nested) != 2 {
		t.Fatalf("d2's marker nests %d markers, want 2 (d1 and the snip between)", len(m.Nested))
	}
	if v.Tokens != 10*5 || v.RawTokens != 120 {
		t.Errorf("tokens %d/%d, want 50/120", v.Tokens, v.RawTokens)
	}
	if idx, vis := v.PlaceOfSeq(3); vis || idx != 1 {
		t.Errorf("m3 placed at %d (visible %v), want hidden at 1", idx, vis)
	}
}

func TestAppendToViewMatchesApply(t *testing.T) {
	ops := []model.Op{
		withAnchor(withMsgs(op("i", model.OpInsert, nil), "after last"), "m12"),
		op("r", model.OpResequence, ms(12, 11)),
		withAnchor(withMsgs(op("j", model.OpInsert, nil), "after 11"), "m11"),
		withTags(op("t", model.OpTag, ms(12)), "x"),
	}
	base := Apply(heads(12), ops, nil)
	got := AppendToView(base, heads(15)[12:])
	want := Apply(heads(15), ops, nil)
	if render(got) != render(want) {
		t.Fatalf("incremental\n got: %s\nwant: %s", render(got), render(want))
	}
	if got.Tokens != want.Tokens || got.RawTokens != want.RawTokens {
		t.Errorf("tokens %d/%d, want %d/%d", got.Tokens, got.RawTokens, want.Tokens, want.RawTokens)
	}
	if render(base) != render(Apply(heads(12), ops, nil)) {
		t.Errorf("AppendToView changed the view it extended")
	}
}
