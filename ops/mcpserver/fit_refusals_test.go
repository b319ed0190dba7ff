package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
)

// versions are every session's versions: a refused read changes none.
func versions(t *testing.T, svc *ops.Service) map[string]uint64 {
	t.Helper()
	list, err := reads.ListSessions(svc, context.Background(), reads.ListSessionsArgs{MaxTokens: new(reads.NoLimit)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, s := range list.Sessions {
		out[s.SessionID] = s.Version
	}
	return out
}

// recursor rewrites a cursor's fields, as a forger would.
func recursor(t *testing.T, cursor string, edit func(map[string]any)) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber() // the hashes are 64-bit: keep them as they are
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ = json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestFitRefusesBadBudgetsAndCursors gives every paged read, over MCP
// and over POST /api, bad budgets and bad cursors (garbage, hostile,
// forged, another tool's, another session's, for other arguments, stale
// after an edit): each is refused as an invalid argument (a tool error
// over MCP, 400 over HTTP) whose message names what was wrong, and
// changes nothing.
func TestFitRefusesBadBudgetsAndCursors(t *testing.T) {
	t.Parallel()
	svc, sid := pagingThread(t)
	fs, _ := faces(t, svc)
	ctx := context.Background()
	var other string
	for id := range versions(t, svc) {
		if id != sid {
			other = id
			break
		}
	}
	edits := 0
	for _, f := range fs {
		// A cursor of get_startup_context, to hand to the others.
		start, _, _ := f.call(t, "get_startup_context", map[string]any{"session_id": sid})
		foreign := start["next_cursor"].(string)
		for _, r := range pagedReads(sid) {
			if r.tool == "get_message_range" {
				continue // it pages by next_start_idx: TestMessageRangeRefusals
			}
			t.Run(f.name+"/"+r.name, func(t *testing.T) {
				refuse := func(what string, args map[string]any, says ...string) {
					t.Helper()
					before := versions(t, svc)
					res, _, refused := f.call(t, r.tool, args)
					if refused == "" {
						t.Errorf("%s: not refused: %.200v", what, res)
						return
					}
					for _, s := range says {
						if !strings.Contains(refused, s) {
							t.Errorf("%s: %q does not say %q", what, refused, s)
						}
					}
					if after := versions(t, svc); !maps.Equal(before, after) {
						t.Errorf("%s: the refusal changed a session", what)
					}
				}
				with := func(k string, v any) map[string]any {
					a := maps.Clone(r.args)
					a[k] = v
					return a
				}
				for _, bad := range []any{-1, 1, 499} {
					refuse("max_tokens", with("max_tokens", bad), "max_tokens", "500 or more")
				}
				for _, bad := range []any{"lots", 2.5, true} {
					refuse("max_tokens", with("max_tokens", bad), "max_tokens")
				}
				refuse("garbage", with("cursor", "not a cursor!"), "not a next_cursor")
				refuse("a long one", with("cursor", strings.Repeat("QUFB", 12_000)), "not a next_cursor")
				refuse("an empty one", with("cursor", base64.RawURLEncoding.EncodeToString([]byte("{}"))), "not a next_cursor")
				if r.tool != "get_startup_context" {
					refuse("another tool's", with("cursor", foreign), "get_startup_context", "not of "+r.tool)
				}

				page, _, refused := f.call(t, r.tool, r.args)
				if refused != "" {
					t.Fatal(refused)
				}
				cursor := page["next_cursor"].(string)
				if r.tool != "list_sessions" && r.tool != "search_sessions" {
					refuse("another session's", with("cursor", recursor(t, cursor, func(m map[string]any) { m["s"] = other })), "is for session "+other)
				}
				refuse("from the future", with("cursor", recursor(t, cursor, func(m map[string]any) { m["v"] = int64(1) << 40 })))
				refuse("for other arguments", with("cursor", recursor(t, cursor, func(m map[string]any) { m["q"] = 12345 })), "other arguments")
				refuse("with an item never given", with("cursor", recursor(t, cursor, func(m map[string]any) { m["a"] = "m999999" })), "m999999")
				if _, _, refused := f.call(t, r.tool, with("cursor", cursor)); refused != "" {
					t.Fatalf("the cursor itself: %s", refused)
				}

				// An edit makes the cursor stale: the session it reads, or
				// for the lists of sessions any session.
				edits++
				tag := map[string]any{"session_id": sid, "start_idx": 200, "end_idx": 200, "tags": []string{fmt.Sprintf("edit-%d", edits)}}
				if _, _, refused := f.call(t, "tag_messages", tag); refused != "" {
					t.Fatal(refused)
				}
				refuse("stale after an edit", with("cursor", cursor), "stale", "without cursor")
			})
		}
	}

	// A budget over the long history of a session that does not page is
	// still checked.
	if _, err := reads.GetTurnsSince(svc, ctx, reads.TurnsSinceArgs{SessionID: other, Timestamp: "2020-01-01", MaxTokens: new(10)}); !errors.Is(err, ops.ErrInvalid) {
		t.Errorf("max_tokens 10 on a short thread: %v", err)
	}
}

// TestAppendsKeepACursor: messages appended between pages (an agent's
// own turns, recorded as it pages) leave a newest-first or oldest-first
// read's cursor good, and the pages still give nothing twice; a read
// whose window they can move (get_turns_around) is told its cursor is
// stale.
func TestAppendsKeepACursor(t *testing.T) {
	t.Parallel()
	svc, sid := toolHeavy(t)
	fs, _ := faces(t, svc)
	f := fs[0]
	appendTwo := func() {
		t.Helper()
		msgs := []model.NewMessage{{Role: model.RoleUser, Content: "and now?"}, {Role: model.RoleAssistant, Content: "reading on"}}
		if _, err := svc.AppendMessages(context.Background(), ops.AppendMessagesArgs{SessionID: sid, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	args := map[string]any{"session_id": sid, "turns": 200}
	first, _, _ := f.call(t, "get_conversation_context", args)
	appendTwo()
	args["cursor"] = first["next_cursor"]
	second, _, refused := f.call(t, "get_conversation_context", args)
	if refused != "" {
		t.Fatalf("after an append: %s", refused)
	}
	if d := duplicates(append(itemIDs(t, first), itemIDs(t, second)...)); len(d) > 0 {
		t.Errorf("given twice across the append: %v", d)
	}

	around := map[string]any{"session_id": sid, "timestamp": heavyT0.Add(290 * time.Minute).Format(time.RFC3339), "count": 60}
	first, _, _ = f.call(t, "get_turns_around", around)
	appendTwo()
	around["cursor"] = first["next_cursor"]
	if _, _, refused := f.call(t, "get_turns_around", around); !strings.Contains(refused, "stale") {
		t.Errorf("get_turns_around after an append: %q, want a stale cursor", refused)
	}
}

// TestResourcesRefuseBadQueries: a resource URI with a bad budget, a bad
// cursor or a query it does not take is refused with -32602 (invalid
// params) and a message that says what would be right.
func TestResourcesRefuseBadQueries(t *testing.T) {
	t.Parallel()
	svc, sid := toolHeavy(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "reader", nil)
	ctx := context.Background()
	session := URISessions + "/" + sid
	page, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: session})
	if err != nil {
		t.Fatal(err)
	}
	var read struct {
		NextURI string `json:"next_uri"`
	}
	if err := json.Unmarshal([]byte(page.Contents[0].Text), &read); err != nil || read.NextURI == "" {
		t.Fatalf("no next_uri: %v", err)
	}
	u, _ := url.Parse(read.NextURI)
	cursor := u.Query().Get("cursor")
	before := versions(t, svc)
	for _, c := range []struct{ uri, says string }{
		{session + "?max_tokens=lots", `max_tokens "lots" is not a whole number`},
		{session + "?max_tokens=-1", "max_tokens -1 is too small"},
		{session + "?max_tokens=100", "max_tokens 100 is too small"},
		{session + "/context?max_tokens=1&max_tokens=2", "max_tokens is given 2 times"},
		{session + "?cursor=junk", "not a next_cursor"},
		{session + "/context?cursor=" + cursor, "not of get_startup_context"},
		{session + "?colour=blue", `takes max_tokens and cursor in its query, not "colour"`},
		{URISessions + "?cursor=" + cursor, "not of list_sessions"},
		{URIRecent + "?cursor=" + cursor, `weft://sessions/recent takes max_tokens in its query, not "cursor"`},
		{URIRecent + "?max_tokens=x", `max_tokens "x" is not a whole number`},
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.uri})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, c.says) {
			t.Errorf("read %s: %v, want -32602 saying %q", c.uri, err, c.says)
		}
	}
	if after := versions(t, svc); !maps.Equal(before, after) {
		t.Errorf("a refused read changed a session")
	}
	// The cursor itself reads on.
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: read.NextURI}); err != nil {
		t.Errorf("read %s: %v", read.NextURI, err)
	}
}
