package tui

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/tui/rows"
)

// TestTagFilterAgreesWithTheReads: the filter's tag:NAME rows are the
// items get_message_range gives with the same tags, a tag in another
// case, a summary that carries a tag and a tag the digest hid included.
func TestTagFilterAgreesWithTheReads(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	var msgs []model.NewMessage
	for i := 1; i <= 16; i++ {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("turn %d", i)})
	}
	sid := newSession(t, svc, "Tags", msgs)
	ctx := context.Background()
	tag := func(tags []string, ids ...model.ItemID) {
		t.Helper()
		if _, err := svc.TagMessages(ctx, ops.TagArgs{Selection: ops.Selection{SessionID: sid, IDs: ids}, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	tag([]string{"db"}, "m2", "m3", "m9")
	tag([]string{"DB"}, "m12")
	tag([]string{"auth"}, "m5", "m9")
	tag([]string{"db"}, "m7") // hidden by the digest below
	op, err := svc.DigestMessages(ctx, ops.DigestArgs{Selection: ops.Selection{SessionID: sid, IDs: []model.ItemID{"m6", "m7"}}, Summary: "the middle"})
	if err != nil {
		t.Fatal(err)
	}
	tag([]string{"db", "summary"}, model.SyntheticID(op.OperationID, 0))

	tests := []struct {
		filter string
		tags   []string
	}{
		{"tag:db", []string{"db"}},
		{"tag:DB", []string{"DB"}},
		{"tag:auth", []string{"auth"}},
		{"tag:db,auth", []string{"db", "auth"}},
		{"tag:summary", []string{"summary"}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			m := openModel(t, svc, Options{Theme: "dark"}, sid, 100, 40)
			press(t, m, "F")
			typeText(t, m, tt.filter)
			_, cmd := m.Update(keyEnter)
			run(t, m, cmd)
			if !m.feat.filter.on() {
				t.Fatalf("the filter %s is not on: %s", tt.filter, m.status)
			}
			var shown []int
			for r := range m.rows.Len() {
				rw := m.rows.At(r)
				if rw.Kind != rows.Item {
					t.Fatalf("row %d is not an item: %+v", r, rw)
				}
				shown = append(shown, rw.Item)
			}
			none := 0
			res, err := reads.GetMessageRange(svc, ctx, reads.MessageRangeArgs{SessionID: sid, Tags: tt.tags, MaxTokens: &none})
			if err != nil {
				t.Fatal(err)
			}
			var read []int
			for _, msg := range res.Messages {
				read = append(read, msg.Index)
			}
			if len(read) == 0 || !slices.Equal(shown, read) {
				t.Errorf("the filter shows %v, get_message_range gives %v", shown, read)
			}
		})
	}
}
