package reads_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

func TestSearchSessions(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	at := func(i int) time.Time { return opstest.T0.Add(time.Duration(i) * time.Minute) }
	pg := f.Messages("Postgres migration", []model.NewMessage{
		{Role: model.RoleUser, Content: "Plan the schema change.", CreatedAt: at(0)},
	})
	f.Now = f.Now.Add(time.Minute)
	chat := f.Messages("Weekly chat", []model.NewMessage{
		{Role: model.RoleUser, Content: "We moved to PostgreSQL last week; the old MySQL dump is gone.", CreatedAt: at(0)},
		{Role: model.RoleAssistant, Content: "Then the backups should use pg_dump against postgres directly.", CreatedAt: at(1)},
		{Role: model.RoleUser, Content: "Right. Postgres 16.", CreatedAt: at(2)},
		{Role: model.RoleUser, Content: "unrelated", CreatedAt: at(3)},
	})
	f.Now = f.Now.Add(time.Minute)
	once := f.Messages("Gardening", []model.NewMessage{
		{Role: model.RoleUser, Content: "Is postgres a plant?", CreatedAt: at(0)},
		{Role: model.RoleAssistant, Content: "No.", CreatedAt: at(1)},
	})
	f.Now = f.Now.Add(time.Minute)
	hidden := f.Messages("Snipped", []model.NewMessage{
		{Role: model.RoleUser, Content: "postgres, but snipped", CreatedAt: at(0)},
		{Role: model.RoleUser, Content: "nothing here", CreatedAt: at(1)},
	})
	f.MustCall("snip_messages", fmt.Sprintf(`{"session_id":%q,"start_idx":0,"end_idx":0}`, hidden))

	type want struct {
		id      string
		matched string
		count   int
	}
	tests := []struct {
		args  string
		total int
		want  []want
	}{
		// A title match first, then by how many messages match.
		{`{"query":"postgres"}`, 3, []want{{pg, "title", 0}, {chat, "content", 3}, {once, "content", 1}}},
		{`{"query":"POSTGRES","limit":2}`, 3, []want{{pg, "title", 0}, {chat, "content", 3}}},
		{`{"query":"chat"}`, 1, []want{{chat, "title", 0}}},
		{`{"query":"week"}`, 1, []want{{chat, "title,content", 1}}},
		{`{"query":"snipped"}`, 1, []want{{hidden, "title", 0}}}, // the snipped message is not in the thread
		{`{"query":"zebra"}`, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			r := f.MustCall("search_sessions", tt.args).(reads.SearchSessionsResult)
			if r.TotalSessions != tt.total || r.Searched != 4 || len(r.Sessions) != len(tt.want) {
				t.Fatalf("total %d of %d searched, %d listed: %+v", r.TotalSessions, r.Searched, len(r.Sessions), r.Sessions)
			}
			for i, w := range tt.want {
				m := r.Sessions[i]
				if m.Session.SessionID != w.id || strings.Join(m.Matched, ",") != w.matched || m.ContentMatches != w.count || len(m.Snippets) != min(w.count, reads.SearchSnippets) {
					t.Errorf("%d: %s matched %v (%d, %d snippets), want %s %s (%d)", i, m.Session.Title, m.Matched, m.ContentMatches, len(m.Snippets), w.id, w.matched, w.count)
				}
			}
		})
	}
	r := f.MustCall("search_sessions", `{"query":"pg_dump"}`).(reads.SearchSessionsResult)
	s := r.Sessions[0].Snippets[0]
	if s.Index != 1 || s.ID != "m2" || s.Role != model.RoleAssistant || s.Snippet != "Then the backups should use pg_dump against postgres directly." {
		t.Errorf("snippet %+v", s)
	}
	long := strings.Repeat("a", 300) + " needle " + strings.Repeat("b", 300)
	if got := reads.SessSnippet(long, "NEEDLE"); !strings.HasPrefix(got, "…aaa") || !strings.HasSuffix(got, "bbb…") || !strings.Contains(got, " needle ") || len(got) > 160+len("……") {
		t.Errorf("snippet of a long text: %q", got)
	}
}

func TestGetSessionHistory(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	sid := f.Messages("history", []model.NewMessage{
		{Role: model.RoleSystem, Content: "Be brief."},
		{Role: model.RoleUser, Content: "one"},
		{Role: model.RoleAssistant, Content: "two"},
		{Role: model.RoleUser, Content: "three", Name: "ana"},
		{Role: model.RoleAssistant, Content: "four"},
	})
	f.MustCall("digest_messages", `{"start_idx":1,"end_idx":2,"summary":"Counted to two."}`)
	f.MustCall("tag_messages", `{"start_idx":3,"end_idx":3,"tags":["late"]}`)
	tests := []struct {
		args           string
		count, leftOut int
		check          func(t *testing.T, r reads.SessionHistoryResult)
	}{
		{`{}`, 4, 0, func(t *testing.T, r reads.SessionHistoryResult) {
			want := "[0] 2026-01-26 09:00 system:\nBe brief.\n\n" +
				"[1] 2026-01-26 09:01 system — summary of 2 messages, 2026-01-26 09:01–09:02 UTC:\nCounted to two.\n\n" +
				"[2] 2026-01-26 09:03 user (ana):\nthree\n\n" +
				"[3] 2026-01-26 09:04 assistant:\nfour\n"
			if r.Format != "text" || r.View != "effective" || r.Text != want {
				t.Errorf("text:\n%s\nwant:\n%s", r.Text, want)
			}
		}},
		{`{"format":"markdown","limit":2}`, 2, 2, func(t *testing.T, r reads.SessionHistoryResult) {
			if !strings.HasPrefix(r.Text, "# history\n") || !strings.Contains(r.Text, "three") || strings.Contains(r.Text, "Counted") || !strings.Contains(r.Text, "`late`") {
				t.Errorf("markdown:\n%s", r.Text)
			}
		}},
		{`{"format":"json"}`, 4, 0, func(t *testing.T, r reads.SessionHistoryResult) {
			if len(r.Messages) != 4 || !r.Messages[1].Synthetic || r.Messages[3].ID != "m5" || r.Messages[3].Tags[0] != "late" || r.Text != "" {
				t.Errorf("json: %+v", r.Messages)
			}
		}},
		{`{"view":"raw","format":"json","limit":3}`, 3, 2, func(t *testing.T, r reads.SessionHistoryResult) {
			if r.View != "raw" || r.FirstIndex != 2 || r.Messages[0].ID != "m3" || r.Messages[0].Content != "two" || r.Messages[2].Tags[0] != "late" {
				t.Errorf("raw json: %+v", r)
			}
		}},
		{`{"view":"raw"}`, 5, 0, func(t *testing.T, r reads.SessionHistoryResult) {
			if !strings.Contains(r.Text, "[1] 2026-01-26 09:01 user:\none") || strings.Contains(r.Text, "Counted") {
				t.Errorf("raw text:\n%s", r.Text)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			r := f.MustCall("get_session_history", tt.args).(reads.SessionHistoryResult)
			if r.Session.SessionID != sid || r.Count != tt.count || r.LeftOut != tt.leftOut || r.Total != tt.count+tt.leftOut || r.FirstIndex != tt.leftOut {
				t.Fatalf("session %s, count %d, left out %d, total %d, first %d", r.Session.SessionID, r.Count, r.LeftOut, r.Total, r.FirstIndex)
			}
			tt.check(t, r)
		})
	}
}

func TestGetSessionHistoryOfALongThread(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("long", reads.MaxHistory+7)
	r := f.MustCall("get_session_history", `{"format":"json","max_tokens":0}`).(reads.SessionHistoryResult)
	if r.Count != reads.MaxHistory || r.LeftOut != 7 || r.Messages[0].Index != 7 || !strings.Contains(r.Note, "get_message_range") {
		t.Errorf("count %d, left out %d, first %d, note %q", r.Count, r.LeftOut, r.Messages[0].Index, r.Note)
	}
	// Within the default budget, the latest that fit, and a cursor to
	// the earlier ones, page after page.
	r = f.MustCall("get_session_history", `{"format":"json"}`).(reads.SessionHistoryResult)
	if r.Count >= reads.MaxHistory || r.Count < 50 || r.Omitted != reads.MaxHistory-r.Count || r.NextCursor == "" || r.ResultTokens > reads.DefaultMaxTokens || r.Messages[len(r.Messages)-1].Index != reads.MaxHistory+6 || r.FirstIndex != r.Messages[0].Index {
		t.Fatalf("default budget: count %d, omitted %d, first %d, cursor %q, %d tokens", r.Count, r.Omitted, r.FirstIndex, r.NextCursor, r.ResultTokens)
	}
	page := f.MustCall("get_session_history", fmt.Sprintf(`{"format":"json","cursor":%q}`, r.NextCursor)).(reads.SessionHistoryResult)
	if page.Count == 0 || page.Messages[len(page.Messages)-1].Index != r.FirstIndex-1 || page.Omitted != r.Omitted-page.Count {
		t.Errorf("the next page: count %d, last %d (want %d), omitted %d", page.Count, page.Messages[len(page.Messages)-1].Index, r.FirstIndex-1, page.Omitted)
	}
}

func TestSessionToolsRefusals(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	f.Session("one", 3)
	tests := []struct {
		tool, args string
		kind       error
		says       string
	}{
		{"search_sessions", `{"query":"  "}`, ops.ErrInvalid, "query is empty"},
		{"search_sessions", `{"query":"x","limit":0}`, ops.ErrInvalid, "limit 0 is outside 1..200"},
		{"search_sessions", `{"query":"x","limit":500}`, ops.ErrInvalid, "limit 500 is outside 1..200"},
		{"search_sessions", `{"q":"x"}`, ops.ErrInvalid, `has no argument "q"`},
		{"get_session_history", `{"format":"yaml"}`, ops.ErrInvalid, `format "yaml" is not text, markdown or json`},
		{"get_session_history", `{"format":"openai"}`, ops.ErrInvalid, "use assemble_context format=openai"},
		{"get_session_history", `{"view":"pretty"}`, ops.ErrInvalid, `view "pretty" is not effective or raw`},
		{"get_session_history", `{"limit":0}`, ops.ErrInvalid, "limit 0 is outside 1..5000"},
		{"get_session_history", `{"limit":6000}`, ops.ErrInvalid, "get_message_range"},
		{"get_session_history", `{"session_id":"nosuchsession"}`, ops.ErrNotFound, `session "nosuchsession" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			before := f.FileHash()
			_, err := f.Call(tt.tool, tt.args)
			if !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.says) {
				t.Fatalf("error %v, want %v saying %q", err, tt.kind, tt.says)
			}
			if f.FileHash() != before {
				t.Errorf("the database file changed")
			}
		})
	}
}

// TestListSessionsMostRecentFirst: list_sessions gives every session,
// the most recently updated first, with its message count.
func TestListSessionsMostRecentFirst(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
	a := f.Session("alpha", 1)
	f.Now = f.Now.Add(time.Minute)
	b := f.Session("beta", 2)
	list := f.MustCall("list_sessions", `{}`).(reads.ListSessionsResult)
	if list.Total != 2 || len(list.Sessions) != 2 || list.Sessions[0].SessionID != b || list.Sessions[1].SessionID != a || list.Sessions[1].MessageCount != 1 {
		t.Errorf("list_sessions: %+v", list)
	}
}
