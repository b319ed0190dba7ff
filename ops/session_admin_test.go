package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/tools/toolstest"
)

func TestRenameSession(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Session("before", 3)
	ch, done := f.Svc.Subscribe()
	defer done()
	r := f.MustCall("rename_session", fmt.Sprintf(`{"session_id":%q,"title":"  after  "}`, sid)).(ops.SessionChangeResult)
	if r.Title != "after" || r.Version != 3 {
		t.Fatalf("rename: %+v", r)
	}
	if evs := opstest.Events(ch); len(evs) != 1 || evs[0].Kind != ops.EventSessionChanged || evs[0].Title != "after" {
		t.Errorf("events %+v: want one change naming the new title", evs)
	}
	// The same title again writes nothing.
	before := f.FileHash()
	if r := f.MustCall("rename_session", fmt.Sprintf(`{"session_id":%q,"title":"after"}`, sid)).(ops.SessionChangeResult); r.Version != 3 || f.FileHash() != before {
		t.Errorf("renaming to the same title wrote: %+v", r)
	}
	if _, err := f.Call("rename_session", fmt.Sprintf(`{"session_id":%q,"title":"x","expected_version":1}`, sid)); !errors.Is(err, ops.ErrConflict) || f.FileHash() != before {
		t.Errorf("a stale rename: %v", err)
	}
}

func TestDeleteSession(t *testing.T) {
	f := toolstest.New(t)
	keep := f.Session("keep", 3)
	gone := f.Session("gone", 3)
	f.MustCall("digest_messages", fmt.Sprintf(`{"session_id":%q,"start_idx":0,"end_idx":1,"summary":"x"}`, gone))
	for _, tt := range []struct {
		args string
		kind error
		says string
	}{
		{`{"session_id":""}`, ops.ErrInvalid, "session_id is empty"},
		{`{"session_id":"gone"}`, ops.ErrInvalid, "by prefix or title"},
		{`{"session_id":"0000000000000000"}`, ops.ErrNotFound, "not found"},
		{fmt.Sprintf(`{"session_id":%q,"expected_version":1}`, gone), ops.ErrConflict, "is at version"},
	} {
		before := f.FileHash()
		if _, err := f.Call("delete_session", tt.args); !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.says) {
			t.Errorf("delete_session %s: %v, want %v saying %q", tt.args, err, tt.kind, tt.says)
		}
		if f.FileHash() != before {
			t.Errorf("delete_session %s was refused but changed the file", tt.args)
		}
	}
	ch, done := f.Svc.Subscribe()
	defer done()
	r := f.MustCall("delete_session", fmt.Sprintf(`{"session_id":%q}`, gone)).(ops.SessionChangeResult)
	if r.SessionID != gone || r.Title != "gone" {
		t.Errorf("delete: %+v", r)
	}
	if evs := opstest.Events(ch); len(evs) != 1 || evs[0].Kind != ops.EventSessionDeleted || evs[0].SessionID != gone || evs[0].Title != "gone" {
		t.Errorf("events %+v", evs)
	}
	if list := f.Sessions(); len(list) != 1 || list[0].SessionID != keep {
		t.Errorf("after the delete: %+v", list)
	}
	if _, _, err := f.Svc.View(gone); !errors.Is(err, ops.ErrNotFound) {
		t.Errorf("the deleted session still reads: %v", err)
	}
	// The default session is no longer the deleted one.
	if info, _, err := f.Svc.View(""); err != nil || info.ID != keep {
		t.Errorf("the default session is %s (%v)", info.ID, err)
	}
	f.Reopen()
	if list := f.Sessions(); len(list) != 1 {
		t.Errorf("after reopening: %d sessions", len(list))
	}
}
