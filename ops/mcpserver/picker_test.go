package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/model"
	"weft/ops"
	"weft/ops/internal/facetest"
	"weft/ops/listen"
	"weft/ops/tools"
	"weft/store"
	"weft/store/boltstore"
)

// titled creates sessions with these titles, in order, and returns their
// IDs by title (the last, for a title given twice).
func titled(t *testing.T, svc *ops.Service, titles ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, title := range titles {
		res, err := svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		ids[title] = res.SessionID
	}
	return ids
}

func complete(t *testing.T, cs *mcp.ClientSession, ref *mcp.CompleteReference, arg, value string) mcp.CompletionResultDetails {
	t.Helper()
	res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
	if err != nil {
		t.Fatalf("complete %s %q: %v", arg, value, err)
	}
	return res.Completion
}

var (
	startupRef     = &mcp.CompleteReference{Type: "ref/prompt", Name: "startup"}
	sessionTmplRef = &mcp.CompleteReference{Type: "ref/resource", URI: URISessionTemplate}
	contextRef     = &mcp.CompleteReference{Type: "ref/resource", URI: URIContextTemplate}
)

func TestCompletionOfSessionIDs(t *testing.T) {
	t.Parallel()
	svc, demoID := seeded(t)
	ids := titled(t, svc, "auth design", "billing", "Rate limiter notes", "design of auth", "twin", "twin")
	srv := New(tools.Local{Service: svc}, Options{})
	cs := connect(t, srv, "completer", nil)
	if caps := cs.InitializeResult().Capabilities; caps.Completions == nil {
		t.Fatalf("completions are not declared: %+v", caps)
	}

	// Titles, best first: the one that begins with what was typed, then
	// the one with a word that does.
	got := complete(t, cs, startupRef, "session_id", "auth")
	if want := []string{"auth design", "design of auth"}; !slices.Equal(got.Values, want) || got.Total != 2 || got.HasMore {
		t.Errorf("startup session_id \"auth\": %+v, want %v", got, want)
	}
	// Case does not matter; the characters in order are a match too.
	if got := complete(t, cs, startupRef, "session_id", "RLN"); !slices.Equal(got.Values, []string{"Rate limiter notes"}) {
		t.Errorf("\"RLN\": %+v", got)
	}
	// A title two sessions share does not name either: their IDs do.
	got = complete(t, cs, startupRef, "session_id", "twi")
	if len(got.Values) != 2 || !slices.Contains(got.Values, ids["twin"]) || slices.Contains(got.Values, "twin") {
		t.Errorf("\"twi\": %+v, want the two IDs", got)
	}
	// Typing an ID gets IDs.
	all := []string{demoID}
	for _, id := range ids {
		all = append(all, id)
	}
	prefix := ids["billing"]
	for n := 4; n < len(prefix); n++ {
		if !slices.ContainsFunc(all, func(id string) bool { return id != ids["billing"] && strings.HasPrefix(id, ids["billing"][:n]) }) {
			prefix = prefix[:n]
			break
		}
	}
	if got := complete(t, cs, startupRef, "session_id", prefix); !slices.Equal(got.Values, []string{ids["billing"]}) {
		t.Errorf("ID prefix %q: %+v", prefix, got)
	}
	// Nothing typed: every session, the most recently updated first.
	got = complete(t, cs, startupRef, "session_id", "")
	if got.Total != 7 || len(got.Values) != 7 || got.Values[0] != "twin" && got.Values[0] != ids["twin"] {
		t.Errorf("empty value: %+v", got)
	}
	// Every value given names its session.
	for _, v := range got.Values {
		p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "startup", Arguments: map[string]string{"session_id": v}})
		if err != nil {
			t.Errorf("the value %q does not name a session: %v", v, err)
			continue
		}
		if v == "auth design" && !strings.Contains(p.Description, `"auth design"`) {
			t.Errorf("%q names %s", v, p.Description)
		}
	}
	if got := complete(t, cs, startupRef, "session_id", "nothing like it"); len(got.Values) != 0 || got.Total != 0 {
		t.Errorf("no match: %+v", got)
	}
	// The prompt's other arguments take numbers: nothing to offer.
	if got := complete(t, cs, startupRef, "summaries", ""); len(got.Values) != 0 {
		t.Errorf("summaries: %+v", got)
	}
	// A template named without its query is the same template.
	bare := &mcp.CompleteReference{Type: "ref/resource", URI: templatePath(URISessionTemplate)}
	if got := complete(t, cs, bare, "id", "auth"); len(got.Values) != 2 {
		t.Errorf("%s {id}: %+v", bare.URI, got)
	}
	// Every template weft lists can be asked; only {id} gets values.
	templates, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tmpl := range templates.ResourceTemplates {
		for _, arg := range []string{"id", "max_tokens", "cursor"} {
			res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: tmpl.URITemplate}, Argument: mcp.CompleteParamsArgument{Name: arg}})
			if err != nil {
				t.Errorf("%s %s: %v", tmpl.URITemplate, arg, err)
				continue
			}
			if want := arg == "id" && strings.Contains(tmpl.URITemplate, "{id}"); want != (len(res.Completion.Values) > 0) {
				t.Errorf("%s %s: %+v", tmpl.URITemplate, arg, res.Completion)
			}
		}
	}

	// The templates' {id} gets IDs, which go into a URI as they are.
	for _, ref := range []*mcp.CompleteReference{sessionTmplRef, contextRef} {
		got := complete(t, cs, ref, "id", "auth")
		if want := []string{ids["auth design"], ids["design of auth"]}; !slices.Equal(got.Values, want) {
			t.Errorf("%s {id} \"auth\": %+v, want %v", ref.URI, got, want)
		}
		uri := strings.Replace(templatePath(ref.URI), "{id}", got.Values[0], 1)
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Errorf("read %s: %v", uri, err)
		}
	}
	if got := complete(t, cs, sessionTmplRef, "id", demoID); len(got.Values) != 1 || got.Values[0] != demoID {
		t.Errorf("the demo's ID: %+v", got)
	}

	// What weft does not have is an invalid request, with why.
	for _, ref := range []*mcp.CompleteReference{{Type: "ref/prompt", Name: "nosuch"}, {Type: "ref/resource", URI: "weft://nosuch/{x}"}} {
		_, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "session_id"}})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "startup") {
			t.Errorf("complete %+v: %v, want invalid params naming what there is", ref, err)
		}
	}

	// Through a relay, the same.
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0"})
	relayed, err := relayTo(l.Addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	rcs := connect(t, relayed, "relayed", nil)
	if got := complete(t, rcs, startupRef, "session_id", "auth"); !slices.Equal(got.Values, []string{"auth design", "design of auth"}) {
		t.Errorf("relayed completion: %+v", got)
	}
	listed, _ := listAll(t, rcs)
	if got := sessionURIs(t, listed); len(got) != 7 || got[ids["billing"]] == nil || got[ids["billing"]].Title != "billing" {
		t.Errorf("relayed resources/list: %d sessions", len(got))
	}
}

func TestCompletionIsCapped(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	var titles []string
	for i := range 130 {
		titles = append(titles, fmt.Sprintf("bulk %03d", i))
	}
	titled(t, svc, titles...)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "completer", nil)
	got := complete(t, cs, startupRef, "session_id", "bulk")
	if len(got.Values) != 100 || got.Total != 130 || !got.HasMore {
		t.Errorf("130 matches: %d values, total %d, hasMore %v; want 100, 130, true", len(got.Values), got.Total, got.HasMore)
	}
	// The most recently updated first, among matches alike.
	if got.Values[0] != "bulk 129" {
		t.Errorf("first value %q, want the newest", got.Values[0])
	}
}

// listAll walks resources/list page by page.
func listAll(t *testing.T, cs *mcp.ClientSession) (all []*mcp.Resource, pages int) {
	t.Helper()
	cursor := ""
	for {
		res, err := cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("resources/list (cursor %q): %v", cursor, err)
		}
		pages++
		all = append(all, res.Resources...)
		if res.NextCursor == "" {
			return all, pages
		}
		cursor = res.NextCursor
		if pages > 10000 {
			t.Fatal("resources/list does not end")
		}
	}
}

// sessionURIs picks the sessions out of a resource list, by ID.
func sessionURIs(t *testing.T, list []*mcp.Resource) map[string]*mcp.Resource {
	t.Helper()
	out := map[string]*mcp.Resource{}
	for _, r := range list {
		id, ok := strings.CutPrefix(r.URI, URISessions+"/")
		if !ok || id == "recent" {
			continue
		}
		if out[id] != nil {
			t.Errorf("%s is listed twice", r.URI)
		}
		out[id] = r
	}
	return out
}

func TestSessionsListedAsResources(t *testing.T) {
	t.Parallel()
	svc, demoID := seeded(t)
	var titles []string
	for i := range 250 {
		titles = append(titles, fmt.Sprintf("session %03d", i))
	}
	ids := titled(t, svc, titles...)
	ids["demo"] = demoID
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "lister", nil)

	all, pages := listAll(t, cs)
	if pages < 3 {
		t.Errorf("251 sessions in %d pages: a page is to be a page", pages)
	}
	if all[0].URI != URISessions && all[1].URI != URISessions {
		t.Errorf("weft://sessions is not on the first page: %s, %s", all[0].URI, all[1].URI)
	}
	listed := sessionURIs(t, all)
	if len(listed) != len(ids) {
		t.Errorf("%d sessions listed, the file has %d", len(listed), len(ids))
	}
	info, _, err := svc.View(demoID)
	if err != nil {
		t.Fatal(err)
	}
	for title, id := range ids {
		r := listed[id]
		if r == nil {
			t.Errorf("%s (%s) is not listed", title, id)
			continue
		}
		if title == "demo" {
			title = info.Title
		}
		if r.Title != title || r.Name == "" || r.MIMEType != "application/json" || r.Annotations == nil || r.Annotations.LastModified == "" {
			t.Errorf("%s: %+v", id, r)
		}
		if id == demoID && !strings.Contains(r.Description, fmt.Sprintf("%d messages", info.MessageCount)) || !strings.Contains(r.Description, "created ") {
			t.Errorf("%s: description %q says no message count and dates", id, r.Description)
		}
	}
	// Newest created first.
	var order []string
	for _, r := range all {
		if id, ok := strings.CutPrefix(r.URI, URISessions+"/"); ok && id != "recent" {
			order = append(order, id)
		}
	}
	if len(order) == 0 || order[0] != ids["session 249"] {
		t.Errorf("the first sessions listed are %.3v, want the newest first", order)
	}
	// A listed session reads.
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: URISessions + "/" + ids["session 007"]}); err != nil || listed[ids["session 007"]] == nil {
		t.Errorf("read a listed session: %v", err)
	}
	// A cursor weft did not give is invalid params.
	_, err = cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: "nonsense"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a bad cursor: %v, want invalid params", err)
	}
}

// TestResourceListAgreesWithListChanged: what a client is told changed
// is what it finds when it lists again; and a walk through the pages
// while sessions come and go lists every session that stayed, once.
func TestResourceListAgreesWithListChanged(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	var titles []string
	for i := range 150 {
		titles = append(titles, fmt.Sprintf("old %03d", i))
	}
	old := titled(t, svc, titles...)
	srv := New(tools.Local{Service: svc}, Options{})
	h := facetest.NewHearing()
	cs, _ := connectAt(t, srv, "listener", legacyVersion, h.Options())
	ctx := context.Background()

	n := 0
	relist := func(what string) map[string]*mcp.Resource {
		t.Helper()
		h.Await(t, what, func() bool { return h.Listed > n })
		n = h.ListChanges()
		all, _ := listAll(t, cs)
		return sessionURIs(t, all)
	}
	made, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "made"})
	if err != nil {
		t.Fatal(err)
	}
	if r := relist("the new session")[made.SessionID]; r == nil || r.Title != "made" {
		t.Errorf("after list_changed for a new session: %+v", r)
	}
	if _, err := svc.RenameSession(ctx, ops.RenameSessionArgs{SessionID: made.SessionID, Title: "renamed"}); err != nil {
		t.Fatal(err)
	}
	if r := relist("the rename")[made.SessionID]; r == nil || r.Title != "renamed" {
		t.Errorf("after list_changed for a rename: %+v", r)
	}
	if _, err := svc.DeleteSession(ctx, ops.DeleteSessionArgs{SessionID: made.SessionID}); err != nil {
		t.Fatal(err)
	}
	if r := relist("the deletion")[made.SessionID]; r != nil {
		t.Errorf("after list_changed for a deletion: %+v is still listed", r)
	}

	// A walk while others write: sessions created and deleted between
	// pages, and old ones appended to (which moves them to the top of
	// list_sessions).
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := sessionURIs(t, res.Resources)
	cursor := res.NextCursor
	gone := old["old 000"]
	for k := 0; cursor != ""; k++ {
		titled(t, svc, fmt.Sprintf("during %d", k))
		if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: old[fmt.Sprintf("old %03d", 10+k)], Messages: []model.NewMessage{{Role: model.RoleUser, Content: "more"}}}); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			if _, err := svc.DeleteSession(ctx, ops.DeleteSessionArgs{SessionID: gone}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for id, r := range sessionURIs(t, res.Resources) {
			if seen[id] != nil {
				t.Errorf("%s listed on two pages", id)
			}
			seen[id] = r
		}
		cursor = res.NextCursor
	}
	for title, id := range old {
		if id != gone && seen[id] == nil {
			t.Errorf("%s (%s) was there throughout and was not listed", title, id)
		}
	}
}

// TestResourcePagesOnManySessions: a page of the list on a file of 10,000
// sessions reads a page of records, not the file.
func TestResourcePagesOnManySessions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a file of 10,000 sessions")
	}
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "many.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC)
	err = st.Update(func(tx store.Tx) error {
		for i := range 10_000 {
			s := model.Session{ID: fmt.Sprintf("0000p4wp%08x", i), Title: fmt.Sprintf("conversation %d about something", i),
				CreatedAt: at.Add(time.Duration(i) * time.Minute), UpdatedAt: at.Add(time.Duration(i) * time.Minute), MessageCount: 2, Tokens: 40, Version: 1}
			s.Record(s.CreatedAt, "operator", "2 messages imported")
			if err := tx.PutSession(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, New(tools.Local{Service: ops.New(st)}, Options{}), "lister", nil)
	start := time.Now()
	all, pages := listAll(t, cs)
	took := time.Since(start)
	if n := len(sessionURIs(t, all)); n != 10_000 {
		t.Fatalf("%d sessions listed, want 10000", n)
	}
	t.Logf("10,000 sessions in %d pages: %v (%v a page)", pages, took, took/time.Duration(pages))
	if per := took / time.Duration(pages); per > 100*time.Millisecond {
		t.Errorf("%v a page on 10,000 sessions", per)
	}
	start = time.Now()
	got := complete(t, cs, startupRef, "session_id", "conversation 99")
	t.Logf("completion over 10,000 sessions: %v, %d matches", time.Since(start), got.Total)
	// 111 titles begin with it (99, 990..999, 9900..9999): they come
	// before those that only hold its characters in order.
	if got.Total < 111 || len(got.Values) != 100 {
		t.Errorf("completion: %d values, total %d", len(got.Values), got.Total)
	}
	for _, v := range got.Values {
		if !strings.HasPrefix(v, "conversation 99") {
			t.Errorf("%q is offered before titles that begin with what was typed", v)
			break
		}
	}
}
