package reads_test

import (
	"fmt"
	"strings"
	"testing"

	"weft/formats"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// TestAssembleContextHasADefaultBudget: assemble_context with its
// defaults is bounded as every read is: its JSON within the default
// budget, what it left out counted and said, with the way to the rest;
// max_tokens=0 still gives it all.
func TestAssembleContextHasADefaultBudget(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	const n = 1500
	msgs := make([]model.NewMessage, n)
	for i := range msgs {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		body := fmt.Sprintf("turn %d: ", i) + strings.Repeat("the build passed and the lint is clean\n", 8)
		msgs[i] = model.NewMessage{Role: role, Content: body}
	}
	f.Messages("long", msgs)
	for _, format := range []string{"openai", "anthropic", "text"} {
		r := f.MustCall("assemble_context", fmt.Sprintf(`{"format":%q}`, format)).(reads.AssembleResult)
		got := tokens.Count(string(formats.Marshal(r)))
		if got > reads.DefaultMaxTokens {
			t.Errorf("%s: %d tokens (%d bytes) with the defaults, over the default budget of %d", format, got, len(formats.Marshal(r)), reads.DefaultMaxTokens)
		}
		if r.Count == 0 || r.LeftOut != n-r.Count || r.Complete || !strings.Contains(r.Next, "max_tokens") {
			t.Errorf("%s: %d items given, %d left out, complete %v, next %q", format, r.Count, r.LeftOut, r.Complete, r.Next)
		}
		if r.Count < n/20 {
			t.Errorf("%s: only %d items in the default budget", format, r.Count)
		}
	}
	all := f.MustCall("assemble_context", `{"format":"text","max_tokens":0}`).(reads.AssembleResult)
	if all.Count != n || all.LeftOut != 0 || !all.Complete || all.Next != "" {
		t.Errorf("max_tokens=0: %d items, %d left out, complete %v, next %q", all.Count, all.LeftOut, all.Complete, all.Next)
	}
}
