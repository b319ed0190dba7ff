package dialog

import (
	"strings"
	"testing"

	"weft/model"
	"weft/ops/reads"
)

// A digest's summary is shown as written, inside quotes of its own: the
// quotes in it are not escaped.
func TestOperationsPanelQuotesSummariesOnce(t *testing.T) {
	op := reads.OperationOut{OpType: model.OpDigest, Targets: make([]model.ItemID, 21), Summary: `Messages 10–30 of "Rate limiter"`}
	got := describeOp(op)
	if strings.Contains(got, `\"`) || !strings.Contains(got, `“Messages 10–30 of "Rate limiter"”`) {
		t.Errorf("describeOp = %s", got)
	}
}

// Counts are shown with thousands separators.
func TestOperationCountsHaveThousandsSeparators(t *testing.T) {
	if got := describeOp(reads.OperationOut{OpType: model.OpSnip, Targets: make([]model.ItemID, 12345)}); got != "12,345 items" {
		t.Errorf("operations panel: %q", got)
	}
}
