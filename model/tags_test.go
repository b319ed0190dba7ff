package model

import (
	"slices"
	"testing"
)

func TestWhichItemsCarryATag(t *testing.T) {
	// Items: m1{db} m2 m3{DB,auth} a synthetic{auth} m5{x} — and a tag
	// list no item of the thread uses any more ({gone}).
	v := &View{
		TagSets: [][]string{nil, {"db"}, {"DB", "auth"}, {"auth"}, {"gone"}, {"x"}},
		Items: []Item{
			{Seq: 1, Synth: -1, Tags: 1},
			{Seq: 2, Synth: -1},
			{Seq: 3, Synth: -1, Tags: 2},
			{Synth: 0, Tags: 3},
			{Seq: 5, Synth: -1, Tags: 5},
		},
		Synth: []Synthetic{{OpID: "op", OpType: OpInsert}},
	}
	tests := []struct {
		tags []string
		want []int
	}{
		{[]string{"db"}, []int{0, 2}},
		{[]string{"Db"}, []int{0, 2}},
		{[]string{"auth"}, []int{2, 3}},
		{[]string{"db", "auth"}, []int{0, 2, 3}},
		{[]string{"gone"}, nil},
		{[]string{"nothing"}, nil},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := v.Tagged(tt.tags); !slices.Equal(got, tt.want) {
			t.Errorf("Tagged(%v) = %v, want %v", tt.tags, got, tt.want)
		}
		m := v.MatchTags(tt.tags)
		for i, it := range v.Items {
			if m.Carries(it) != slices.Contains(tt.want, i) {
				t.Errorf("MatchTags(%v).Carries(item %d) = %v", tt.tags, i, m.Carries(it))
			}
		}
	}
	if got, want := v.TagNames(), []string{"DB", "auth", "db", "x"}; !slices.Equal(got, want) {
		t.Errorf("TagNames() = %v, want %v (the tags items carry, not %q)", got, want, "gone")
	}
}
