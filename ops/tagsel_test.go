package ops_test

import (
	"fmt"
	"strings"
	"testing"

	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/tools/toolstest"
)

// tagged makes a session of 12 messages with db on m3, m4 and m8 and
// auth on m6.
func tagged(t *testing.T) (*toolstest.Fixture, string) {
	t.Helper()
	f := toolstest.New(t)
	sid := f.Session("tagged", 12)
	f.MustCall("tag_messages", `{"ids":["m3","m4","m8"],"tags":["db"]}`)
	f.MustCall("tag_messages", `{"ids":["m6"],"tags":["auth"]}`)
	return f, sid
}

// opOf is the operation an editing tool's result names.
func opOf(t *testing.T, res any) string {
	t.Helper()
	switch r := res.(type) {
	case ops.OpResult:
		return r.OperationID
	case ops.TagResult:
		return r.OperationID
	case ops.SummarizeResult:
		return r.OperationID
	}
	t.Fatalf("result %T names no operation", res)
	return ""
}

func TestEditsSelectByTag(t *testing.T) {
	const base = "m1 m2 m3{db} m4{db} m5 m6{auth} m7 m8{db} m9 m10 m11 m12"
	tests := []struct {
		name, tool string
		// args select with tag:NAME (%s); same with the items' IDs.
		args, byTag, same string
		want              string // the view after, $ the operation
	}{
		{"tag", "tag_messages", `{"ids":%s,"tags":["review"]}`, `["tag:db"]`, `["m3","m4","m8"]`,
			"m1 m2 m3{db,review} m4{db,review} m5 m6{auth} m7 m8{db,review} m9 m10 m11 m12"},
		{"digest", "digest_messages", `{"ids":%s,"summary":"the database talk"}`, `["tag:db"]`, `["m3","m4","m8"]`,
			"m1 m2 [digest:$] $/0 m5 m6{auth} m7 m9 m10 m11 m12"},
		{"revise", "revise_messages", `{"ids":%s,"replacements":[{"role":"user","content":"use postgres"}]}`, `["tag:db"]`, `["m3","m4","m8"]`,
			"m1 m2 [revise:$] $/0 m5 m6{auth} m7 m9 m10 m11 m12"},
		{"snip", "snip_messages", `{"ids":%s}`, `["tag:auth"]`, `["m6"]`,
			"m1 m2 m3{db} m4{db} m5 [snip:$] m7 m8{db} m9 m10 m11 m12"},
		{"snip mixed", "snip_messages", `{"ids":%s}`, `["m10","tag:auth"]`, `["m6","m10"]`,
			"m1 m2 m3{db} m4{db} m5 [snip:$] m7 m8{db} m9 m11 m12"},
		{"mixed overlapping", "snip_messages", `{"ids":%s}`, `["m4","tag:db","m9"]`, `["m3","m4","m8","m9"]`,
			"m1 m2 [snip:$] m5 m6{auth} m7 m10 m11 m12"},
		{"two tags", "tag_messages", `{"ids":%s,"tags":["seen"]}`, `["tag:auth","tag:db"]`, `["m3","m4","m6","m8"]`,
			"m1 m2 m3{db,seen} m4{db,seen} m5 m6{auth,seen} m7 m8{db,seen} m9 m10 m11 m12"},
		{"case ignored", "snip_messages", `{"ids":%s}`, `["tag:DB"]`, `["m3","m4","m8"]`,
			"m1 m2 [snip:$] m5 m6{auth} m7 m9 m10 m11 m12"},
		// A tag's items stand where the entry stands, in thread order.
		{"resequence", "resequence_messages", `{"ids":%s}`, `["tag:auth","tag:db"]`, `["m6","m3","m4","m8"]`,
			"m1 m2 [resequence:$] m6{auth} m3{db} m5 m4{db} m7 m8{db} m9 m10 m11 m12"},
		{"summarize stored", "summarize_message_range", `{"ids":%s,"source":"extractive","store":true}`, `["tag:db"]`, `["m3","m4","m8"]`,
			"m1 m2 [digest:$] $/0 m5 m6{auth} m7 m9 m10 m11 m12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, sid := tagged(t)
			if got := opstest.Render(f.View(sid)); got != base {
				t.Fatalf("before: %s", got)
			}
			op := opOf(t, f.MustCall(tt.tool, fmt.Sprintf(tt.args, tt.byTag)))
			got := opstest.Render(f.View(sid))
			if want := strings.ReplaceAll(tt.want, "$", op); got != want {
				t.Errorf("by tag\n got: %s\nwant: %s", got, want)
			}
			// The same edit naming the items by ID gives the same thread.
			g, gsid := tagged(t)
			gop := opOf(t, g.MustCall(tt.tool, fmt.Sprintf(tt.args, tt.same)))
			if ref := strings.ReplaceAll(opstest.Render(g.View(gsid)), gop, op); got != ref {
				t.Errorf("by tag and by ID differ\n by tag: %s\n by ID:  %s", got, ref)
			}
		})
	}
}

func TestTagCountsTheItemsATagSelects(t *testing.T) {
	f, _ := tagged(t)
	r := f.MustCall("tag_messages", `{"ids":["m1","tag:db"],"tags":["x","y"]}`).(ops.TagResult)
	if r.MessageCount != 4 || r.TagCount != 2 {
		t.Errorf("result %+v: want 4 messages, 2 tags", r)
	}
}

func TestSelectByUnknownTagIsRefused(t *testing.T) {
	f, sid := tagged(t)
	plain := f.Session("no tags", 4)
	const tags = "the session's tags: auth, db"
	tests := []struct {
		tool, args string
		says       string
	}{
		{"snip_messages", `{"ids":["tag:dbx"]}`, `ids: no item of the effective thread carries tag "dbx"; ` + tags},
		{"digest_messages", `{"ids":["m1","tag:nope"],"summary":"s"}`, `carries tag "nope"; ` + tags},
		{"revise_messages", `{"ids":["tag:db","tag:nope"],"replacements":[]}`, `carries tag "nope"`},
		{"tag_messages", `{"ids":["tag:nope"],"tags":["x"]}`, `carries tag "nope"; ` + tags},
		{"resequence_messages", `{"ids":["tag:nope","m1"]}`, `carries tag "nope"`},
		{"summarize_message_range", `{"ids":["tag:nope"],"source":"extractive","store":true}`, `carries tag "nope"`},
		{"snip_messages", `{"ids":["tag:"]}`, `ids: "tag:": a tag is empty`},
		{"snip_messages", `{"ids":["tag:a b"]}`, `has a space`},
		{"snip_messages", `{"ids":["tag:db"],"start_idx":1,"end_idx":2}`, "not both"},
		{"snip_messages", fmt.Sprintf(`{"session_id":%q,"ids":["tag:db"]}`, plain), `carries tag "db"; the session has no tags (tag_messages attaches them)`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			args := tt.args
			if !strings.Contains(args, "session_id") {
				args = fmt.Sprintf(`{"session_id":%q,`, sid) + args[1:]
			}
			f.CheckRefusal(t, sid, tt.tool, args, ops.ErrInvalid, tt.says)
		})
	}
}

func TestSelectByTagSeesTheEffectiveThread(t *testing.T) {
	f, sid := tagged(t)
	// Snipped, the db items carry the tag no more: nothing selects them.
	snip := opOf(t, f.MustCall("snip_messages", `{"ids":["tag:db"]}`))
	f.CheckRefusal(t, sid, "snip_messages", `{"ids":["tag:db"]}`, ops.ErrInvalid, `no item of the effective thread carries tag "db"; the session's tags: auth`)
	// Switched off, the snip gives them back, and the tag selects them.
	f.MustCall("toggle_operation", fmt.Sprintf(`{"operation_id":%q,"active":false}`, snip))
	op := opOf(t, f.MustCall("digest_messages", `{"ids":["tag:db"],"summary":"s"}`))
	if got, want := opstest.Render(f.View(sid)), "m1 m2 [digest:"+op+"] "+op+"/0 m5 m6{auth} m7 m9 m10 m11 m12"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSelectByTagWithAnOlderVersion(t *testing.T) {
	f, sid := tagged(t)
	v := f.Version(sid)
	f.MustCall("tag_messages", `{"ids":["m11"],"tags":["later"]}`) // a change to other items
	// Named by ID, the items are checked, and the edit goes through.
	if _, err := f.Call("tag_messages", fmt.Sprintf(`{"ids":["m3"],"tags":["x"],"expected_version":%d}`, v)); err != nil {
		t.Fatalf("by ID: %v", err)
	}
	// By tag, what carries it may have changed: any change refuses.
	f.CheckRefusal(t, sid, "snip_messages", fmt.Sprintf(`{"ids":["tag:db"],"expected_version":%d}`, v), ops.ErrConflict, "since")
	f.CheckRefusal(t, sid, "summarize_message_range", fmt.Sprintf(`{"ids":["tag:db"],"source":"extractive","store":true,"expected_version":%d}`, v), ops.ErrConflict, "since")
	// At the session's version it goes through.
	if _, err := f.Call("snip_messages", fmt.Sprintf(`{"ids":["tag:db"],"expected_version":%d}`, f.Version(sid))); err != nil {
		t.Fatalf("at the version: %v", err)
	}
}
