package ops_test

import (
	"context"
	"testing"

	"weft/ops"
	"weft/ops/tools/toolstest"
)

// TestEditsSayWhatTheyDid: the words an edit is recorded with read as a
// person would say them: numbers with separators, and a move of one
// item called a move.
func TestEditsSayWhatTheyDid(t *testing.T) {
	f := toolstest.New(t)
	f.Session("labels", 12000)
	ctx := context.Background()
	at := func(n int) *int { return &n }
	what := func() string {
		t.Helper()
		info, _, err := f.Svc.View("")
		if err != nil || len(info.Changes) == 0 {
			t.Fatalf("no change recorded: %v", err)
		}
		return info.Changes[len(info.Changes)-1].What
	}
	if _, err := f.Svc.DigestMessages(ctx, ops.DigestArgs{Selection: ops.Selection{StartIdx: at(0), EndIdx: at(10999)}, Summary: "the first part"}); err != nil {
		t.Fatal(err)
	}
	if got, want := what(), "digest of 0–10,999"; got != want {
		t.Errorf("digest recorded as %q, want %q", got, want)
	}
	for _, tc := range []struct {
		order []int
		want  string
	}{
		{[]int{5, 4}, "move of item 5 up 1 place"},
		{[]int{2, 3, 4, 1}, "move of item 1 down 3 places"},
		{[]int{4, 1, 2, 3}, "move of item 4 up 3 places"},
		{[]int{3, 1, 4, 2}, "resequence of 4 items"},
	} {
		if _, err := f.Svc.ResequenceMessages(ctx, ops.ResequenceArgs{NewOrder: tc.order}); err != nil {
			t.Fatal(err)
		}
		if got := what(); got != tc.want {
			t.Errorf("resequence %v recorded as %q, want %q", tc.order, got, tc.want)
		}
	}
}
