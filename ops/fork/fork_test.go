package fork_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"weft/ops"
	"weft/ops/fork"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// A fork's thread is the source's effective thread up to the item, its
// operations carried as far as they apply; the source is unchanged, and
// the fork says where it came from.
func TestForkSession(t *testing.T) {
	tests := []struct {
		name  string
		edits []string // tool calls on the source: tool, then its JSON
		at    int
	}{
		{"a plain thread", nil, 4},
		{"a digest before the fork", []string{"digest_messages", `{"start_idx":1,"end_idx":3,"summary":"s"}`}, 3},
		{"a digest at the fork's end", []string{"digest_messages", `{"start_idx":2,"end_idx":7,"summary":"s"}`}, 2},
		{"a snip across the fork", []string{"snip_messages", `{"start_idx":3,"end_idx":6}`}, 4},
		{"an insert before, a tag across", []string{"insert_messages", `{"after_idx":1,"messages":[{"role":"system","content":"note"}]}`, "tag_messages", `{"start_idx":2,"end_idx":9,"tags":["db"]}`}, 5},
		{"a resequence within", []string{"resequence_messages", `{"new_order":[3,1,2]}`}, 4},
		{"a resequence across the fork", []string{"resequence_messages", `{"new_order":[8,2,3,4,5,6,7,1]}`}, 3},
		{"a revise of a summary", []string{"digest_messages", `{"start_idx":1,"end_idx":2,"summary":"s"}`, "revise_messages", `{"start_idx":1,"end_idx":1,"replacements":[{"role":"system","content":"better"}]}`}, 2},
		{"the whole thread", []string{"snip_messages", `{"start_idx":0,"end_idx":0}`}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := toolstest.New(t)
			sid := f.Session("source", 12)
			for i := 0; i < len(tt.edits); i += 2 {
				f.MustCall(tt.edits[i], tt.edits[i+1])
			}
			before := f.View(sid)
			src := opstest.Render(before)
			args := `{}`
			at := tt.at
			if at >= 0 {
				args = fmt.Sprintf(`{"at_idx":%d}`, at)
			} else {
				at = len(before.Items) - 1
			}
			res := f.MustCall("fork_session", args).(fork.Result)
			fv := f.View(res.SessionID)
			if len(fv.Items) != at+1 || res.Items != at+1 {
				t.Fatalf("the fork shows %d items (says %d), want %d: %s", len(fv.Items), res.Items, at+1, opstest.Render(fv))
			}
			want, got := items(f, sid, at), items(f, res.SessionID, at)
			for i := range got {
				a, b := want[i], got[i]
				if a.Role != b.Role || a.Content != b.Content || strings.Join(a.Tags, ",") != strings.Join(b.Tags, ",") {
					t.Errorf("item %d: the fork has %s %q %v, the source %s %q %v", i, b.Role, b.Content, b.Tags, a.Role, a.Content, a.Tags)
				}
			}
			if got := opstest.Render(f.View(sid)); got != src {
				t.Errorf("the source changed: %s, was %s", got, src)
			}
			snap, err := f.Svc.Snapshot(res.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			info := snap.Info
			if info.ForkOf == nil || info.ForkOf.SessionID != sid || info.ForkOf.At != before.ID(before.Items[at]) || info.ForkOf.Index != at {
				t.Errorf("the fork's record says it came from %+v", info.ForkOf)
			}
			// It survives a reopen, and takes writes of its own.
			f.Reopen()
			if got := f.View(res.SessionID); len(got.Items) != at+1 {
				t.Errorf("after a reopen the fork shows %s", opstest.Render(got))
			}
			f.MustCall("append_messages", fmt.Sprintf(`{"session_id":%q,"messages":[{"role":"user","content":"another path"}]}`, res.SessionID))
			if got := opstest.Render(f.View(sid)); got != src {
				t.Errorf("the fork's append reached the source: %s", got)
			}
		})
	}
}

// Bad requests are refused, and nothing is made.
func TestForkSessionRefuses(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("source", 6)
	empty := f.MustCall("create_session", `{"title":"empty"}`).(ops.CreateSessionResult).SessionID
	for _, tc := range []struct{ args, want string }{
		{fmt.Sprintf(`{"session_id":%q,"at_idx":6}`, sid), "outside the thread"},
		{fmt.Sprintf(`{"session_id":%q,"at_idx":-1}`, sid), "outside the thread"},
		{fmt.Sprintf(`{"session_id":%q,"at":"m99"}`, sid), "not in session"},
		{fmt.Sprintf(`{"session_id":%q,"at":"m2","at_idx":1}`, sid), "not both"},
		{fmt.Sprintf(`{"session_id":%q}`, empty), "nothing to fork"},
		{`{"session_id":"no such session"}`, "no such session"},
	} {
		n := len(f.Sessions())
		_, err := f.Call("fork_session", tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.args, err, tc.want)
		}
		if len(f.Sessions()) != n {
			t.Errorf("%s: a refused fork made a session", tc.args)
		}
	}
}

// items are a session's effective items 0..last as get_message_range
// gives them.
func items(f *toolstest.Fixture, sid string, last int) []reads.MessageOut {
	res, err := reads.GetMessageRange(f.Svc, context.Background(), reads.MessageRangeArgs{SessionID: sid, StartIdx: new(0), EndIdx: new(last), MaxTokens: new(reads.NoLimit)})
	if err != nil {
		panic(err)
	}
	return res.Messages
}
