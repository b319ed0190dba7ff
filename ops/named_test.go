package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"weft/model"
)

// TestStaleVersionWithIDs: an edit that names its items by ID, made
// against an older version, goes through on exactly those items when
// what changed since left them alone, and is refused, saying what
// changed, when a change touched them. With indices any change still
// refuses it.
func TestStaleVersionWithIDs(t *testing.T) {
	agent := WithAuthor(context.Background(), "claude-code")
	ids := []model.ItemID{"m5", "m6", "m7"}
	idx := func(n int) *int { return &n }
	type edit func(f *fixture, v uint64) error
	digest := func(f *fixture, v uint64) error {
		_, err := f.svc.DigestMessages(context.Background(), DigestArgs{Selection: Selection{IDs: ids}, Summary: "the three", EditOptions: EditOptions{ExpectedVersion: &v}})
		return err
	}
	cases := []struct {
		name   string
		change func(f *fixture, sid string) // the agent's change after v0
		edit   edit
		ok     bool
		says   string
	}{
		{"an insert elsewhere", func(f *fixture, sid string) {
			f.mustInsert(agent, InsertArgs{AfterIdx: idx(0), Messages: []model.NewMessage{{Role: model.RoleUser, Content: "agent's note"}}})
		}, digest, true, ""},
		{"a snip elsewhere and an append", func(f *fixture, sid string) {
			if _, err := f.svc.SnipMessages(agent, SnipArgs{Selection: Selection{StartIdx: idx(1), EndIdx: idx(2)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.AppendMessages(agent, AppendMessagesArgs{Messages: []model.NewMessage{{Role: model.RoleUser, Content: "later"}}}); err != nil {
				t.Fatal(err)
			}
		}, digest, true, ""},
		{"a digest over one of them", func(f *fixture, sid string) {
			if _, err := f.svc.DigestMessages(agent, DigestArgs{Selection: Selection{IDs: []model.ItemID{"m7", "m8"}}, Summary: "agent's"}); err != nil {
				t.Fatal(err)
			}
		}, digest, false, "digest"},
		{"a tag on one of them", func(f *fixture, sid string) {
			if _, err := f.svc.TagMessages(agent, TagArgs{Selection: Selection{IDs: []model.ItemID{"m6"}}, Tags: []string{"x"}}); err != nil {
				t.Fatal(err)
			}
		}, digest, false, "acts on m6"},
		{"an insert among them", func(f *fixture, sid string) {
			f.mustInsert(agent, InsertArgs{AfterID: "m5", Messages: []model.NewMessage{{Role: model.RoleUser, Content: "wedged"}}})
		}, digest, false, "insert"},
		{"an old snip among them switched off", func(f *fixture, sid string) {
			// Made before v0 (see below), so the operator's m5..m7
			// stood together without m6; switching it off puts m6 back
			// among them.
			list, _ := f.svc.Operations(sid)
			off := false
			if _, err := f.svc.ToggleOperation(agent, ToggleArgs{OperationArgs: OperationArgs{OperationID: list[0].ID}, Active: &off}); err != nil {
				t.Fatal(err)
			}
		}, func(f *fixture, v uint64) error {
			two := []model.ItemID{"m5", "m7"}
			_, err := f.svc.SnipMessages(context.Background(), SnipArgs{Selection: Selection{IDs: two}, EditOptions: EditOptions{ExpectedVersion: &v}})
			return err
		}, false, "no longer stand together"},
		{"indices and any change", func(f *fixture, sid string) {
			f.mustInsert(agent, InsertArgs{AfterIdx: idx(0), Messages: []model.NewMessage{{Role: model.RoleUser, Content: "agent's note"}}})
		}, func(f *fixture, v uint64) error {
			_, err := f.svc.DigestMessages(context.Background(), DigestArgs{Selection: Selection{StartIdx: idx(4), EndIdx: idx(6)}, Summary: "x", EditOptions: EditOptions{ExpectedVersion: &v}})
			return err
		}, false, "insert of 1 message after 0 by claude-code"},
		{"an insert after a named anchor, elsewhere changed", func(f *fixture, sid string) {
			f.mustInsert(agent, InsertArgs{AfterIdx: idx(0), Messages: []model.NewMessage{{Role: model.RoleUser, Content: "agent's note"}}})
		}, func(f *fixture, v uint64) error {
			_, err := f.svc.InsertMessages(context.Background(), InsertArgs{AfterID: "m6", Messages: []model.NewMessage{{Role: model.RoleUser, Content: "mine"}}, EditOptions: EditOptions{ExpectedVersion: &v}})
			return err
		}, true, ""},
		{"an insert after an anchor digested since", func(f *fixture, sid string) {
			if _, err := f.svc.DigestMessages(agent, DigestArgs{Selection: Selection{IDs: []model.ItemID{"m6"}}, Summary: "agent's"}); err != nil {
				t.Fatal(err)
			}
		}, func(f *fixture, v uint64) error {
			_, err := f.svc.InsertMessages(context.Background(), InsertArgs{AfterID: "m6", Messages: []model.NewMessage{{Role: model.RoleUser, Content: "mine"}}, EditOptions: EditOptions{ExpectedVersion: &v}})
			return err
		}, false, "acts on m6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			sid := f.session("named", 12)
			if strings.Contains(c.name, "switched off") {
				if _, err := f.svc.SnipMessages(agent, SnipArgs{Selection: Selection{IDs: []model.ItemID{"m6"}}}); err != nil {
					t.Fatal(err)
				}
			}
			info, _, _ := f.svc.View(sid)
			v0 := info.Version
			c.change(f, sid)
			before, _ := f.svc.Operations(sid)
			err := c.edit(f, v0)
			after, _ := f.svc.Operations(sid)
			if !c.ok {
				if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), c.says) {
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
	f := newFixture(t)
	sid := f.session("ahead", 4)
	info, _, _ := f.svc.View(sid)
	v := info.Version + 3
	_, err := f.svc.SnipMessages(context.Background(), SnipArgs{Selection: Selection{IDs: []model.ItemID{"m2"}}, EditOptions: EditOptions{ExpectedVersion: &v}})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "ahead") {
		t.Fatalf("want a conflict saying the version is ahead, got %v", err)
	}
}

// TestStaleIndicesAreRefusedOverTheTools: through the tool registry (what
// MCP and HTTP call), a stale expected_version with indices is refused
// as before, and with ids it is checked against the named items.
func TestStaleIndicesAreRefusedOverTheTools(t *testing.T) {
	f := newFixture(t)
	f.session("tools", 10)
	v0 := f.version("")
	f.mustCall("insert_messages", `{"after_idx":0,"messages":[{"role":"user","content":"agent"}]}`)
	if _, err := f.call("snip_messages", fmt.Sprintf(`{"start_idx":4,"end_idx":5,"expected_version":%d}`, v0)); !errors.Is(err, ErrConflict) {
		t.Fatalf("indices with a stale version: want a conflict, got %v", err)
	}
	if _, err := f.call("snip_messages", fmt.Sprintf(`{"ids":["m4","m5"],"expected_version":%d}`, v0)); err != nil {
		t.Fatalf("ids with a stale version, untouched since: %v", err)
	}
	if d := describeTool(t, "snip_messages"); !strings.Contains(d, "With ids (or after_id) only a change to the named items does") {
		t.Errorf("snip_messages' expected_version does not say how ids are checked: %s", d)
	}
}

func (f *fixture) mustInsert(ctx context.Context, a InsertArgs) {
	f.t.Helper()
	if _, err := f.svc.InsertMessages(ctx, a); err != nil {
		f.t.Fatal(err)
	}
}

// describeTool returns the description of a tool's expected_version
// argument, as its schema (MCP, HTTP) carries it.
func describeTool(t *testing.T, tool string) string {
	t.Helper()
	f, ok := toolArgs(t, tool).FieldByName("ExpectedVersion")
	if !ok {
		t.Fatalf("%s takes no expected_version", tool)
	}
	return f.Tag.Get("jsonschema")
}
