package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"weft/ops"
	"weft/ops/reads"
)

// TestCallRooms: weft call reaches the rooms as the other faces do:
// create_session per (room, interface), get_session_by_room, and the
// filters of list_sessions, with key=value arguments.
func TestCallRooms(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "weft.db")
	call := func(args ...string) (string, int, error) {
		t.Helper()
		return weft(t, db, append([]string{"call"}, args...)...)
	}
	var first, again ops.CreateSessionResult
	out, code, err := call("create_session", "room=#general", "interface=irc")
	if code != 0 || json.Unmarshal([]byte(out), &first) != nil || first.Existing {
		t.Fatalf("create_session: %d %v\n%s", code, err, out)
	}
	out, _, _ = call("create_session", `{"room":"#general","interface":"irc","title":"again"}`)
	if json.Unmarshal([]byte(out), &again) != nil || !again.Existing || again.SessionID != first.SessionID || again.Title != "#general (irc)" {
		t.Errorf("create_session of the same pair: %s", out)
	}
	if _, code, _ := call("create_session", "room=#general", "interface=cli"); code != 0 {
		t.Fatalf("create_session on another interface: %d", code)
	}
	var room reads.SessionByRoomResult
	out, _, _ = call("get_session_by_room", "room=#general")
	if json.Unmarshal([]byte(out), &room) != nil || room.Total != 2 || len(room.Sessions) != 2 {
		t.Errorf("get_session_by_room room=#general: %s", out)
	}
	out, _, _ = call("get_session_by_room", "room=#general", "interface=irc")
	if json.Unmarshal([]byte(out), &room) != nil || room.SessionID != first.SessionID {
		t.Errorf("get_session_by_room room=#general interface=irc: %s", out)
	}
	var list reads.ListSessionsResult
	out, _, _ = call("list_sessions", "interface=cli", "since=2000-01-01", "until=now")
	if json.Unmarshal([]byte(out), &list) != nil || len(list.Sessions) != 1 || list.Sessions[0].Interface != "cli" {
		t.Errorf("list_sessions interface=cli: %s", out)
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"get_session_by_room", "room=#nowhere"}, `room "#nowhere" has no session`},
		{[]string{"list_sessions", "since=the other day"}, `since: cannot read "the other day" as a time`},
		{[]string{"search_sessions", "query=x", "since=now", "until=2000-01-01"}, "is after until"},
	} {
		_, code, err := call(tt.args...)
		if code != 1 || err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("weft call %v: exit %d, %v; want 1 saying %q", tt.args, code, err, tt.says)
		}
	}
}
