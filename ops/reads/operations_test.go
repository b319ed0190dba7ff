package reads_test

import (
	"fmt"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// TestListOperationsSaysARevertedOperationIsNotActive: a reverted
// operation is listed as reverted and not active (it is in effect
// nowhere), a switched-off one as not active, a live one as active.
func TestListOperationsSaysARevertedOperationIsNotActive(t *testing.T) {
	f := toolstest.New(t)
	f.Session("ops", 10)
	digest := func(start int) string {
		t.Helper()
		res := f.MustCall("digest_messages", fmt.Sprintf(`{"start_idx":%d,"end_idx":%d,"summary":"s%d"}`, start, start+1, start)).(ops.OpResult)
		return res.OperationID
	}
	live, off, reverted := digest(0), digest(2), digest(4)
	f.MustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":false}`, off))
	f.MustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, reverted))
	list := f.MustCall("list_operations", `{}`).(reads.ListOperationsResult)
	want := map[string]struct {
		active   bool
		reverted bool
	}{live: {true, false}, off: {false, false}, reverted: {false, true}}
	for _, o := range list.Operations {
		w, ok := want[o.OperationID]
		if !ok {
			continue
		}
		delete(want, o.OperationID)
		if o.Active != w.active || (o.RevertedAt != "") != w.reverted {
			t.Errorf("operation %s (%s): active %v, reverted_at %q; want active %v, reverted %v", o.OperationID, o.Status, o.Active, o.RevertedAt, w.active, w.reverted)
		}
		if w.reverted && o.Status != model.StatusReverted {
			t.Errorf("reverted operation listed as %s", o.Status)
		}
	}
	if len(want) > 0 {
		t.Errorf("not listed: %v", want)
	}
}
