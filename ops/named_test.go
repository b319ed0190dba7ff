package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/tools"
	"weft/ops/tools/toolstest"
)

// TestStaleVersionWithIDs: an edit that names its items by ID, made
// against an older version, goes through on exactly those items when
// what changed since left them alone, and is refused, saying what
// changed, when a change touched them. With indices any change still
// refuses it.
func TestStaleVersionWithIDs(t *testing.T) {
	agent := ops.WithAuthor(context.Background(), "claude-code")
	ids := []model.ItemID{"m5", "m6", "m7"}
	idx := func(n int) *int { return &n }
	type edit func(f *toolstest.Fixture, v uint64) error
	digest := func(f *toolstest.Fixture, v uint64) error {
		_, err := f.Svc.DigestMessages(context.Background(), ops.DigestArgs{Selection: ops.Selection{IDs: ids}, Summary: "the three", EditOptions: ops.EditOptions{ExpectedVersion: &v}})
		return err
	}
	cases := []struct {
		name   string
		change func(f *toolstest.Fixture, sid string) // the agent's change after v0
		edit   edit
		ok     bool
		says   string
	}{
		{"an insert elsewhere", func(f *toolstest.Fixture, sid string) {
			mustInsert(f, agent, ops.InsertArgs{AfterIdx: idx(0), Messages: []model.NewMessage{{Role: model.RoleUser, Content: "agent's note"}}})
		}, digest, true, ""},
		{"a snip elsewhere and an append", func(f *toolstest.Fixture, sid string) {
			if _, err := f.Svc.SnipMessages(agent, ops.SnipArgs{Selection: ops.Selection{StartIdx: idx(1), EndIdx: idx(2)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Svc.AppendMessages(agent, ops.AppendMessagesArgs{Messages: []model.NewMessage{{Role: model.RoleUser, Content: "later"}}}); err != nil {
				t.Fatal(err)
			}
		}, digest, true, ""},
		{"a digest over one of them", func(f *toolstest.Fixture, sid string) {
			if _, err := f.Svc.DigestMessages(agent, ops.DigestArgs{Selection: ops.Selection{IDs: []model.ItemID{"m7", "m8"}}, Summary: "agent's"}); err != nil {
				t.Fatal(err)
			}
		}, digest, false, "digest"},
		{"a tag on one of them", func(f *toolstest.Fixture, sid string) {
			if _, err := f.Svc.TagMessages(agent, ops.TagArgs{Selection: ops.Selection{IDs: []model.ItemID{"m6"}}, Tags: []string{"x"}}); err != nil {
				t.Fatal(err)
			}
		}, digest, false, "acts on m6"},
		{"an insert among them", func(f *toolstest.Fixture, sid string) {
			mustInsert(f, agent, ops.InsertArgs{AfterID: "m5", Messages: []model.NewMessage{{Role: model.RoleUser, Content: "wedged"}}})
		}, digest, false, "insert"},
		{"an old snip among them switched off", func(f *toolstest.Fixture, sid string) {
			// Made before v0 (see below), so the operator's m5..m7
			// stood together without m6; switching it off puts m6 back
			// among them.
			list, _ := f.Svc.Operations(sid)
			off := false
			if _, err := f.Svc.ToggleOperation(agent, ops.ToggleArgs{OperationArgs: ops.OperationArgs{OperationID: list[0].ID}, Active: &off}); err != nil {
				t.Fatal(err)
			}
		}, func(f *toolstest.Fixture, v uint64) error {
			two := []model.ItemID{"m5", "m7"}
			_, err := f.Svc.SnipMessages(context.Background(), ops.SnipArgs{Selection: ops.Selection{IDs: two}, EditOptions: ops.EditOptions{ExpectedVersion: &v}})
			return err
		}, false, "no longer stand together"},
		{"indices and any change", func(f *toolstest.Fixture, sid string) {
			mustInsert(f, agent, ops.InsertArgs{AfterIdx: idx(0), Messages: []model.NewMessage{{Role: model.RoleUser, Content: "agent's note"}}})
		}, func(f *toolstest.Fixture, v uint64) error {
			_, err := f.Svc.DigestMessages(context.Background(), ops.DigestArgs{Selection: ops.Selection{StartIdx: idx(4), EndIdx: idx(6)}, Summary: "x", EditOptions: ops.EditOptions{ExpectedVersion: &v}})
			return err
		}, false, "insert of 1 message after 0 by claude-code"},
		{"an insert after a named anchor, elsewhere changed", func(f *toolstest.Fixture, sid string) {
			mustInsert(f, agent, ops.InsertArgs{AfterIdx: idx(0), Messages: []model.NewMessage{{Role: model.RoleUser, Content: "agent's note"}}})
		}, func(f *toolstest.Fixture, v uint64) error {
			_, err := f.Svc.InsertMessages(context.Background(), ops.InsertArgs{AfterID: "m6", Messages: []model.NewMessage{{Role: model.RoleUser, Content: "mine"}}, EditOptions: ops.EditOptions{ExpectedVersion: &v}})
			return err
		}, true, ""},
		{"an insert after an anchor digested since", func(f *toolstest.Fixture, sid string) {
			if _, err := f.Svc.DigestMessages(agent, ops.DigestArgs{Selection: ops.Selection{IDs: []model.ItemID{"m6"}}, Summary: "agent's"}); err != nil {
				t.Fatal(err)
			}
		}, func(f *toolstest.Fixture, v uint64) error {
			_, err := f.Svc.InsertMessages(context.Background(), ops.InsertArgs{AfterID: "m6", Messages: []model.NewMessage{{Role: model.RoleUser, Content: "mine"}}, EditOptions: ops.EditOptions{ExpectedVersion: &v}})
			return err
		}, false, "acts on m6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := toolstest.New(t)
			sid := f.Session("named", 12)
			if strings.Contains(c.name, "switched off") {
				if _, err := f.Svc.SnipMessages(agent, ops.SnipArgs{Selection: ops.Selection{IDs: []model.ItemID{"m6"}}}); err != nil {
					t.Fatal(err)
				}
			}
			info, _, _ := f.Svc.View(sid)
			v0 := info.Version
			c.change(f, sid)
			before, _ := f.Svc.Operations(sid)
			err := c.edit(f, v0)
			after, _ := f.Svc.Operations(sid)
			if !c.ok {
				if !errors.Is(err, ops.ErrConflict) || !strings.Contains(err.Error(), c.says) {
					t.Fatalf("want a conflict saying %q, got %v", c.says, err)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("not %d", v0)) || len(after) != len(before) {
					t.Fatalf("the refusal does not list the changes since v%d, or an operation was made: %v", v0, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			op := after[len(after)-1]
			if op.Type == model.OpDigest && !slices.Equal(op.Targets, ids) {
				t.Fatalf("the digest covers %v, want %v", op.Targets, ids)
			}
		})
	}
}

// TestExpectedVersionAheadIsRefusedWithIDs: a version the session has not
// reached is refused, with ids as with indices.
func TestExpectedVersionAheadIsRefusedWithIDs(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("ahead", 4)
	info, _, _ := f.Svc.View(sid)
	v := info.Version + 3
	_, err := f.Svc.SnipMessages(context.Background(), ops.SnipArgs{Selection: ops.Selection{IDs: []model.ItemID{"m2"}}, EditOptions: ops.EditOptions{ExpectedVersion: &v}})
	if !errors.Is(err, ops.ErrConflict) || !strings.Contains(err.Error(), "ahead") {
		t.Fatalf("want a conflict saying the version is ahead, got %v", err)
	}
}

// TestStaleIndicesAreRefusedOverTheTools: through the tool registry (what
// MCP and HTTP call), a stale expected_version with indices is refused
// as before, and with ids it is checked against the named items.
func TestStaleIndicesAreRefusedOverTheTools(t *testing.T) {
	f := toolstest.New(t)
	f.Session("tools", 10)
	v0 := f.Version("")
	f.MustCall("insert_messages", `{"after_idx":0,"messages":[{"role":"user","content":"agent"}]}`)
	if _, err := f.Call("snip_messages", fmt.Sprintf(`{"start_idx":4,"end_idx":5,"expected_version":%d}`, v0)); !errors.Is(err, ops.ErrConflict) {
		t.Fatalf("indices with a stale version: want a conflict, got %v", err)
	}
	if _, err := f.Call("snip_messages", fmt.Sprintf(`{"ids":["m4","m5"],"expected_version":%d}`, v0)); err != nil {
		t.Fatalf("ids with a stale version, untouched since: %v", err)
	}
	if d := describeTool(t, "snip_messages"); !strings.Contains(d, "With ids (or after_id) only a change to the named items does") {
		t.Errorf("snip_messages' expected_version does not say how ids are checked: %s", d)
	}
}

func mustInsert(f *toolstest.Fixture, ctx context.Context, a ops.InsertArgs) {
	f.T.Helper()
	if _, err := f.Svc.InsertMessages(ctx, a); err != nil {
		f.T.Fatal(err)
	}
}

// describeTool returns the description of a tool's expected_version
// argument, as its schema (MCP, HTTP) carries it.
func describeTool(t *testing.T, tool string) string {
	t.Helper()
	tl, ok := tools.Lookup(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	f, ok := tl.ArgsType.FieldByName("ExpectedVersion")
	if !ok {
		t.Fatalf("%s takes no expected_version", tool)
	}
	return f.Tag.Get("jsonschema")
}

// An operation's messages are kept as JSON in its record: a message
// with parts as read (ReadParts, which only a store takes) has them
// written out, not dropped, and the item the insert made shows them.
func TestInsertWritesOutPartsAsRead(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("tools", 3)
	part := model.Part{Type: model.PartToolResult, ToolCallID: "c1", Text: "the output", Raw: json.RawMessage(`{"type":"tool_result","tool_use_id":"c1","content":"the output"}`)}
	mustInsert(f, context.Background(), ops.InsertArgs{SessionID: sid, AfterID: "m1", Messages: []model.NewMessage{{Role: model.RoleTool, Content: "[tool result] the output", ReadParts: []model.Part{part}}}})
	list, err := f.Svc.Operations(sid)
	if err != nil || len(list) != 1 || len(list[0].Payload.Messages) != 1 {
		t.Fatalf("operations %+v, %v", list, err)
	}
	got := list[0].Payload.Messages[0]
	if want := model.MarshalParts([]model.Part{part}); string(got.Parts) != string(want) || got.ReadParts != nil {
		t.Errorf("the insert keeps parts %s (as read %v), want %s", got.Parts, got.ReadParts, want)
	}
}
