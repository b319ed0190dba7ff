package ops_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/tools/toolstest"
)

func TestSeedEditsThroughTheService(t *testing.T) {
	tests := []struct {
		tool, args, want string
	}{
		{"digest_messages", `{"start_idx":3,"end_idx":8,"summary":"Discussed auth options; chose JWT"}`, "m1 m2 m3 [digest:$] $/0 m10 m11 m12"},
		{"snip_messages", `{"start_idx":5,"end_idx":8}`, "m1 m2 m3 m4 m5 [snip:$] m10 m11 m12"},
		{"resequence_messages", `{"new_order":[8,9,5,6,7,10,11]}`, "m1 m2 m3 m4 m5 [resequence:$] m9 m10 m6 m7 m8 m11 m12"},
		{"insert_messages", `{"after_idx":5,"messages":[{"role":"assistant","content":"(Context: user later clarified they meant PostgreSQL)"}]}`, "m1 m2 m3 m4 m5 m6 [insert:$] $/0 m7 m8 m9 m10 m11 m12"},
		{"insert_messages", `{"after_idx":-1,"messages":[{"role":"system","content":"Be brief."}]}`, "[insert:$] $/0 m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12"},
		{"revise_messages", `{"start_idx":5,"end_idx":10,"replacements":[{"role":"user","content":"Refined question about auth"},{"role":"assistant","content":"Here's the JWT implementation..."}]}`, "m1 m2 m3 m4 m5 [revise:$] $/0 $/1 m12"},
		{"tag_messages", `{"start_idx":5,"end_idx":6,"tags":["database-design"]}`, "m1 m2 m3 m4 m5 m6{database-design} m7{database-design} m8 m9 m10 m11 m12"},
		{"snip_messages", `{"ids":["m2","m4"]}`, "m1 [snip:$] m3 m5 m6 m7 m8 m9 m10 m11 m12"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			f := toolstest.New(t)
			sid := f.Session("seed", 12)
			res := f.MustCall(tt.tool, tt.args)
			opID := ""
			switch r := res.(type) {
			case ops.OpResult:
				opID = r.OperationID
			case ops.TagResult:
				opID = r.OperationID
				if !r.Success || r.TagCount != 1 || r.MessageCount != 2 {
					t.Errorf("tag result %+v", r)
				}
			}
			if got, want := opstest.Render(f.View(sid)), strings.ReplaceAll(tt.want, "$", opID); got != want {
				t.Errorf("view\n got: %s\nwant: %s", got, want)
			}
			// Revert restores the thread exactly, and survives a reopen.
			f.MustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, opID))
			f.Reopen()
			if got := opstest.Render(f.View(sid)); got != "m1 m2 m3 m4 m5 m6 m7 m8 m9 m10 m11 m12" {
				t.Errorf("after revert: %s", got)
			}
		})
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("bad input", 12)
	first := f.MustCall("snip_messages", `{"start_idx":0,"end_idx":0}`).(ops.OpResult)
	f.MustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, first.OperationID))

	tests := []struct {
		tool, args string
		kind       error
		says       string
	}{
		{"digest_messages", `{"start_idx":3,"end_idx":40,"summary":"s"}`, ops.ErrInvalid, "end_idx 40 is past the end of the thread (12 items: 0..11)"},
		{"digest_messages", `{"start_idx":8,"end_idx":3,"summary":"s"}`, ops.ErrInvalid, "start_idx 8 is after end_idx 3"},
		{"digest_messages", `{"start_idx":-1,"end_idx":3,"summary":"s"}`, ops.ErrInvalid, "start_idx -1 is negative"},
		{"digest_messages", `{"start_idx":3,"summary":"s"}`, ops.ErrInvalid, "end_idx is missing"},
		{"digest_messages", `{"summary":"s"}`, ops.ErrInvalid, "nothing selected"},
		{"digest_messages", `{"start_idx":3,"end_idx":4,"summary":"   "}`, ops.ErrInvalid, "summary is empty"},
		{"digest_messages", `{"start_idx":3,"end_idx":4,"ids":["m1"],"summary":"s"}`, ops.ErrInvalid, "not both"},
		{"snip_messages", `{"ids":["m99"]}`, ops.ErrNotFound, `id "m99" is not in the effective thread`},
		{"snip_messages", `{"ids":["m3","m3"]}`, ops.ErrInvalid, `id "m3" is given twice`},
		{"snip_messages", `{"ids":["nope/0"]}`, ops.ErrNotFound, `id "nope/0"`},
		{"resequence_messages", `{"new_order":[5,5,6]}`, ops.ErrInvalid, "repeats index 5"},
		{"resequence_messages", `{"new_order":[5,6,7]}`, ops.ErrInvalid, "leaves every item where it is"},
		{"resequence_messages", `{"new_order":[5]}`, ops.ErrInvalid, "at least two"},
		{"resequence_messages", `{"new_order":[3,40]}`, ops.ErrInvalid, "index 40, outside the thread"},
		{"resequence_messages", `{"new_order":[3,-1]}`, ops.ErrInvalid, "index -1"},
		{"resequence_messages", `{"ids":["m4","m77"]}`, ops.ErrNotFound, `id "m77"`},
		{"insert_messages", `{"after_idx":5,"messages":[]}`, ops.ErrInvalid, "messages is empty"},
		{"insert_messages", `{"after_idx":5,"messages":[{"role":"robot","content":"x"}]}`, ops.ErrInvalid, `role "robot" is not one of`},
		{"insert_messages", `{"after_idx":12,"messages":[{"role":"user","content":"x"}]}`, ops.ErrInvalid, "after_idx 12 is outside the thread"},
		{"insert_messages", `{"after_id":"m40","messages":[{"role":"user","content":"x"}]}`, ops.ErrNotFound, `after_id "m40"`},
		{"insert_messages", `{"messages":[{"role":"user","content":"x"}]}`, ops.ErrInvalid, "give after_idx"},
		{"insert_messages", `{"after_idx":1,"messages":[{"role":"user","content":""}]}`, ops.ErrInvalid, "needs content"},
		{"tag_messages", `{"start_idx":1,"end_idx":2,"tags":[]}`, ops.ErrInvalid, "tags is empty"},
		{"tag_messages", `{"start_idx":1,"end_idx":2,"tags":["two words"]}`, ops.ErrInvalid, "has a space"},
		{"tag_messages", `{"start_idx":1,"end_idx":2,"tags":["ok"],"when_tags":[""]}`, ops.ErrInvalid, "when_tags: a tag is empty"},
		{"revise_messages", `{"start_idx":1,"end_idx":2,"replacements":[{"role":"","content":"x"}]}`, ops.ErrInvalid, "replacements[0]"},
		{"snip_messages", `{"start_idx":1,"end_idx":2,"expected_version":1}`, ops.ErrConflict, "since then"},
		{"snip_messages", `{"start_idx":1,"end_idx":2,"expected_version":999}`, ops.ErrConflict, "ahead of session"},
		{"snip_messages", `{"session_id":"nosuchsession","start_idx":1,"end_idx":2}`, ops.ErrNotFound, `session "nosuchsession" not found`},
		{"snip_messages", `{"start_idx":"1","end_idx":2}`, ops.ErrInvalid, "argument start_idx must be an integer, not a JSON string"},
		{"snip_messages", `{"start":1,"end_idx":2}`, ops.ErrInvalid, `has no argument "start"`},
		{"snip_messages", `[1,2]`, ops.ErrInvalid, "takes a JSON object"},
		{"snip_messages", `{"start_idx":1,`, ops.ErrInvalid, "arguments"},
		{"snip_messages", `{"start_idx":1,"end_idx":2} {}`, ops.ErrInvalid, "unexpected data"},
		{"revert_operation", `{"operation_id":"nope"}`, ops.ErrNotFound, `operation "nope" not found`},
		{"revert_operation", fmt.Sprintf(`{"operation_id":%q}`, first.OperationID), ops.ErrInvalid, "already reverted"},
		{"toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":true}`, first.OperationID), ops.ErrInvalid, "cannot be switched"},
		{"toggle_operation", fmt.Sprintf(`{"operation_id":%q}`, first.OperationID), ops.ErrInvalid, "active is missing"},
		{"set_active_tags", `{"tags":["a b"]}`, ops.ErrInvalid, "has a space"},
		{"append_messages", `{"messages":[]}`, ops.ErrInvalid, "messages is empty"},
		{"append_messages", `{"messages":[{"role":"user","content":"ok"},{"role":"user"}]}`, ops.ErrInvalid, "messages[1]"},
		{"add_turn", `{"query":" "}`, ops.ErrInvalid, "query is empty"},
		{"create_session", `{"title":""}`, ops.ErrInvalid, "title is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			f.CheckRefusal(t, sid, tt.tool, tt.args, tt.kind, tt.says)
		})
	}
}

func TestConflictSaysWhatChanged(t *testing.T) {
	f := toolstest.New(t)
	f.Session("conflict", 12)
	v0 := f.Version("")
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	start, end := 3, 5
	if _, err := f.Svc.DigestMessages(ctx, ops.DigestArgs{Selection: ops.Selection{StartIdx: &start, EndIdx: &end}, Summary: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.Call("snip_messages", fmt.Sprintf(`{"start_idx":3,"end_idx":4,"expected_version":%d}`, v0))
	if !errors.Is(err, ops.ErrConflict) {
		t.Fatalf("want a conflict, got %v", err)
	}
	for _, want := range []string{fmt.Sprintf("not %d", v0), "digest of 3–5 by claude-code"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("conflict %q does not say %q", err, want)
		}
	}
	// With the current version the same edit goes through.
	v1 := v0 + 1
	if _, err := f.Call("snip_messages", fmt.Sprintf(`{"start_idx":3,"end_idx":4,"expected_version":%d}`, v1)); err != nil {
		t.Fatal(err)
	}
}

func TestEventsAfterEveryWrite(t *testing.T) {
	f := toolstest.New(t)
	events, stop := f.Svc.Subscribe()
	defer stop()
	sid := f.Session("events", 4)
	ctx := ops.WithAuthor(context.Background(), "agent")
	start, end := 0, 1
	res, err := f.Svc.DigestMessages(ctx, ops.DigestArgs{Selection: ops.Selection{StartIdx: &start, EndIdx: &end}, Summary: "s"})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind   ops.EventKind
		author string
		what   string
	}{
		{ops.EventSessionCreated, "operator", "created events"},
		{ops.EventAppended, "operator", "4 messages appended"},
		{ops.EventOpCreated, "agent", "digest of 0–1"},
	}
	for _, w := range want {
		select {
		case e := <-events:
			if e.Kind != w.kind || e.Author != w.author || e.What != w.what || e.SessionID != sid {
				t.Errorf("event %+v, want %v by %s: %q", e, w.kind, w.author, w.what)
			}
			if e.Kind == ops.EventOpCreated && (e.OpID != res.OperationID || e.Version != res.Version) {
				t.Errorf("op event %+v does not match %+v", e, res)
			}
		case <-time.After(time.Second):
			t.Fatalf("no %s event", w.kind)
		}
	}
}

func TestToggleRevertRestore(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("toggle", 6)
	raw := opstest.Render(f.View(sid))
	d := f.MustCall("digest_messages", `{"start_idx":1,"end_idx":3,"summary":"s"}`).(ops.OpResult)
	digested := opstest.Render(f.View(sid))

	off := f.MustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":false}`, d.OperationID)).(ops.SuccessResult)
	if off.Status != model.StatusInactive || opstest.Render(f.View(sid)) != raw {
		t.Fatalf("toggled off: %+v, view %s", off, opstest.Render(f.View(sid)))
	}
	again := f.MustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":false}`, d.OperationID)).(ops.SuccessResult)
	if again.Version != off.Version {
		t.Errorf("switching off an operation that is off wrote a new version")
	}
	f.MustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":true}`, d.OperationID))
	if opstest.Render(f.View(sid)) != digested {
		t.Fatalf("toggled on: %s, want %s", opstest.Render(f.View(sid)), digested)
	}
	f.MustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, d.OperationID))
	if opstest.Render(f.View(sid)) != raw {
		t.Fatalf("reverted: %s", opstest.Render(f.View(sid)))
	}
	if _, err := f.Svc.RestoreOperation(context.Background(), ops.OperationArgs{OperationID: d.OperationID}); err != nil {
		t.Fatal(err)
	}
	if opstest.Render(f.View(sid)) != digested {
		t.Fatalf("restored: %s", opstest.Render(f.View(sid)))
	}
	snap, err := f.Svc.Snapshot(sid)
	if err != nil {
		t.Fatal(err)
	}
	if v := snap.View; len(snap.Ops) != 1 || v.Status[snap.Ops[0].ID] != model.StatusActive || len(v.Markers) != 1 || v.Markers[0].OpID != snap.Ops[0].ID || v.Markers[0].At != 1 {
		t.Fatalf("operations %+v, markers %+v", snap.Ops, v.Markers)
	}
}

func TestConditionalOperations(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("conditional", 6)
	f.MustCall("snip_messages", `{"start_idx":0,"end_idx":2,"when_tags":["brief"]}`)
	if got := opstest.Render(f.View(sid)); got != "m1 m2 m3 m4 m5 m6" {
		t.Fatalf("without the tag: %s", got)
	}
	f.MustCall("set_active_tags", `{"tags":["brief"]}`)
	// (The marker's operation ID may hold "m1": look for the item.)
	if got := opstest.Render(f.View(sid)); !strings.HasSuffix(got, "m4 m5 m6") || strings.Contains(got+" ", " m1 ") || strings.HasPrefix(got, "m1 ") {
		t.Fatalf("with the tag: %s", got)
	}
	snap, err := f.Svc.Snapshot(sid)
	if err != nil {
		t.Fatal(err)
	}
	active := 0
	for _, op := range snap.Ops {
		if st := snap.View.Status[op.ID]; st == model.StatusActive || st == model.StatusPartial {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("in effect: %d operations", active)
	}
	f.MustCall("set_active_tags", `{"tags":[]}`)
	if got := opstest.Render(f.View(sid)); got != "m1 m2 m3 m4 m5 m6" {
		t.Fatalf("tags cleared: %s", got)
	}
}

func TestAppendExtendsTheView(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("append", 4)
	f.MustCall("insert_messages", `{"after_idx":3,"messages":[{"role":"user","content":"inserted at the end"}]}`)
	before := f.View(sid)
	res := f.MustCall("add_turn", `{"query":"and now?","response":"now this"}`).(ops.AppendResult)
	if res.Appended != 2 || res.IDs[0] != "m5" || res.IDs[1] != "m6" {
		t.Fatalf("add_turn: %+v", res)
	}
	got := f.View(sid)
	if got.Version != res.Version {
		t.Errorf("view version %d, result version %d", got.Version, res.Version)
	}
	if opstest.Render(before) == opstest.Render(got) {
		t.Errorf("the view handed out earlier changed")
	}
	f.Reopen() // applying from scratch must agree with the extended view
	if fresh := f.View(sid); opstest.Render(fresh) != opstest.Render(got) || fresh.Tokens != got.Tokens {
		t.Fatalf("extended view %s (%d tokens), applied again %s (%d)", opstest.Render(got), got.Tokens, opstest.Render(fresh), fresh.Tokens)
	}
}

func TestSessionResolution(t *testing.T) {
	f := toolstest.New(t)
	a := f.Session("alpha", 1)
	f.Now = f.Now.Add(time.Minute)
	b := f.Session("beta", 2)
	for _, tt := range []struct{ ref, want string }{{"", b}, {a, a}, {a[:8], a}, {"alpha", a}} {
		info, _, err := f.Svc.View(tt.ref)
		if err != nil || info.ID != tt.want {
			t.Errorf("session %q resolved to %s (%v), want %s", tt.ref, info.ID, err, tt.want)
		}
	}
	f.Svc.SetDefaultSession(a)
	if info, _, _ := f.Svc.View(""); info.ID != a {
		t.Errorf("default with focus: %s, want %s", info.ID, a)
	}
}

// Reverting (or switching off) a digest whose summary was later revised
// leaves the revise standing over the digest's originals, as DESIGN's
// nesting rule has it; the result says so, naming the revise and what
// it stands over, and the thread shows the revise's replacement where
// the originals were.
func TestRevertSaysWhatStaysStanding(t *testing.T) {
	for _, how := range []string{"revert_operation", "toggle_operation"} {
		t.Run(how, func(t *testing.T) {
			f := toolstest.New(t)
			sid := f.Session("nested", 6)
			d := f.MustCall("digest_messages", `{"start_idx":1,"end_idx":3,"summary":"s"}`).(ops.OpResult)
			r := f.MustCall("revise_messages", fmt.Sprintf(`{"ids":[%q],"replacements":[{"role":"system","content":"better summary"}]}`, model.SyntheticID(d.OperationID, 0))).(ops.OpResult)
			args := fmt.Sprintf(`{"operation_id":%q}`, d.OperationID)
			if how == "toggle_operation" {
				args = fmt.Sprintf(`{"operation_id":%q,"active":false}`, d.OperationID)
			}
			res := f.MustCall(how, args).(ops.SuccessResult)
			want := fmt.Sprintf("m1 [revise:%s] %s/0 m5 m6", r.OperationID, r.OperationID)
			if got := opstest.Render(f.View(sid)); got != want {
				t.Errorf("view %s, want %s: the revise stands over the digest's originals", got, want)
			}
			if len(res.StillStanding) != 1 || res.StillStanding[0].OperationID != r.OperationID || res.StillStanding[0].OpType != model.OpRevise ||
				fmt.Sprint(res.StillStanding[0].Over) != "[m2 m3 m4]" {
				t.Errorf("still_standing %+v, want the revise over m2 m3 m4", res.StillStanding)
			}
			// With the revise gone too, the originals come back.
			f.MustCall("revert_operation", fmt.Sprintf(`{"operation_id":%q}`, r.OperationID))
			if got := opstest.Render(f.View(sid)); got != "m1 m2 m3 m4 m5 m6" {
				t.Errorf("both gone: %s", got)
			}
		})
	}
}
