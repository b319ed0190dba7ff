package relay

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/listen"
	"weft/ops/reads"
)

// TestRoomsOverEveryFace: relayed agents creating a room's session at
// once get one session; get_session_by_room, the filters and the room
// resource answer through the relay as in-process, and POST /api takes
// the same tools.
func TestRoomsOverEveryFace(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0"})
	const n = 6
	var wg sync.WaitGroup
	got := make([]ops.CreateSessionResult, n)
	for i := range n {
		relay, err := relayServer(l.Addr(), "")
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := connectAt(t, relay, fmt.Sprint("agent ", i), legacyVersion, nil)
		wg.Go(func() {
			callOK(t, cs, "create_session", map[string]any{"room": "!ops:example.org", "interface": "matrix"}, &got[i])
		})
	}
	wg.Wait()
	made := 0
	for _, r := range got {
		if r.SessionID != got[0].SessionID {
			t.Errorf("relayed creates gave sessions %s and %s", got[0].SessionID, r.SessionID)
		}
		if !r.Existing {
			made++
		}
	}
	if made != 1 {
		t.Errorf("%d relayed creates made a session, want 1", made)
	}
	sid := got[0].SessionID

	relay, err := relayServer(l.Addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := connectAt(t, relay, "reader", legacyVersion, nil)
	var room reads.SessionByRoomResult
	callOK(t, cs, "get_session_by_room", map[string]any{"room": "!ops:example.org", "interface": "matrix"}, &room)
	if room.SessionID != sid || len(room.Sessions) != 1 || room.Sessions[0].Interface != "matrix" {
		t.Errorf("relayed get_session_by_room: %+v", room)
	}
	if msg := callErr(t, cs, "get_session_by_room", map[string]any{"room": "!ops:example.org", "interface": "cli"}); !strings.Contains(msg, `has no session on interface "cli" (it has "matrix")`) {
		t.Errorf("relayed not-found: %q", msg)
	}
	var list reads.ListSessionsResult
	callOK(t, cs, "list_sessions", map[string]any{"interface": "matrix", "since": "-1h"}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
		t.Errorf("relayed list_sessions interface=matrix: %+v", list.Sessions)
	}
	if msg := callErr(t, cs, "list_sessions", map[string]any{"since": "someday"}); !strings.Contains(msg, `since: cannot read "someday" as a time`) {
		t.Errorf("relayed bad since: %q", msg)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "weft://rooms/%21ops%3Aexample.org"})
	if err != nil || !strings.Contains(res.Contents[0].Text, sid) {
		t.Errorf("relayed room resource: %v", err)
	}

	// POST /api: the same tools, the same answers.
	for _, tt := range []struct {
		tool, body string
		status     int
		says       string
	}{
		{"create_session", `{"room":"!ops:example.org","interface":"matrix","title":"ignored"}`, http.StatusOK, `"existing":true`},
		{"get_session_by_room", `{"room":"!ops:example.org"}`, http.StatusOK, `"interface":"matrix"`},
		{"get_session_by_room", `{"room":"nowhere"}`, http.StatusNotFound, `room \"nowhere\" has no session`},
		{"search_sessions", `{"query":"x","until":"whenever"}`, http.StatusBadRequest, `until: cannot read`},
	} {
		status, _, body := do(t, "POST", l.URL()+"/api/"+tt.tool, tt.body, map[string]string{"Content-Type": "application/json"})
		if status != tt.status || !strings.Contains(string(body), tt.says) || (status == http.StatusOK && !strings.Contains(string(body), sid)) {
			t.Errorf("POST /api/%s %s: %d %s, want %d with %s", tt.tool, tt.body, status, body, tt.status, tt.says)
		}
	}
	// The demo thread and the room's session: nothing more was made.
	if all, err := svc.Store().Sessions(); err != nil || len(all) != 2 {
		t.Errorf("%d sessions in the file (%v), want 2", len(all), err)
	}
}
