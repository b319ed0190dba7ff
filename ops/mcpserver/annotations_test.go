package mcpserver

import (
	"context"
	"testing"

	"weft/ops/tools"
)

// The hints agents act on: a revert, or a session's deletion, cannot be
// undone by any tool (so they are destructive), and summarize_message_range may ask a model outside weft
// (so it is open-world); every other tool stays inside weft.
func TestAnnotationsOverMCP(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "annotations", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Fatalf("%s: annotations %+v lack a hint", tool.Name, a)
		}
		switch tool.Name {
		case "revert_operation", "delete_session":
			seen++
			if !*a.DestructiveHint || a.ReadOnlyHint {
				t.Errorf("%s: destructive %v, read-only %v; want destructive", tool.Name, *a.DestructiveHint, a.ReadOnlyHint)
			}
		case "summarize_message_range":
			seen++
			if !*a.OpenWorldHint {
				t.Errorf("summarize_message_range: openWorldHint false, want true")
			}
		default:
			if *a.OpenWorldHint {
				t.Errorf("%s: openWorldHint true; only summarize_message_range reaches outside weft", tool.Name)
			}
		}
	}
	if seen != 3 {
		t.Errorf("tools/list lacks revert_operation, delete_session or summarize_message_range")
	}
}
