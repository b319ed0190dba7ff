package reads_test

import (
	"fmt"
	"testing"

	"weft/model"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// TestSearchLimitIsAPage: a result cut by limit says it is not complete
// and how many matches it left, and its cursor reaches every one of
// them, those past the first 1,000 too, in every mode.
func TestSearchLimitIsAPage(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	const n = 1203
	msgs := make([]model.NewMessage, n)
	for i := range msgs {
		msgs[i] = model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("needle %d", i), Tokens: 4}
	}
	f.Messages("many", msgs)
	for _, c := range []struct{ args string }{
		{`"query":"needle","limit":7,"max_tokens":0`},
		{`"query":"needle","limit":1000,"max_tokens":0`},
		{`"query":"needle","limit":1000,"max_tokens":0,"view":"raw"`},
		{`"query":"needle","limit":1000,"max_tokens":0,"mode":"fuzzy"`},
	} {
		seen := map[int]bool{}
		cursor := ""
		for page := 0; ; page++ {
			if page > n {
				t.Fatalf("%s: the cursor never ends", c.args)
			}
			args := "{" + c.args
			if cursor != "" {
				args += fmt.Sprintf(`,"cursor":%q`, cursor)
			}
			r := f.MustCall("search_session_history", args+"}").(reads.SearchResult)
			if r.TotalMatches != n {
				t.Fatalf("%s: total_matches %d, want %d", c.args, r.TotalMatches, n)
			}
			for _, m := range r.Matches {
				if seen[m.Index] {
					t.Fatalf("%s: match %d given twice", c.args, m.Index)
				}
				seen[m.Index] = true
			}
			left := n - len(seen)
			if r.Complete != (left == 0) || r.Omitted != left {
				t.Fatalf("%s page %d: %d matches given of %d, but complete %v, omitted %d", c.args, page, len(seen), n, r.Complete, r.Omitted)
			}
			if left == 0 {
				break
			}
			if r.NextCursor == "" || r.Next == "" {
				t.Fatalf("%s page %d: %d matches left and no cursor (next %q)", c.args, page, left, r.Next)
			}
			cursor = r.NextCursor
		}
	}
}
