package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools"
)

// face calls a tool one way (MCP or POST /api) and returns its result
// as JSON, or the refusal's text and whether it was refused as an
// invalid argument (a tool error over MCP, 400 over HTTP).
type face struct {
	name string
	call func(t *testing.T, tool string, args map[string]any) (res map[string]any, text string, refused string)
}

// faces are MCP (an SDK client, in memory) and POST /api over svc.
func faces(t *testing.T, svc *ops.Service) ([]face, *mcp.ClientSession) {
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "pager", nil)
	ts, _ := api(t, svc, apiOptions{})
	mcpFace := face{"MCP", func(t *testing.T, tool string, args map[string]any) (map[string]any, string, string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", tool, err)
		}
		if res.IsError {
			return nil, "", text(res)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return out, text(res), ""
	}}
	httpFace := face{"HTTP", func(t *testing.T, tool string, args map[string]any) (map[string]any, string, string) {
		t.Helper()
		b, _ := json.Marshal(args)
		status, _, body := do(t, http.MethodPost, ts.URL+"/api/"+tool, string(b), map[string]string{"Content-Type": "application/json"})
		if status == http.StatusBadRequest {
			return nil, "", errorOf(t, body)
		}
		if status != http.StatusOK {
			t.Fatalf("POST /api/%s: %d %s", tool, status, body)
		}
		var out map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return out, string(body), ""
	}}
	return []face{mcpFace, httpFace}, cs
}

// pagedRead is a read that pages: its arguments for the first page and,
// for the whole (max_tokens 0, the reference), the same without a budget.
type pagedRead struct {
	name string
	tool string
	args map[string]any
}

// pagedReads are the reads of the paging test on the tool-heavy thread
// with 40 small sessions beside it and 30 more operations: each takes
// more than one page with its default budget or the budget it names.
func pagedReads(sid string) []pagedRead {
	since := heavyT0.Format(time.RFC3339)
	return []pagedRead{
		{"get_conversation_context turns=200", "get_conversation_context", map[string]any{"session_id": sid, "turns": 200}},
		{"get_conversation_context turns=10 max_tokens=3000", "get_conversation_context", map[string]any{"session_id": sid, "turns": 10, "max_tokens": 3000}},
		{"get_turns_since", "get_turns_since", map[string]any{"session_id": sid, "timestamp": since}},
		{"get_turns_since stored", "get_turns_since", map[string]any{"session_id": sid, "timestamp": since, "include_summaries": false}},
		{"get_turns_around count=60", "get_turns_around", map[string]any{"session_id": sid, "timestamp": heavyT0.Add(150 * time.Minute).Format(time.RFC3339), "count": 60}},
		{"get_message_range", "get_message_range", map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 270}},
		{"get_message_range raw", "get_message_range", map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 299, "view": "raw"}},
		{"get_startup_context", "get_startup_context", map[string]any{"session_id": sid}},
		{"search_session_history", "search_session_history", map[string]any{"session_id": sid, "query": "return", "limit": 1000, "max_tokens": 2000}},
		{"search_session_history whole", "search_session_history", map[string]any{"session_id": sid, "query": "limiter", "whole": true}},
		{"search_session_history fuzzy", "search_session_history", map[string]any{"session_id": sid, "query": "hndlrs", "mode": "fuzzy", "limit": 200, "max_tokens": 1000}},
		{"get_session_history", "get_session_history", map[string]any{"session_id": sid}},
		{"get_session_history json raw", "get_session_history", map[string]any{"session_id": sid, "format": "json", "view": "raw"}},
		{"list_operations", "list_operations", map[string]any{"session_id": sid, "max_tokens": 600}},
		{"list_sessions", "list_sessions", map[string]any{"max_tokens": 600}},
		{"search_sessions", "search_sessions", map[string]any{"query": "limiter", "limit": 50, "max_tokens": 800}},
	}
}

// pagingThread is the tool-heavy thread, 40 small sessions that mention
// the limiter, and 30 more tags.
func pagingThread(t *testing.T) (*ops.Service, string) {
	svc, sid := toolHeavy(t)
	ctx := context.Background()
	for i := range 40 {
		c, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: fmt.Sprintf("side session %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		msgs := []model.NewMessage{{Role: model.RoleUser, Content: fmt.Sprintf("Does the limiter of service %d return early?", i)}, {Role: model.RoleAssistant, Content: "Yes, with a wrapped error."}}
		if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: c.SessionID, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		idx := 100 + i
		if _, err := svc.TagMessages(ctx, ops.TagArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &idx, EndIdx: &idx}, Tags: []string{fmt.Sprintf("t%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	return svc, sid
}

// TestToolHeavyPagesToTheEnd pages through every paged read, over MCP
// and over POST /api, following next_cursor (next_start_idx for
// get_message_range) until there is none: every page is within its
// budget, and the pages give together exactly what the read gives
// without a budget, nothing lost and nothing twice.
func TestToolHeavyPagesToTheEnd(t *testing.T) {
	t.Parallel()
	svc, sid := pagingThread(t)
	fs, _ := faces(t, svc)
	for _, f := range fs {
		for _, r := range pagedReads(sid) {
			t.Run(f.name+"/"+r.name, func(t *testing.T) {
				t.Parallel() // reads only, of a thread no subtest changes
				whole := maps.Clone(r.args)
				whole["max_tokens"] = 0
				ref, _, refused := f.call(t, r.tool, whole)
				if refused != "" {
					t.Fatalf("without a budget: %s", refused)
				}
				want := itemIDs(t, ref)
				// A search's limit is a page even without a budget: the
				// whole is every page of it.
				for cursor, _ := ref["next_cursor"].(string); cursor != ""; cursor, _ = ref["next_cursor"].(string) {
					whole["cursor"] = cursor
					if ref, _, refused = f.call(t, r.tool, whole); refused != "" {
						t.Fatalf("without a budget: %s", refused)
					}
					want = append(want, itemIDs(t, ref)...)
				}
				budget := reads.DefaultMaxTokens
				if b, ok := r.args["max_tokens"].(int); ok {
					budget = b
				}
				args := maps.Clone(r.args)
				var got []string
				pages := 0
				for {
					res, body, refused := f.call(t, r.tool, args)
					if refused != "" {
						t.Fatalf("page %d: %s", pages+1, refused)
					}
					pages++
					if n := tokens.Count(body); n > budget {
						t.Errorf("page %d: %d tokens, over its budget of %d", pages, n, budget)
					}
					ids := itemIDs(t, res)
					if len(ids) == 0 {
						t.Fatalf("page %d gives nothing: %.300s", pages, body)
					}
					got = append(got, ids...)
					if next, ok := res["next_start_idx"].(float64); ok {
						args["start_idx"] = int(next)
						continue
					}
					cursor, _ := res["next_cursor"].(string)
					if cursor == "" {
						if res["complete"] != true && res["omitted"].(float64) != 0 {
							t.Errorf("the last page leaves %v out and gives no cursor", res["omitted"])
						}
						break
					}
					args["cursor"] = cursor
					if pages > 300 {
						t.Fatalf("still paging after %d pages", pages)
					}
				}
				if pages < 2 {
					t.Errorf("one page only: the read does not test paging")
				}
				if d := duplicates(got); len(d) > 0 {
					t.Errorf("given twice: %v", d)
				}
				if !slices.Equal(sortedIDs(got), sortedIDs(want)) {
					t.Errorf("%d pages gave %d items; the whole read gives %d", pages, len(got), len(want))
				}
			})
		}
	}
}

// TestResourcesPageToTheEnd reads the paged resources through their
// next_uri to the end: each read within its budget, together what the
// resource gives without one.
func TestResourcesPageToTheEnd(t *testing.T) {
	t.Parallel()
	svc, sid := pagingThread(t)
	cs := connect(t, New(tools.Local{Service: svc}, Options{}), "pager", nil)
	ctx := context.Background()
	read := func(uri string) (map[string]any, string) {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &out); err != nil {
			t.Fatal(err)
		}
		return out, res.Contents[0].Text
	}
	for _, c := range []struct {
		uri    string
		budget int
	}{
		{URISessions + "/" + sid, reads.DefaultMaxTokens},
		{URISessions + "/" + sid + "/context?max_tokens=5000", 5000},
		{URISessions + "?max_tokens=1000", 1000},
	} {
		t.Run(c.uri, func(t *testing.T) {
			base, _, _ := strings.Cut(c.uri, "?")
			ref, _ := read(base + "?max_tokens=0")
			want := itemIDs(t, ref)
			uri := c.uri
			var got []string
			pages := 0
			for uri != "" {
				res, body := read(uri)
				pages++
				if n := tokens.Count(body); n > c.budget {
					t.Errorf("page %d: %d tokens, over its budget of %d", pages, n, c.budget)
				}
				got = append(got, itemIDs(t, res)...)
				uri, _ = res["next_uri"].(string)
				if pages > 100 {
					t.Fatalf("still paging after %d pages", pages)
				}
			}
			if pages < 2 {
				t.Errorf("one page only: the resource does not test paging")
			}
			if d := duplicates(got); len(d) > 0 {
				t.Errorf("given twice: %v", d)
			}
			if !slices.Equal(sortedIDs(got), sortedIDs(want)) {
				t.Errorf("%d pages gave %d items; the whole gives %d", pages, len(got), len(want))
			}
		})
	}
}
