package assemble

import (
	"slices"
	"testing"

	"weft/model"
	"weft/ops/thread"
)

// thread of roles and token counts, stored in that order, with a digest
// over the seqs given (if any).
func fixture(roles string, tokens []int, digest ...uint64) (*model.View, []model.Head) {
	heads := make([]model.Head, len(roles))
	for i, r := range roles {
		role := map[rune]model.Role{'s': model.RoleSystem, 'u': model.RoleUser, 'a': model.RoleAssistant, 't': model.RoleTool}[r]
		heads[i] = model.Head{Role: role.Code(), Tokens: uint32(tokens[i])}
	}
	var ops []model.Op
	if len(digest) > 0 {
		targets := make([]model.ItemID, len(digest))
		for i, seq := range digest {
			targets[i] = model.MessageID(seq)
		}
		ops = append(ops, model.Op{ID: "d", Type: model.OpDigest, Targets: targets, Active: true, Payload: model.OpPayload{Summary: "s", SummaryTokens: 5}})
	}
	return thread.Apply(heads, ops, nil), heads
}

func all(v *model.View) []int {
	out := make([]int, v.Len())
	for i := range out {
		out[i] = i
	}
	return out
}

func TestFit(t *testing.T) {
	tests := []struct {
		name   string
		roles  string
		tokens []int
		digest []uint64
		budget int
		want   []int
	}{
		{"everything fits", "suaua", []int{10, 10, 10, 10, 10}, nil, 50, []int{0, 1, 2, 3, 4}},
		{"the oldest turns go first, the system prompt stays", "suaua", []int{10, 10, 10, 10, 10}, nil, 30, []int{0, 3, 4}},
		{"the newest item may take the whole budget", "uaua", []int{10, 10, 10, 40}, nil, 40, []int{3}},
		{"the system prompt comes before the newest item", "suaua", []int{10, 10, 10, 10, 40}, nil, 40, []int{0}},
		{"nothing fits", "ua", []int{10, 20}, nil, 15, []int{}},
		// Items after the digest: m1, the summary of m2..m5 (5 tokens),
		// m6..m9. The summary is kept, the older turns m6 and m7 are not.
		{"a summary before older turns", "suauauaua", []int{10, 10, 10, 10, 10, 10, 10, 10, 10}, []uint64{2, 3, 4, 5}, 40, []int{0, 1, 4, 5}},
		// A tool result whose call was left out goes too.
		{"no answer without its call", "uatua", []int{10, 30, 10, 10, 10}, nil, 40, []int{3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, heads := fixture(tt.roles, tt.tokens, tt.digest...)
			got := Fit(v, heads, all(v), tt.budget)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Fit(budget %d) = %v, want %v", tt.budget, got, tt.want)
			}
			used := 0
			for _, i := range got {
				used += Tokens(v, heads, i)
			}
			if used > tt.budget {
				t.Errorf("%d tokens kept, over the budget of %d", used, tt.budget)
			}
		})
	}
}

func TestOmitted(t *testing.T) {
	v, heads := fixture("uauauaua", []int{1, 2, 3, 4, 5, 6, 7, 8})
	picked := []int{1, 2, 3, 4, 5, 6, 7} // 0 not requested
	limited := []int{3, 4, 5, 6, 7}      // 1..2 past max_messages
	kept := []int{6, 7}                  // 3..5 past max_tokens
	ranges, notListed, count, tokens := Omitted(v, heads, picked, limited, kept)
	want := []OmittedRange{
		{StartIdx: 0, EndIdx: 0, FirstID: "m1", LastID: "m1", Count: 1, Tokens: 1, Reason: "not requested"},
		{StartIdx: 1, EndIdx: 2, FirstID: "m2", LastID: "m3", Count: 2, Tokens: 5, Reason: "max_messages"},
		{StartIdx: 3, EndIdx: 5, FirstID: "m4", LastID: "m6", Count: 3, Tokens: 15, Reason: "max_tokens"},
	}
	if !slices.Equal(ranges, want) || notListed != 0 || count != 6 || tokens != 21 {
		t.Fatalf("Omitted = %+v, %d, %d, %d", ranges, notListed, count, tokens)
	}
}
