package reads_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// roomFile makes five sessions an hour apart, each with one turn that
// says "deploy" but the last, and leaves the clock an hour after it:
// lobby/matrix, lobby/cli, an interface without a room (cli), a plain
// session, and a room without an interface (lobby).
func roomFile(t *testing.T) (f *toolstest.Fixture, ids map[string]string, start time.Time) {
	t.Helper()
	f = toolstest.New(t)
	start = f.Now
	ids = map[string]string{}
	for i, s := range []struct{ name, args string }{
		{"matrix", `{"room":"lobby","interface":"matrix"}`},
		{"cli", `{"room":"lobby","interface":"cli"}`},
		{"solo", `{"title":"solo","interface":"cli"}`},
		{"plain", `{"title":"plain"}`},
		{"bare", `{"room":"lobby"}`},
	} {
		f.Now = start.Add(time.Duration(i) * time.Hour)
		id := f.MustCall("create_session", s.args).(ops.CreateSessionResult).SessionID
		if s.name != "bare" {
			f.MustCall("add_turn", fmt.Sprintf(`{"session_id":%q,"query":"deploy %s"}`, id, s.name))
		}
		ids[s.name] = id
	}
	f.Now = start.Add(5 * time.Hour)
	return f, ids, start
}

func names(ids map[string]string, got []string) []string {
	out := make([]string, len(got))
	for i, id := range got {
		out[i] = id
		for name, x := range ids {
			if x == id {
				out[i] = name
			}
		}
	}
	return out
}

// withQuery is JSON arguments args with query "deploy" added.
func withQuery(args string) string {
	if args == "{}" {
		return `{"query":"deploy"}`
	}
	return `{"query":"deploy",` + strings.TrimPrefix(args, "{")
}

func TestListAndSearchSessionsFilters(t *testing.T) {
	t.Parallel()
	f, ids, start := roomFile(t)
	at := func(h int) string { return start.Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	tests := []struct {
		args string
		list []string // list_sessions
		hits []string // search_sessions query=deploy
	}{
		{`{}`, []string{"bare", "plain", "solo", "cli", "matrix"}, []string{"plain", "solo", "cli", "matrix"}},
		{`{"interface":"cli"}`, []string{"solo", "cli"}, []string{"solo", "cli"}},
		{`{"interface":" matrix "}`, []string{"matrix"}, []string{"matrix"}},
		{`{"interface":"irc"}`, []string{}, []string{}},
		{fmt.Sprintf(`{"since":%q}`, at(1)), []string{"bare", "plain", "solo", "cli"}, []string{"plain", "solo", "cli"}},
		{fmt.Sprintf(`{"until":%q}`, at(1)), []string{"cli", "matrix"}, []string{"cli", "matrix"}},
		{fmt.Sprintf(`{"since":%q,"until":%q}`, at(1), at(1)), []string{"cli"}, []string{"cli"}},
		{fmt.Sprintf(`{"since":%q,"until":%q,"interface":"cli"}`, at(1), at(3)), []string{"solo", "cli"}, []string{"solo", "cli"}},
		// Relative to the clock, five hours after the first.
		{`{"since":"-3h"}`, []string{"bare", "plain", "solo"}, []string{"plain", "solo"}},
		{`{"since":"90 minutes ago","interface":"cli"}`, []string{}, []string{}},
		{fmt.Sprintf(`{"until":%q}`, start.Add(-time.Minute).Format(time.RFC3339)), []string{}, []string{}},
	}
	for _, tt := range tests {
		list := f.MustCall("list_sessions", tt.args).(reads.ListSessionsResult)
		var got []string
		for _, s := range list.Sessions {
			got = append(got, s.SessionID)
		}
		if g := names(ids, got); !slices.Equal(g, tt.list) || list.Total != len(tt.list) {
			t.Errorf("list_sessions %s: %v (total %d), want %v", tt.args, g, list.Total, tt.list)
		}
		search := f.MustCall("search_sessions", withQuery(tt.args)).(reads.SearchSessionsResult)
		got = nil
		for _, m := range search.Sessions {
			got = append(got, m.Session.SessionID)
		}
		if g := names(ids, got); !slices.Equal(g, tt.hits) {
			t.Errorf("search_sessions %s: %v, want %v", tt.args, g, tt.hits)
		}
	}
}

func TestSessionFiltersRefuseBadInput(t *testing.T) {
	t.Parallel()
	f, _, start := roomFile(t)
	before := f.FileHash()
	for _, tt := range []struct{ args, says string }{
		{`{"since":"not a time"}`, `since: cannot read "not a time" as a time`},
		{`{"until":"13/45/2026"}`, `until: cannot read "13/45/2026" as a time`},
		{`{"since":"   "}`, ""}, // blank: no bound, not an error
		{fmt.Sprintf(`{"since":%q,"until":%q}`, start.Add(time.Hour).Format(time.RFC3339), start.Format(time.RFC3339)), "is after until"},
		{`{"interface":"a\nb"}`, "holds a control character"},
		{fmt.Sprintf(`{"interface":%q}`, strings.Repeat("x", 41)), "interface is 41 bytes long"},
	} {
		for _, tool := range []string{"list_sessions", "search_sessions"} {
			args := tt.args
			if tool == "search_sessions" {
				args = withQuery(args)
			}
			_, err := f.Call(tool, args)
			switch {
			case tt.says == "" && err != nil:
				t.Errorf("%s %s: %v", tool, args, err)
			case tt.says != "" && (!errors.Is(err, ops.ErrInvalid) || !strings.Contains(fmt.Sprint(err), tt.says)):
				t.Errorf("%s %s: %v, want invalid saying %q", tool, args, err, tt.says)
			}
		}
	}
	if f.FileHash() != before {
		t.Error("the refused reads changed the file")
	}
}

func TestGetSessionByRoom(t *testing.T) {
	t.Parallel()
	f, ids, _ := roomFile(t)
	tests := []struct {
		args    string
		session string   // session_id
		list    []string // sessions
	}{
		{`{"room":"lobby"}`, "", []string{"bare", "cli", "matrix"}},
		{`{"room":"lobby","interface":"cli"}`, "cli", []string{"cli"}},
		{`{"room":" lobby ","interface":"matrix"}`, "matrix", []string{"matrix"}},
	}
	for _, tt := range tests {
		res := f.MustCall("get_session_by_room", tt.args).(reads.SessionByRoomResult)
		var got []string
		for _, s := range res.Sessions {
			got = append(got, s.SessionID)
			if s.Room != "lobby" {
				t.Errorf("%s: session %s of room %q", tt.args, s.SessionID, s.Room)
			}
		}
		if g := names(ids, got); !slices.Equal(g, tt.list) || res.Total != len(tt.list) || res.Room != "lobby" || !res.Complete {
			t.Errorf("get_session_by_room %s: %v (total %d, room %q, complete %v), want %v", tt.args, g, res.Total, res.Room, res.Complete, tt.list)
		}
		if want := ids[tt.session]; res.SessionID != want {
			t.Errorf("get_session_by_room %s: session_id %q, want %q", tt.args, res.SessionID, want)
		}
	}
	// Each session says its interface.
	res := f.MustCall("get_session_by_room", `{"room":"lobby"}`).(reads.SessionByRoomResult)
	if ifaces := []string{res.Sessions[0].Interface, res.Sessions[1].Interface, res.Sessions[2].Interface}; !slices.Equal(ifaces, []string{"", "cli", "matrix"}) {
		t.Errorf("interfaces %v", ifaces)
	}

	before := f.FileHash()
	for _, tt := range []struct {
		args string
		kind error
		says string
	}{
		{`{"room":"nowhere"}`, ops.ErrNotFound, `room "nowhere" has no session: create_session room="nowhere" interface=NAME makes`},
		{`{"room":"lobby","interface":"irc"}`, ops.ErrNotFound, `room "lobby" has no session on interface "irc" (it has no interface, "cli", "matrix"): create_session room="lobby" interface="irc" makes one`},
		{`{"room":"lob"}`, ops.ErrNotFound, `room "lob" has no session`},
		{`{"room":"  "}`, ops.ErrInvalid, "room is empty"},
		{`{}`, ops.ErrInvalid, "room is empty"},
		{`{"room":"lobby","max_tokens":3}`, ops.ErrInvalid, "max_tokens 3 is too small"},
		{`{"room":"lobby","cursor":"garbage"}`, ops.ErrInvalid, "cursor"},
	} {
		if _, err := f.Call("get_session_by_room", tt.args); !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.says) {
			t.Errorf("get_session_by_room %s: %v, want %v saying %q", tt.args, err, tt.kind, tt.says)
		}
	}
	if f.FileHash() != before {
		t.Error("the refused reads changed the file")
	}
}

// TestGetSessionByRoomPages: a room of many sessions, read in small
// pages through next_cursor, gives every session once, as one read does.
func TestGetSessionByRoomPages(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	for i := range 12 {
		f.Now = f.Now.Add(time.Minute)
		f.MustCall("create_session", fmt.Sprintf(`{"title":"%s session %d","room":"hall"}`, strings.Repeat("long title ", 8), i))
	}
	whole := f.MustCall("get_session_by_room", `{"room":"hall","max_tokens":0}`).(reads.SessionByRoomResult)
	if len(whole.Sessions) != 12 || !whole.Complete {
		t.Fatalf("whole: %d sessions, complete %v", len(whole.Sessions), whole.Complete)
	}
	var paged []string
	cursor, pages := "", 0
	for {
		args := `{"room":"hall","max_tokens":500}`
		if cursor != "" {
			args = fmt.Sprintf(`{"room":"hall","max_tokens":500,"cursor":%q}`, cursor)
		}
		res := f.MustCall("get_session_by_room", args).(reads.SessionByRoomResult)
		if res.ResultTokens > 500 {
			t.Errorf("page %d: %d tokens over 500", pages, res.ResultTokens)
		}
		for _, s := range res.Sessions {
			paged = append(paged, s.SessionID)
		}
		pages++
		if cursor = res.NextCursor; cursor == "" || pages > 20 {
			break
		}
	}
	var want []string
	for _, s := range whole.Sessions {
		want = append(want, s.SessionID)
	}
	if pages < 2 || !slices.Equal(paged, want) {
		t.Errorf("%d pages gave %v, want %v", pages, paged, want)
	}
}
