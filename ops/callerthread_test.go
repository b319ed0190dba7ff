package ops_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"weft/formats/claudecode"
	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
)

// messagesAPI reads Messages API messages as the context proxy does: a
// message of tool results is a message per result.
var messagesAPI = ops.ListReader{Shape: "anthropic", Read: func(raw []json.RawMessage, _, lend int) ([]model.NewMessage, [][]model.Part, []int, error) {
	nms, parts, from, errs := claudecode.ReadMessages(raw, lend)
	if len(errs) > 0 {
		return nil, nil, nil, fmt.Errorf("%v", errs)
	}
	return nms, parts, from, nil
}}

// A message of a thread is told by the key of the raw message it was
// read from: a Messages API message of two results is two messages of
// one raw message.
func TestThreadPlacesKeyOfMessages(t *testing.T) {
	f := opstest.New(t)
	var raw []json.RawMessage
	err := json.Unmarshal([]byte(`[{"role":"user","content":"Read both."},`+
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}},{"type":"tool_use","id":"t2","name":"Read","input":{}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a"},{"type":"tool_result","tool_use_id":"t2","content":"b"}]},`+
		`{"role":"assistant","content":"Both read."}]`), &raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"read", "remembered"} {
		msgs, _, places, err := f.Svc.ReadThread(messagesAPI, raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 5 {
			t.Fatalf("%s: %d messages, want 5", pass, len(msgs))
		}
		for i, r := range []int{0, 1, 2, 2, 3} {
			keys := ops.PlaceKeys(places)
			if k, ok := places.KeyOf(i); !ok || k != keys[r] {
				t.Errorf("%s: message %d has the key of raw message %v, want %d", pass, i, slices.Index(keys, k), r)
			}
		}
	}
}
