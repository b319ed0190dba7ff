package dialog

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops/reads"
	"weft/themes"
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

// TestOperationsPanelSaysThereIsMore: a list longer than the panel says
// how many rows are above and below what it shows.
func TestOperationsPanelSaysThereIsMore(t *testing.T) {
	st := themes.New(themes.Default(true), true)
	list := make([]reads.OperationOut, 13)
	for i := range list {
		list[i] = reads.OperationOut{OperationID: fmt.Sprint("op", i), OpType: model.OpSnip, Status: model.StatusActive, Targets: make([]model.ItemID, 1), CreatedAt: "2026-01-26T09:00:00Z", Author: "operator"}
	}
	p := NewOperations()
	p.SetList(list)
	view := ansi.Strip(p.View(120, st))
	if !strings.Contains(view, "↓ 1 more") || strings.Contains(view, "↑") {
		t.Errorf("at the top of 13 operations:\n%s", view)
	}
	for range 12 {
		p.HandleMsg(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	view = ansi.Strip(p.View(120, st))
	if !strings.Contains(view, "↑ 1 more") || strings.Contains(view, "↓") {
		t.Errorf("at the bottom of 13 operations:\n%s", view)
	}
}
