package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/internal/facetest"
	"weft/ops/reads"
	"weft/ops/tools"
)

// readJSON reads a resource and decodes its one JSON content into out.
func readJSON(t *testing.T, cs *mcp.ClientSession, uri string, out any) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != resMIME {
		t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), out); err != nil {
		t.Fatalf("read %s: %v\n%s", uri, err, res.Contents[0].Text)
	}
}

func TestRoomAndSearchResources(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ctx := context.Background()
	made := map[string]string{}
	for _, p := range []struct{ room, iface string }{{"!general:example.org", "matrix"}, {"!general:example.org", "cli"}, {"other room", "cli"}} {
		res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Room: p.room, Interface: p.iface})
		if err != nil {
			t.Fatal(err)
		}
		made[p.room+"/"+p.iface] = res.SessionID
	}
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "reader", nil)

	var room roomRead
	readJSON(t, cs, "weft://rooms/%21general%3Aexample.org", &room)
	var got []string
	for _, s := range room.Sessions {
		got = append(got, s.Interface+"="+s.SessionID)
		if s.Title == "" || s.UpdatedAt == "" || s.Room != "!general:example.org" {
			t.Errorf("room session %+v: want its title, room and updated_at", s)
		}
	}
	want := []string{"cli=" + made["!general:example.org/cli"], "matrix=" + made["!general:example.org/matrix"]}
	if !slices.Equal(got, want) || room.Total != 2 || room.Room != "!general:example.org" || !room.Complete || room.NextURI != "" {
		t.Errorf("weft://rooms/…general: %v (total %d, room %q, complete %v, next %q), want %v", got, room.Total, room.Room, room.Complete, room.NextURI, want)
	}
	if room.MaxTokens != reads.DefaultMaxTokens || room.ResultTokens == 0 || room.ResultTokens > room.MaxTokens {
		t.Errorf("weft://rooms: max_tokens %d, result_tokens %d", room.MaxTokens, room.ResultTokens)
	}
	readJSON(t, cs, "weft://rooms/other%20room?max_tokens=0", &room)
	if len(room.Sessions) != 1 || room.Sessions[0].SessionID != made["other room/cli"] || room.MaxTokens != 0 {
		t.Errorf("weft://rooms/other%%20room: %+v", room)
	}

	// The search resource gives what search_sessions gives.
	var found searchRead
	readJSON(t, cs, "weft://search/limiter", &found)
	direct, err := reads.SearchSessions(svc, ctx, reads.SearchSessionsArgs{Query: "limiter", MaxTokens: new(reads.NoLimit)})
	if err != nil {
		t.Fatal(err)
	}
	if found.Query != "limiter" || len(found.Sessions) == 0 || found.Sessions[0].Session.SessionID != sid || len(found.Sessions) != len(direct.Sessions) || found.ResultTokens > found.MaxTokens {
		t.Errorf("weft://search/limiter: %d sessions (query %q, %d tokens of %d), search_sessions %d", len(found.Sessions), found.Query, found.ResultTokens, found.MaxTokens, len(direct.Sessions))
	}
	readJSON(t, cs, "weft://search/no%20such%20words%20anywhere", &found)
	if found.Query != "no such words anywhere" || len(found.Sessions) != 0 || found.Searched == 0 {
		t.Errorf("a search that finds nothing: %+v", found)
	}

	for _, tt := range []struct{ uri, says string }{
		{"weft://rooms/nowhere", `room "nowhere" has no session`},
		{"weft://rooms/", "does not name a room"},
		{"weft://rooms/%20", "does not name a room"},
		{"weft://rooms/lobby?max_tokens=10", "max_tokens 10 is too small for a resource"},
		{"weft://rooms/lobby?interface=cli", "takes max_tokens and cursor in its query"},
		{"weft://rooms/lobby?cursor=garbage", "cursor"},
		{"weft://search/", "does not name a query"},
		{"weft://search/x?max_tokens=lots", `max_tokens "lots" is not a whole number`},
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("read %s: %v, want an error saying %q", tt.uri, err, tt.says)
		}
	}

	// {room} completes with the file's rooms, encoded for the URI.
	ref := &mcp.CompleteReference{Type: "ref/resource", URI: URIRoomTemplate}
	if c := complete(t, cs, ref, "room", "!GEN"); !slices.Equal(c.Values, []string{"%21general%3Aexample.org"}) || c.Total != 1 {
		t.Errorf("complete {room} !GEN: %+v", c)
	}
	if c := complete(t, cs, ref, "room", ""); len(c.Values) != 2 || c.Total != 2 {
		t.Errorf("complete {room}: %+v", c)
	}
	if c := complete(t, cs, &mcp.CompleteReference{Type: "ref/resource", URI: URISearchTemplate}, "query", "li"); len(c.Values) != 0 {
		t.Errorf("complete {query}: %+v", c)
	}
}

// TestRoomAndSearchResourcesPage: small pages of a room and of a search,
// read through next_uri, give every session once, in the order one
// read gives them, each page within its budget.
func TestRoomAndSearchResourcesPage(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ctx := context.Background()
	for i := range 14 {
		title := fmt.Sprintf("hall notes %d: %s", i, strings.Repeat("a long title that takes room ", 5))
		if _, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: title, Room: "great hall"}); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "pager", nil)
	for _, tt := range []struct {
		first, prefix string
		ids           func(raw json.RawMessage) []string
	}{
		{"weft://rooms/great%20hall", "weft://rooms/great%20hall?", func(raw json.RawMessage) []string {
			var r roomRead
			_ = json.Unmarshal(raw, &r)
			var ids []string
			for _, s := range r.Sessions {
				ids = append(ids, s.SessionID)
			}
			return ids
		}},
		{"weft://search/hall%20notes", "weft://search/hall%20notes?", func(raw json.RawMessage) []string {
			var r searchRead
			_ = json.Unmarshal(raw, &r)
			var ids []string
			for _, m := range r.Sessions {
				ids = append(ids, m.Session.SessionID)
			}
			return ids
		}},
	} {
		var whole json.RawMessage
		readJSON(t, cs, tt.first+"?max_tokens=0", &whole)
		want := tt.ids(whole)
		if len(want) != 14 {
			t.Fatalf("%s: %d sessions whole, want 14", tt.first, len(want))
		}
		var paged []string
		pages := 0
		for uri := tt.first + "?max_tokens=900"; uri != ""; pages++ {
			if pages > 20 {
				t.Fatalf("%s: more than 20 pages", tt.first)
			}
			var page struct {
				NextURI      string `json:"next_uri"`
				ResultTokens int    `json:"result_tokens"`
			}
			var raw json.RawMessage
			readJSON(t, cs, uri, &raw)
			_ = json.Unmarshal(raw, &page)
			if page.ResultTokens > 900 {
				t.Errorf("%s: %d tokens, over 900", uri, page.ResultTokens)
			}
			if page.NextURI != "" && !strings.HasPrefix(page.NextURI, tt.prefix) {
				t.Errorf("%s: next_uri %q", uri, page.NextURI)
			}
			paged = append(paged, tt.ids(raw)...)
			uri = page.NextURI
		}
		if pages < 2 || !slices.Equal(paged, want) {
			t.Errorf("%s: %d pages gave %d sessions, want the %d of one read in order", tt.first, pages, len(paged), len(want))
		}
	}
}

// TestRoomSubscribersHearWrites: a client subscribed to a room hears of
// a session made in it and of writes to its sessions, as one
// subscribed to the list of sessions does.
func TestRoomSubscribersHearWrites(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	h := facetest.NewHearing()
	listener, _ := connectAt(t, srv, "listener", legacyVersion, h.Options())
	editor, _ := connectAt(t, srv, "editor", legacyVersion, nil)
	ctx := context.Background()
	room, search := "weft://rooms/lobby", "weft://search/deploy"
	for _, uri := range []string{room, search} {
		if err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	var made ops.CreateSessionResult
	callOK(t, editor, "create_session", map[string]any{"room": "lobby", "interface": "cli"}, &made)
	h.Await(t, "the room's new session", func() bool { return facetest.Count(h.Updated, room) == 1 && facetest.Count(h.Updated, search) == 1 })
	callOK(t, editor, "add_turn", map[string]any{"session_id": made.SessionID, "query": "deploy it"}, nil)
	h.Await(t, "the turn", func() bool { return facetest.Count(h.Updated, room) == 2 && facetest.Count(h.Updated, search) == 2 })
	if err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: "weft://rooms/%20"}); err == nil || !strings.Contains(err.Error(), "does not name a room") {
		t.Errorf("subscribe to a blank room: %v", err)
	}
}
