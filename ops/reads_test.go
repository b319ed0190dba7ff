package ops_test

import (
	"strings"
	"testing"

	"weft/ops/tools/toolstest"
)

func TestMessagesReadsBySeq(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("reads", 3)
	got, err := f.Svc.Messages(sid, []uint64{3, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Content != "message 3" || got[1].Content != "message 1" {
		t.Fatalf("Messages(3, 1) = %+v", got)
	}
	for _, seq := range []uint64{0, 4} {
		if _, err := f.Svc.Messages(sid, []uint64{seq}); err == nil || !strings.Contains(err.Error(), "no stored message") {
			t.Errorf("seq %d: %v", seq, err)
		}
	}
}
