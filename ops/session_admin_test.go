package ops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRenameSession(t *testing.T) {
	f := newFixture(t)
	sid := f.session("before", 3)
	ch, done := f.svc.Subscribe()
	defer done()
	r := f.mustCall("rename_session", fmt.Sprintf(`{"session_id":%q,"title":"  after  "}`, sid)).(SessionChangeResult)
	if r.Title != "after" || r.Version != 3 {
		t.Fatalf("rename: %+v", r)
	}
	if evs := events(ch); len(evs) != 1 || evs[0].Kind != EventSessionChanged || evs[0].Title != "after" {
		t.Errorf("events %+v: want one change naming the new title", evs)
	}
	// The same title again writes nothing.
	before := f.fileHash()
	if r := f.mustCall("rename_session", fmt.Sprintf(`{"session_id":%q,"title":"after"}`, sid)).(SessionChangeResult); r.Version != 3 || f.fileHash() != before {
		t.Errorf("renaming to the same title wrote: %+v", r)
	}
	if _, err := f.call("rename_session", fmt.Sprintf(`{"session_id":%q,"title":"x","expected_version":1}`, sid)); !errors.Is(err, ErrConflict) || f.fileHash() != before {
		t.Errorf("a stale rename: %v", err)
	}
}

func TestDeleteSession(t *testing.T) {
	f := newFixture(t)
	keep := f.session("keep", 3)
	gone := f.session("gone", 3)
	f.mustCall("digest_messages", fmt.Sprintf(`{"session_id":%q,"start_idx":0,"end_idx":1,"summary":"x"}`, gone))
	for _, tt := range []struct {
		args string
		kind error
		says string
	}{
		{`{"session_id":""}`, ErrInvalid, "session_id is empty"},
		{`{"session_id":"gone"}`, ErrInvalid, "by prefix or title"},
		{`{"session_id":"0000000000000000"}`, ErrNotFound, "not found"},
		{fmt.Sprintf(`{"session_id":%q,"expected_version":1}`, gone), ErrConflict, "is at version"},
	} {
		before := f.fileHash()
		if _, err := f.call("delete_session", tt.args); !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.says) {
			t.Errorf("delete_session %s: %v, want %v saying %q", tt.args, err, tt.kind, tt.says)
		}
		if f.fileHash() != before {
			t.Errorf("delete_session %s was refused but changed the file", tt.args)
		}
	}
	ch, done := f.svc.Subscribe()
	defer done()
	r := f.mustCall("delete_session", fmt.Sprintf(`{"session_id":%q}`, gone)).(SessionChangeResult)
	if r.SessionID != gone || r.Title != "gone" {
		t.Errorf("delete: %+v", r)
	}
	if evs := events(ch); len(evs) != 1 || evs[0].Kind != EventSessionDeleted || evs[0].SessionID != gone || evs[0].Title != "gone" {
		t.Errorf("events %+v", evs)
	}
	if list := f.sessions(); len(list) != 1 || list[0].SessionID != keep {
		t.Errorf("after the delete: %+v", list)
	}
	if _, _, err := f.svc.View(gone); !errors.Is(err, ErrNotFound) {
		t.Errorf("the deleted session still reads: %v", err)
	}
	// The default session is no longer the deleted one.
	if info, _, err := f.svc.View(""); err != nil || info.ID != keep {
		t.Errorf("the default session is %s (%v)", info.ID, err)
	}
	f.reopen()
	if list := f.sessions(); len(list) != 1 {
		t.Errorf("after reopening: %d sessions", len(list))
	}
}
