package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"weft/model"
	"weft/ops"
	"weft/store/boltstore"
)

// TestTagsOverTheFaces: over MCP and POST /api, get_message_range takes
// tags without a range (its schema, as clients check arguments against
// it, requires none), and an edit's ids take tag:NAME.
func TestTagsOverTheFaces(t *testing.T) {
	t.Parallel()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "weft.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := ops.New(st)
	ctx := context.Background()
	fcs, cs := faces(t, svc)
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range listed.Tools {
		if tool.Name != "get_message_range" {
			continue
		}
		found = true
		b, _ := json.Marshal(tool.InputSchema)
		var schema jsonschema.Schema
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		r, err := schema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Validate(map[string]any{"tags": []any{"db"}}); err != nil {
			t.Errorf("get_message_range's schema refuses tags without a range: %v", err)
		}
	}
	if !found {
		t.Fatal("no get_message_range among the tools listed")
	}
	for _, fc := range fcs {
		t.Run(fc.name, func(t *testing.T) {
			c, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "tags over " + fc.name})
			if err != nil {
				t.Fatal(err)
			}
			sid := c.SessionID
			var msgs []model.NewMessage
			for i := 1; i <= 6; i++ {
				msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("message %d", i)})
			}
			if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: msgs}); err != nil {
				t.Fatal(err)
			}
			if _, _, refused := fc.call(t, "tag_messages", map[string]any{"session_id": sid, "ids": []string{"m2", "m5"}, "tags": []string{"db"}}); refused != "" {
				t.Fatal(refused)
			}
			ids := func(res map[string]any) string {
				var out []string
				for _, m := range res["messages"].([]any) {
					out = append(out, m.(map[string]any)["id"].(string))
				}
				return strings.Join(out, " ")
			}
			res, _, refused := fc.call(t, "get_message_range", map[string]any{"session_id": sid, "tags": []string{"db"}})
			if refused != "" || ids(res) != "m2 m5" {
				t.Fatalf("get_message_range tags=[db]: %v %q", res, refused)
			}
			if _, _, refused = fc.call(t, "snip_messages", map[string]any{"session_id": sid, "ids": []string{"tag:nope"}}); !strings.Contains(refused, `no item of the effective thread carries tag "nope"; the session's tags: db`) {
				t.Errorf("an unknown tag: refused %q", refused)
			}
			if _, _, refused = fc.call(t, "snip_messages", map[string]any{"session_id": sid, "ids": []string{"m1", "tag:db"}}); refused != "" {
				t.Fatal(refused)
			}
			res, _, _ = fc.call(t, "get_message_range", map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 2})
			if ids(res) != "m3 m4 m6" {
				t.Errorf("after snip_messages ids=[m1, tag:db]: %s", ids(res))
			}
		})
	}
}
