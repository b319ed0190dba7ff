package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/model"
)

const (
	ccLong     = "../testdata/claude-code/spotter_long_session.jsonl"
	ccTools    = "../testdata/claude-code/spotter_tool_heavy.jsonl"
	ccRewind   = "../testdata/claude-code/claude-code-log_dag_compact_after_rewind.jsonl"
	ccLongSID  = "4d5611e5-241a-462a-8d15-5122611a9569"
	ccToolsSID = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
)

func readCC(t testing.TB, data []byte) (*importtest.Thread, []formats.Problem) {
	t.Helper()
	rec := importtest.NewRecorder(t)
	problems, err := Read(bytes.NewReader(data), rec)
	if err != nil {
		t.Fatalf("ReadClaudeCode: %v (problems %v)", err, problems)
	}
	if len(rec.Threads) != 1 || rec.Open {
		t.Fatalf("%d threads (open %v), want one, closed", len(rec.Threads), rec.Open)
	}
	return rec.Threads[0], problems
}

func readCCFile(t testing.TB, path string) *importtest.Thread {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	th, problems := readCC(t, data)
	if len(problems) > 0 {
		t.Fatalf("%s: problems %v", path, problems)
	}
	return th
}

// checkCCThread checks what must hold of every imported thread: times in
// order and in UTC; every tool result answers a call made earlier in the
// thread, once; every part keeps its source block; content is the parts
// rendered, or with none (plain text) not blank; digests in order and not overlapping.
func checkCCThread(t *testing.T, th *importtest.Thread) {
	t.Helper()
	calls := map[string]bool{}
	answered := map[string]bool{}
	var last time.Time
	for i, m := range th.Messages {
		if m.CreatedAt.IsZero() || m.CreatedAt.Location() != time.UTC {
			t.Errorf("message %d (%s): time %v is not set in UTC", i, m.Key, m.CreatedAt)
		}
		if m.CreatedAt.Before(last) {
			t.Errorf("message %d (%s): time %v goes back from %v", i, m.Key, m.CreatedAt, last)
		}
		last = m.CreatedAt
		parts := importtest.Parts(t, m)
		if len(parts) == 0 {
			// Plain text: a message of a string, its content alone.
			if strings.TrimSpace(m.Content) == "" {
				t.Errorf("message %d (%s): no parts and no content", i, m.Key)
			}
			continue
		}
		if got := formats.RenderContent(parts); got != m.Content {
			t.Errorf("message %d (%s): content is not its parts rendered", i, m.Key)
		}
		for _, p := range parts {
			if len(p.Raw) == 0 || !json.Valid(p.Raw) {
				t.Errorf("message %d (%s): %s part without its source block", i, m.Key, p.Type)
			}
			switch p.Type {
			case model.PartToolCall:
				if m.Role != model.RoleAssistant {
					t.Errorf("message %d (%s): a tool call in a %s message", i, m.Key, m.Role)
				}
				calls[p.ToolCallID] = true
			case model.PartToolResult:
				if m.Role != model.RoleTool {
					t.Errorf("message %d (%s): a tool result in a %s message", i, m.Key, m.Role)
				}
				if !calls[p.ToolCallID] {
					t.Errorf("message %d (%s): result for %s, which no earlier message calls", i, m.Key, p.ToolCallID)
				}
				if answered[p.ToolCallID] {
					t.Errorf("message %d (%s): %s answered twice", i, m.Key, p.ToolCallID)
				}
				answered[p.ToolCallID] = true
			}
		}
		if m.Role == model.RoleTool && (len(parts) == 0 || parts[0].Type != model.PartToolResult) {
			t.Errorf("message %d (%s): a tool message must start with its result", i, m.Key)
		}
		if m.Meta["uuid"] == "" || !strings.HasPrefix(m.Key, m.Meta["uuid"]) {
			t.Errorf("message %d: key %s, meta uuid %q", i, m.Key, m.Meta["uuid"])
		}
	}
	prev := -1
	for _, d := range th.Digests {
		from, to := th.IndexOf(d.From), th.IndexOf(d.To)
		if from <= prev {
			t.Errorf("digest %s..%s overlaps the one before", d.From, d.To)
		}
		prev = to
	}
	if len(th.Messages) > 0 && !th.Info.CreatedAt.Equal(th.Messages[0].CreatedAt) {
		t.Errorf("thread created %v, first message %v", th.Info.CreatedAt, th.Messages[0].CreatedAt)
	}
	if th.Info.Source != formats.ClaudeCode {
		t.Errorf("source %q", th.Info.Source)
	}
}

func TestClaudeCodeRewindAndCompaction(t *testing.T) {
	t.Parallel()
	th, problems := readCC(t, importtest.File(t, ccRewind))
	checkCCThread(t, th)
	// The newest leaf is p1a (10:41); its branch runs back through the
	// compact boundary's logicalParentUuid (b2a2) to u1. The first attempt
	// after the rewind point (b1u, b1a) is abandoned, and a note says so;
	// the boundary and the compact summary are not messages.
	if len(problems) != 1 || problems[0].String() != "line 3: 1 abandoned branch (2 records) was not imported: weft imports the active branch, the one with the newest record; the abandoned branch starts here, at record b1u" || !problems[0].Note {
		t.Errorf("problems %q", problems)
	}
	var keys []string
	for _, m := range th.Messages {
		keys = append(keys, m.Key)
	}
	want := []string{"u1", "a1", "b2u", "b2a", "b2u2", "b2a2", "p1u", "p1a"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if got := th.Roles(); got != "user assistant user assistant user assistant user assistant" {
		t.Errorf("roles %s", got)
	}
	for _, m := range th.Messages {
		if strings.Contains(m.Content, "First attempt") || strings.Contains(m.Content, "First answer") {
			t.Errorf("the abandoned branch is in the thread: %s %q", m.Key, m.Content)
		}
		if strings.Contains(m.Content, "continued from a previous conversation") {
			t.Errorf("the compact summary is a message: %s", m.Key)
		}
	}
	wantDigest := []importtest.Digest{{From: "u1", To: "b2a2",
		Summary: "This session is being continued from a previous conversation that ran out of context. Summary: the user asked for a plan."}}
	if !slices.Equal(th.Digests, wantDigest) {
		t.Errorf("digests %+v, want %+v", th.Digests, wantDigest)
	}
	info := th.Info
	if info.Key != "s1" || info.Title != "Start" || !info.CreatedAt.Equal(time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("info %+v", info)
	}
	first := th.Messages[0]
	if first.Meta["cwd"] != "/tmp" || th.Messages[1].Meta["model"] != "claude-sonnet-4-20250514" || th.Messages[1].Meta["cwd"] != "" {
		t.Errorf("meta %v / %v", first.Meta, th.Messages[1].Meta)
	}
}

func TestClaudeCodeToolHeavy(t *testing.T) {
	t.Parallel()
	facts := countCCFile(t, ccTools)
	if facts.user != 13 || facts.assistant != 9 || len(facts.messageIDs) != 4 || facts.toolUse != 6 || facts.toolResult != 6 || facts.userTyped != 5 {
		t.Fatalf("facts %+v", facts)
	}
	th := readCCFile(t, ccTools)
	checkCCThread(t, th)
	// 13 user + 9 assistant records, 6 tool calls. The assistant records
	// make 4 messages (4 message IDs); the 6 tool results 6 tool messages;
	// the other 7 user records (5 of text typed or echoed by Claude Code,
	// 2 "[Request interrupted by user]") are user messages. 4+6+7 = 17.
	// Records 29-30 are one response with two parallel calls
	// (WebSearch, Glob): the Glob call and its result hang off the branch
	// as a false fork and are taken in.
	if len(th.Messages) != 17 {
		t.Errorf("%d messages, want 17", len(th.Messages))
	}
	wantRoles := "user assistant tool assistant tool user user user user user assistant tool tool assistant tool tool user"
	if got := th.Roles(); got != wantRoles {
		t.Errorf("roles\n %s\nwant\n %s", got, wantRoles)
	}
	if th.Info.Key != ccToolsSID || th.Info.Title != "start phoenix in background" {
		t.Errorf("info %+v", th.Info)
	}
	if !th.Info.CreatedAt.Equal(time.Date(2026, 2, 10, 22, 57, 54, 684e6, time.UTC)) {
		t.Errorf("created %v", th.Info.CreatedAt)
	}
	// Four records of msg_01LbyjvsALGe2gMsTgDSj7e6 make one message.
	m := th.ByKey(t, "61045c3d-2ffd-4c10-925c-c82d72e55ebb")
	var types []string
	for _, p := range importtest.Parts(t, m) {
		types = append(types, string(p.Type)+":"+p.ToolName)
	}
	if got := strings.Join(types, " "); got != "text: thinking: tool_call:WebSearch tool_call:Glob" {
		t.Errorf("merged parts %s", got)
	}
	if m.Meta["model"] != "claude-opus-4-6" {
		t.Errorf("meta %v", m.Meta)
	}
	glob := th.ByKey(t, "d2b1430f-30fc-408e-ad65-bedf7ba75900")
	if glob.Role != model.RoleTool || glob.Name != "Glob" || importtest.Parts(t, glob)[0].ToolCallID != "toolu_01JJds55jYrYwd9TktNGndRY" {
		t.Errorf("Glob result %+v", glob)
	}
	// A response whose second call (WebFetch) was written after the first
	// call's result is still one message, the results after it.
	read := th.ByKey(t, "9c0157de-950c-4b36-8c81-537b79e0d6b4")
	if !strings.Contains(read.Content, "[tool call Read]") || !strings.Contains(read.Content, "[tool call WebFetch]") {
		t.Errorf("Read/WebFetch response %q", read.Content)
	}
	// the /mcp command's caveat is a user message marked as meta; the
	// system records that echo the command are not messages
	caveat := th.ByKey(t, "faf199ff-2cfa-4656-97bc-8c0ffb7c025c")
	if caveat.Meta["isMeta"] != "true" {
		t.Errorf("caveat meta %v", caveat.Meta)
	}
	if th.IndexOf("2ef15da6-63ae-4a98-b781-676d95ac2692") >= 0 {
		t.Errorf("a system local_command record was imported")
	}
}

// ccFileFacts counts a session file with plain JSON decoding, independent
// of the importer.
type ccFileFacts struct {
	lines, user, assistant, progress      int
	toolUse, toolResult, toolErrors       int
	thinking, userTyped, compactSummaries int
	messageIDs                            map[string]bool
	firstUserText, compactSummaryText     string
	compactLogicalParent, lastPreBoundary string
	latest                                time.Time
	// records written after the compact boundary
	afterIDs                 map[string]bool
	afterResults, afterTyped int
}

func countCCFile(t *testing.T, path string) ccFileFacts {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := ccFileFacts{messageIDs: map[string]bool{}, afterIDs: map[string]bool{}}
	lastUUID := ""
	for line := range bytes.Lines(data) {
		f.lines++
		var r struct {
			Type, UUID, Subtype, LogicalParentUUID, Timestamp string
			IsCompactSummary                                  bool
			Message                                           struct {
				ID      string
				Content json.RawMessage
			}
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %d: %v", f.lines, err)
		}
		if ts, err := time.Parse(time.RFC3339Nano, r.Timestamp); err == nil && r.UUID != "" {
			if ts.After(f.latest) {
				f.latest = ts
			}
		}
		if r.Subtype == "compact_boundary" {
			f.compactLogicalParent, f.lastPreBoundary = r.LogicalParentUUID, lastUUID
		}
		switch r.Type {
		case "progress":
			f.progress++
		case "user":
			f.user++
			lastUUID = r.UUID
			var s string
			if json.Unmarshal(r.Message.Content, &s) == nil {
				if r.IsCompactSummary {
					f.compactSummaries++
					f.compactSummaryText = s
				} else {
					f.userTyped++
					if f.compactLogicalParent != "" {
						f.afterTyped++
					}
					if f.firstUserText == "" {
						f.firstUserText = s
					}
				}
			}
		case "assistant":
			f.assistant++
			lastUUID = r.UUID
			f.messageIDs[r.Message.ID] = true
			if f.compactLogicalParent != "" {
				f.afterIDs[r.Message.ID] = true
			}
		}
		var blocks []struct {
			Type    string
			IsError bool `json:"is_error"`
		}
		if json.Unmarshal(r.Message.Content, &blocks) == nil {
			for _, b := range blocks {
				switch b.Type {
				case "tool_use":
					f.toolUse++
				case "tool_result":
					f.toolResult++
					if f.compactLogicalParent != "" {
						f.afterResults++
					}
					if b.IsError {
						f.toolErrors++
					}
				case "thinking":
					f.thinking++
				}
			}
		}
	}
	return f
}

func TestClaudeCodeLongSession(t *testing.T) {
	t.Parallel()
	facts := countCCFile(t, ccLong)
	// What SOURCES.md says of the file.
	if facts.lines != 1512 || facts.user != 154 || facts.assistant != 254 || facts.toolUse != 150 || facts.toolResult != 150 || facts.progress != 1083 {
		t.Fatalf("the file is not the one SOURCES.md describes: %+v", facts)
	}
	// And what else the counts below rest on: the 254 assistant records are
	// 139 API responses; the 154 user records are 150 carrying one tool
	// result each, 3 typed (the task, "continue", a task notification) and
	// the compaction's summary; one compact_boundary, whose
	// logicalParentUuid is not in the file.
	if len(facts.messageIDs) != 139 || facts.userTyped != 3 || facts.compactSummaries != 1 || facts.thinking != 14 || facts.toolErrors != 5 {
		t.Fatalf("facts %+v", facts)
	}

	th := readCCFile(t, ccLong)
	checkCCThread(t, th)
	// The thread has every record of the file: the tree has no real fork
	// (every branching is a progress chain beside the conversation). So:
	// 139 assistant messages, one per response (254 records merged, ten
	// of them across the results of the response's earlier calls);
	// 150 tool messages, one per result; 3 user messages; the compact
	// summary is the digest, not a message. 139+150+3 = 292.
	count := map[model.Role]int{}
	calls, thinking, errs := 0, 0, 0
	for _, m := range th.Messages {
		count[m.Role]++
		for _, p := range importtest.Parts(t, m) {
			switch {
			case p.Type == model.PartToolCall:
				calls++
			case p.Type == model.PartThinking:
				thinking++
			case p.Type == model.PartToolResult && p.IsError:
				errs++
			}
		}
	}
	if len(th.Messages) != 292 || count[model.RoleAssistant] != 139 || count[model.RoleTool] != 150 || count[model.RoleUser] != 3 {
		t.Errorf("%d messages %v, want 292: 139 assistant, 150 tool, 3 user", len(th.Messages), count)
	}
	if calls != facts.toolUse || thinking != facts.thinking || errs != facts.toolErrors {
		t.Errorf("%d calls, %d thinking, %d errors; the file has %d, %d, %d", calls, thinking, errs, facts.toolUse, facts.thinking, facts.toolErrors)
	}
	if got := th.Roles(); !strings.HasPrefix(got, "user assistant tool tool assistant tool assistant tool assistant tool assistant tool tool tool") {
		t.Errorf("roles start %.120s", got)
	}
	info := th.Info
	wantTitle := "Work on bead spotter-dov. Run bd show spotter-dov to see the issue details and…"
	if info.Key != ccLongSID || info.Title != wantTitle || !strings.HasPrefix(facts.firstUserText, strings.TrimSuffix(wantTitle, "…")) {
		t.Errorf("info %+v", info)
	}
	if !info.CreatedAt.Equal(time.Date(2026, 2, 12, 16, 2, 25, 284e6, time.UTC)) {
		t.Errorf("created %v", info.CreatedAt)
	}
	last := th.Messages[len(th.Messages)-1].CreatedAt
	if last.Before(time.Date(2026, 2, 12, 21, 3, 0, 0, time.UTC)) || last.After(facts.latest) {
		t.Errorf("last message at %v", last)
	}
	if m := th.Messages[0].Meta; m["cwd"] != "/home/USER/projects/spotter-worktrees/spotter-dov" || m["gitBranch"] != "spotter-dov" {
		t.Errorf("first message meta %v", m)
	}

	// The compaction: its logical parent is missing from the file, so the
	// walk goes on from the newest leaf written before the boundary, the
	// last record before it (a tool result, ce1910a6). The digest covers
	// the thread from its first message to that one, and holds the summary.
	if facts.compactLogicalParent != "459e838f-d7ea-4f7d-94ad-2cb4d227dc77" || facts.lastPreBoundary != "ce1910a6-d099-47d6-b88c-2f2f8abc0cc2" {
		t.Fatalf("boundary facts %+v", facts)
	}
	if len(th.Digests) != 1 {
		t.Fatalf("digests %+v", th.Digests)
	}
	d := th.Digests[0]
	if d.From != "daa5a4bb-530c-4055-b20c-bde38255c99e" || d.To != facts.lastPreBoundary || d.Summary != strings.TrimSpace(facts.compactSummaryText) {
		t.Errorf("digest %s..%s %.80q", d.From, d.To, d.Summary)
	}
	// What the digest leaves in view: the messages of the records written
	// after the boundary: 160 = 78 responses + 81 results + 1 typed (the
	// task notification). The 132 before it (61 responses, 69 results, the
	// task and "continue") are the digest's.
	after := len(facts.afterIDs) + facts.afterResults + facts.afterTyped
	if after != 160 || len(facts.afterIDs) != 78 || facts.afterResults != 81 || facts.afterTyped != 1 {
		t.Errorf("facts after the boundary: %d responses, %d results, %d typed", len(facts.afterIDs), facts.afterResults, facts.afterTyped)
	}
	if got := len(th.Messages) - 1 - th.IndexOf(d.To); got != after {
		t.Errorf("%d messages after the compaction, want %d", got, after)
	}
}

func TestClaudeCodeSnippets(t *testing.T) {
	t.Parallel()
	rec := func(typ, uuid, parent, ts, extra string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"S","timestamp":"2026-01-01T10:00:` + ts + `Z"` + extra + "}\n"
	}
	user := func(uuid, parent, ts, content string) string {
		return rec("user", uuid, parent, ts, `,"message":{"role":"user","content":`+content+`}`)
	}
	asst := func(uuid, parent, ts, id, content string) string {
		return rec("assistant", uuid, parent, ts, `,"message":{"id":"`+id+`","role":"assistant","model":"m","content":`+content+`}`)
	}
	toolUse := func(id, name string) string {
		return `[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{"x":1}}]`
	}
	result := func(id, text string) string {
		return `[{"type":"tool_result","tool_use_id":"` + id + `","content":"` + text + `"}]`
	}

	t.Run("mixed user record", func(t *testing.T) {
		in := user("u", "", "00", `"go"`) +
			asst("a", "u", "01", "m1", `[{"type":"tool_use","id":"t1","name":"Read","input":{}},{"type":"tool_use","id":"t2","name":"Bash","input":{"c":"ls"}}]`) +
			user("r", "a", "02", `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"one"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]},{"type":"tool_result","tool_use_id":"t2","content":"two","is_error":true},{"type":"text","text":"stop there"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AA=="}}]`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		var keys []string
		for _, m := range th.Messages {
			keys = append(keys, string(m.Role)+":"+m.Key)
		}
		if got := strings.Join(keys, " "); got != "user:u assistant:a tool:r#1 tool:r#2 user:r" {
			t.Fatalf("messages %s", got)
		}
		r1, r2, u := th.Messages[2], th.Messages[3], th.Messages[4]
		p1 := importtest.Parts(t, r1)
		if len(p1) != 2 || p1[0].Text != "one" || p1[1].Type != model.PartImage || p1[1].MediaType != "image/png" || r1.Name != "Read" {
			t.Errorf("first result %+v", p1)
		}
		if r2.Content != "[tool error] two" || r2.Name != "Bash" {
			t.Errorf("second result %q", r2.Content)
		}
		if u.Content != "stop there\n\n[image image/jpeg]" {
			t.Errorf("user content %q", u.Content)
		}
		if a := th.Messages[1]; a.Content != "[tool call Read]\n\n[tool call Bash] {\"c\":\"ls\"}" {
			t.Errorf("assistant content %q", a.Content)
		}
		// the raw block is kept verbatim
		if raw := string(importtest.Parts(t, r2)[0].Raw); raw != `{"type":"tool_result","tool_use_id":"t2","content":"two","is_error":true}` {
			t.Errorf("raw %s", raw)
		}
	})

	t.Run("string content and thinking only", func(t *testing.T) {
		in := user("u", "", "00", `"hello\nsecond line"`) +
			asst("a", "u", "01", "m1", `[{"type":"thinking","thinking":"hmm","signature":"x"}]`) +
			asst("b", "a", "02", "m2", `"plain answer"`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		if th.Roles() != "user assistant assistant" || th.Messages[1].Content != "" || th.Messages[2].Content != "plain answer" {
			t.Fatalf("%s %q", th.Roles(), th.Messages[1].Content)
		}
		if p := importtest.Parts(t, th.Messages[1]); len(p) != 1 || p[0].Type != model.PartThinking || p[0].Text != "hmm" {
			t.Errorf("thinking parts %+v", p)
		}
		// A string is plain text: its message has no parts (as a Chat
		// Completions message of a string has none), only its content.
		if p := importtest.Parts(t, th.Messages[0]); len(p) != 0 || th.Messages[0].Content != "hello\nsecond line" || th.Info.Title != "hello" {
			t.Errorf("string content: parts %+v, content %q, title %q", p, th.Messages[0].Content, th.Info.Title)
		}
	})

	t.Run("titles", func(t *testing.T) {
		base := user("u", "", "00", `"<command-name>/init</command-name>\n<command-args>fast</command-args>"`) + asst("a", "u", "01", "m", `"ok"`)
		cases := []struct{ in, want string }{
			{base, "/init fast"},
			{base + user("v", "a", "02", `"`+strings.Repeat("word ", 30)+`"`), strings.TrimSpace(strings.Repeat("word ", 16)) + "…"},
			{`{"type":"summary","summary":"Other session","leafUuid":"zzz"}` + "\n" + base + `{"type":"summary","summary":"This one","leafUuid":"a"}` + "\n", "This one"},
			{`{"type":"summary","summary":"Only summary","leafUuid":"zzz"}` + "\n" + base, "Only summary"},
			{base + `{"type":"custom-title","customTitle":"Old name","sessionId":"S"}` + "\n" + `{"type":"custom-title","customTitle":"Renamed","sessionId":"S"}` + "\n" +
				`{"type":"summary","summary":"This one","leafUuid":"a"}` + "\n", "Renamed"},
		}
		for _, c := range cases {
			th, _ := readCC(t, []byte(c.in))
			if th.Info.Title != c.want {
				t.Errorf("title %q, want %q", th.Info.Title, c.want)
			}
		}
	})

	t.Run("parallel calls, result of the first beside the branch", func(t *testing.T) {
		// As in anthropics/claude-code#37779: B and C are one response; the
		// result for B's call hangs off B, the branch goes on from C's.
		in := user("u", "", "00", `"two files"`) +
			asst("B", "u", "01", "m1", toolUse("ta", "Write")) +
			asst("C", "B", "02", "m1", toolUse("tb", "Write")) +
			user("D", "B", "03", result("ta", "a done")) +
			user("E", "C", "04", result("tb", "b done")) +
			asst("F", "E", "05", "m2", `[{"type":"text","text":"both written"}]`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		var keys []string
		for _, m := range th.Messages {
			keys = append(keys, m.Key)
		}
		if got := strings.Join(keys, " "); got != "u B D E F" || th.Messages[1].Content != "[tool call Write] {\"x\":1}\n\n[tool call Write] {\"x\":1}" {
			t.Errorf("messages %s, %q", got, th.Messages[1].Content)
		}
	})

	t.Run("a real fork is not taken in", func(t *testing.T) {
		// a rewind to after a tool call: the old follow-up (user text) is
		// abandoned even though it follows a result of the same call
		in := user("u", "", "00", `"go"`) +
			asst("a", "u", "01", "m1", toolUse("t1", "Bash")) +
			user("r", "a", "02", result("t1", "out")) +
			user("old", "r", "03", `"first try"`) +
			asst("oa", "old", "04", "m2", toolUse("t2", "Bash")) +
			user("or", "oa", "05", result("t2", "old out")) +
			user("new", "r", "06", `"second try"`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		if got := th.Roles(); got != "user assistant tool user" || th.Messages[3].Key != "new" {
			t.Errorf("roles %s", got)
		}
	})

	t.Run("two compactions, one without its logical parent", func(t *testing.T) {
		in := user("u1", "", "00", `"one"`) +
			asst("a1", "u1", "01", "m1", `"r1"`) +
			rec("system", "cb1", "", "02", `,"subtype":"compact_boundary","logicalParentUuid":"a1"`) +
			rec("user", "cs1", "cb1", "03", `,"isCompactSummary":true,"message":{"role":"user","content":"summary one"}`) +
			user("u2", "cs1", "04", `"two"`) +
			asst("a2", "u2", "05", "m2", `"r2"`) +
			rec("progress", "p", "a2", "06", `,"data":{}`) +
			rec("system", "cb2", "", "07", `,"subtype":"compact_boundary","logicalParentUuid":"gone"`) +
			rec("user", "cs2", "cb2", "08", `,"isCompactSummary":true,"message":{"role":"user","content":[{"type":"text","text":"summary two"}]}`) +
			rec("progress", "p2", "cs2", "09", `,"data":{}`) +
			user("u3", "p2", "10", `"three"`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		want := []importtest.Digest{{From: "u1", To: "a1", Summary: "summary one"}, {From: "u2", To: "a2", Summary: "summary two"}}
		if th.Roles() != "user assistant user assistant user" || !slices.Equal(th.Digests, want) {
			t.Errorf("roles %s, digests %+v", th.Roles(), th.Digests)
		}
	})

	t.Run("compaction with nothing before it", func(t *testing.T) {
		in := rec("system", "cb", "", "00", `,"subtype":"compact_boundary"`) +
			rec("user", "cs", "cb", "01", `,"isCompactSummary":true,"message":{"role":"user","content":"what came before"}`) +
			user("u", "cs", "02", `"go on"`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		if th.Roles() != "user user" || th.Messages[0].Meta["isCompactSummary"] != "true" || len(th.Digests) != 0 {
			t.Errorf("roles %s, digests %+v", th.Roles(), th.Digests)
		}
	})

	t.Run("subagent transcript", func(t *testing.T) {
		in := rec("user", "x", "", "00", `,"isSidechain":true,"agentId":"a7","message":{"role":"user","content":"look around"}`) +
			rec("assistant", "y", "x", "01", `,"isSidechain":true,"agentId":"a7","message":{"id":"m","role":"assistant","content":"done"}`)
		th, _ := readCC(t, []byte(in))
		if th.Info.Key != "S/agent-a7" || len(th.Messages) != 2 {
			t.Errorf("info %+v, %d messages", th.Info, len(th.Messages))
		}
		// inline sidechain records do not make the branch
		in2 := user("u", "", "00", `"main"`) + asst("a", "u", "01", "m", `"main answer"`) + in
		th, _ = readCC(t, []byte(in2))
		if th.Info.Key != "S" || th.Roles() != "user assistant" {
			t.Errorf("info %+v, roles %s", th.Info, th.Roles())
		}
	})

	t.Run("cycles and dangling parents", func(t *testing.T) {
		in := user("a", "b", "00", `"one"`) + user("b", "a", "01", `"two"`) +
			user("c", "nowhere", "02", `"three"`) + user("self", "self", "03", `"four"`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		if th.Roles() != "user" || th.Messages[0].Key != "self" {
			t.Errorf("roles %s", th.Roles())
		}
		th, _ = readCC(t, []byte(user("a", "b", "00", `"one"`)+user("b", "a", "01", `"two"`)))
		if th.Roles() != "user user" || th.Messages[1].Key != "b" {
			t.Errorf("cycle only: %s", th.Roles())
		}
	})

	t.Run("missing and equal times", func(t *testing.T) {
		in := `{"type":"user","uuid":"u","parentUuid":null,"message":{"role":"user","content":"no time"}}` + "\n" +
			asst("a", "u", "05", "m", `"five"`) +
			`{"type":"user","uuid":"v","parentUuid":"a","timestamp":"yesterday","message":{"role":"user","content":"bad time"}}` + "\n" +
			asst("x", "v", "06", "m2", `"leaf one"`) + asst("y", "v", "06", "m3", `"leaf two, later in the file"`)
		th, _ := readCC(t, []byte(in))
		checkCCThread(t, th)
		if th.Roles() != "user assistant user assistant" || th.Messages[3].Key != "y" {
			t.Errorf("roles %s", th.Roles())
		}
		if !th.Messages[0].CreatedAt.Equal(th.Messages[1].CreatedAt) || !th.Messages[2].CreatedAt.Equal(th.Messages[1].CreatedAt) {
			t.Errorf("times %v %v %v", th.Messages[0].CreatedAt, th.Messages[1].CreatedAt, th.Messages[2].CreatedAt)
		}
	})
}

func TestClaudeCodeBroken(t *testing.T) {
	t.Parallel()
	rewind, err := os.ReadFile(ccRewind)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(rewind, []byte("\n"))
	garbage := make([]byte, 4096)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rnd.UintN(256))
	}
	manyBad := strings.Repeat("nope\n", 500) + string(rewind)
	chatgpt, _ := os.ReadFile("../testdata/chatgpt-export/chatgpt2graph_conversations.json")
	codex, _ := os.ReadFile("../testdata/codex-rollout/rollout_all_record_types.jsonl")
	openai, _ := os.ReadFile("../testdata/openai-messages/llamafactory_mllm_demo.json")

	tests := []struct {
		name     string
		in       []byte
		err      string // "" for an import
		messages int
		problems []int // lines of the problems
		problem  string
	}{
		{name: "truncated last line", in: rewind[:len(rewind)-200], messages: 7, problems: []int{12}, problem: "not JSON"},
		{name: "non-JSON line in the middle",
			in:       slices.Concat(bytes.Join(lines[:4], nil), []byte("this is not json\n"), bytes.Join(lines[4:], nil)),
			messages: 8, problems: []int{5}, problem: "not JSON"},
		{name: "unreadable message",
			in:       slices.Concat(bytes.Join(lines[:2], nil), []byte(`{"type":"user","uuid":"bad","parentUuid":"a1","message":{"role":"user","content":42}}`+"\n"), bytes.Join(lines[2:], nil)),
			messages: 8, problems: []int{3}, problem: "user record bad: message content is neither text nor a list of blocks"},
		{name: "unreadable block",
			in:       slices.Concat(bytes.Join(lines[:2], nil), []byte(`{"type":"assistant","uuid":"bad","parentUuid":"a1","message":{"id":"x","content":[{"type":"text","text":7}]}}`+"\n"), bytes.Join(lines[2:], nil)),
			messages: 8, problems: []int{3}, problem: "content block 1"},
		{name: "byte order mark", in: append([]byte("\xef\xbb\xbf"), rewind...), messages: 8, problems: []int{}},
		{name: "byte order mark alone", in: []byte("\xef\xbb\xbf\n"), err: "empty file"},
		{name: "a JSON list line", in: append([]byte("[1,2]\n"), rewind...), messages: 8, problems: []int{1}, problem: "not an object"},
		{name: "user record without uuid", in: append([]byte(`{"type":"user","message":{"role":"user","content":"x"}}`+"\n"), rewind...), messages: 8, problems: []int{1}, problem: "without a uuid"},
		// the rewind's note takes the place of the last problem listed
		{name: "too many problems", in: []byte(manyBad), messages: 8, problem: "401 more problems"},
		{name: "binary garbage", in: garbage, err: "no Claude Code messages found: is this a Claude Code session .jsonl?"},
		{name: "empty", in: nil, err: "empty file"},
		{name: "blank lines", in: []byte("\n  \n\r\n"), err: "empty file"},
		{name: "ChatGPT export", in: chatgpt, err: "no Claude Code messages found"},
		{name: "Codex rollout", in: codex, err: "no Claude Code messages found"},
		{name: "OpenAI messages", in: openai, err: "no Claude Code messages found"},
		{name: "metadata only", in: []byte(`{"type":"file-history-snapshot","messageId":"x","snapshot":{}}` + "\n" + `{"type":"summary","summary":"s","leafUuid":"x"}` + "\n"), err: "no Claude Code messages found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := importtest.NewRecorder(t)
			problems, err := Read(bytes.NewReader(tt.in), rec)
			if len(problems) > formats.MaxProblems+1 {
				t.Errorf("%d problems listed", len(problems))
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if len(rec.Threads) != 0 {
					t.Errorf("a thread was begun")
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v (problems %v)", err, problems)
			}
			th := rec.Threads[0]
			checkCCThread(t, th)
			if len(th.Messages) != tt.messages {
				t.Errorf("%d messages, want %d", len(th.Messages), tt.messages)
			}
			// Every case holds the rewind: its abandoned branch is noted
			// once, and the other problems are the broken records'.
			notes := 0
			problems = slices.DeleteFunc(problems, func(p formats.Problem) bool {
				if p.Note && strings.HasPrefix(p.Err, "1 abandoned branch (2 records) was not imported") {
					notes++
					return true
				}
				return false
			})
			if notes != 1 {
				t.Errorf("the abandoned branch is noted %d times", notes)
			}
			if tt.problems != nil {
				var got []int
				for _, p := range problems {
					got = append(got, p.Line)
				}
				if !slices.Equal(got, tt.problems) {
					t.Errorf("problems at %v (%v), want %v", got, problems, tt.problems)
				}
			}
			if tt.problem != "" && (len(problems) == 0 || !strings.Contains(problems[len(problems)-1].Err, tt.problem)) {
				t.Errorf("problems %v, want %q", problems, tt.problem)
			}
		})
	}
}

func ccSeeds() [][]byte {
	seeds := [][]byte{
		[]byte(`{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}`),
		[]byte(`{"type":"assistant","uuid":"a","parentUuid":"u","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"X","input":null}]}}` + "\n" +
			`{"type":"user","uuid":"r","parentUuid":"a","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{}}]},{"type":"text","text":"x"}]}}`),
		[]byte(`{"type":"system","subtype":"compact_boundary","uuid":"c","logicalParentUuid":"u"}` + "\n" +
			`{"type":"user","uuid":"s","parentUuid":"c","isCompactSummary":true,"message":{"content":"sum"}}` + "\n" +
			`{"type":"user","uuid":"u","parentUuid":"s","message":{"content":"loop"}}`),
		[]byte(`{"type":"progress","uuid":"p","parentUuid":"p"}` + "\n" + `{"type":"user","uuid":"q","parentUuid":"p","isSidechain":true,"message":{"content":[]}}`),
		[]byte("{\"type\":\"summary\",\"summary\":\"t\"}\n[]\n\x00\xff\n{"),
	}
	// the session files, their long records left out, so that the fuzzer
	// works on inputs of a few kilobytes
	files, _ := filepath.Glob("../testdata/claude-code/*.jsonl")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var seed []byte
		for line := range bytes.Lines(b) {
			if len(line) < 1500 && len(seed) < 6<<10 {
				seed = append(seed, line...)
			}
		}
		seeds = append(seeds, seed)
	}
	return seeds
}

func FuzzReadClaudeCode(f *testing.F) {
	for _, s := range ccSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := importtest.NewRecorder(t)
		problems, err := Read(bytes.NewReader(data), rec)
		checkNotJSON(t, data, problems)
		if len(problems) > formats.MaxProblems+1 {
			t.Fatalf("%d problems", len(problems))
		}
		for _, p := range problems {
			if p.Line < 1 || p.Err == "" {
				t.Fatalf("problem %+v", p)
			}
		}
		if err != nil {
			if len(rec.Threads) != 0 {
				t.Fatalf("error %v after a thread was begun", err)
			}
			return
		}
		if len(rec.Threads) != 1 || rec.Open {
			t.Fatalf("%d threads, open %v", len(rec.Threads), rec.Open)
		}
		th := rec.Threads[0]
		if len(th.Messages) == 0 {
			t.Fatalf("a thread without messages")
		}
		for _, m := range th.Messages {
			if !m.CreatedAt.IsZero() && m.CreatedAt.Location() != time.UTC {
				t.Fatalf("time not in UTC")
			}
			if len(m.Parts) == 0 {
				if strings.TrimSpace(m.Content) == "" {
					t.Fatalf("a message with no parts and no content")
				}
			} else if m.Content != formats.RenderContent(model.DecodeParts(m.Parts)) {
				t.Fatalf("content is not the parts rendered")
			}
		}
	})
}

// checkNotJSON holds the reader's verdict on a file's lines to
// encoding/json's: a line is "not JSON" exactly when json.Valid says so
// (but for nesting deeper than encoding/json's limit, which the reader
// has not).
func checkNotJSON(t *testing.T, data []byte, problems []formats.Problem) {
	t.Helper()
	if len(problems) > formats.MaxProblems {
		return // not all listed
	}
	notJSON := map[int]bool{}
	for _, p := range problems {
		if strings.HasPrefix(p.Err, "not JSON") {
			notJSON[p.Line] = true
		}
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line = bytes.TrimSpace(line)
		if n == 1 {
			line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte(formats.BOM)))
		}
		if len(line) == 0 || len(line) > formats.MaxLine {
			continue
		}
		want := !json.Valid(line)
		if want {
			var v any
			want = !strings.Contains(fmt.Sprint(json.Unmarshal(line, &v)), "exceeded max depth")
		}
		if notJSON[n] != want {
			t.Fatalf("line %d %q: reported not JSON %v, json.Valid %v (problems %v)", n, line, notJSON[n], !want, problems)
		}
	}
}

// Each line is JSON or not as encoding/json has it, whatever the ways a
// line can be broken.
func TestClaudeCodeNotJSON(t *testing.T) {
	t.Parallel()
	valid := `{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}`
	for _, s := range []string{
		`{}`, `[]`, `[1,2,]`, `{"a":}`, `{"a" 1}`, `{,}`, `"x`, `"\u12"`, `"\u12g4"`, `"\x"`, "\"a\tb\"",
		`"\ud83d\ude00 \ud83d x \ude00 \u00e9 \/ \b\f\n\r\t \" \\"`, "\"\xff\xfe invalid utf-8\"", "\"\u2028\u2029 <&>\"",
		`-0`, `-01`, `1.`, `1.5e`, `1.5e+3`, `0.1E-2`, `-`, `tru`, `true `, ` null`, `nul`, `falsey`, `1 2`, `{"a":[{"b":null}]}`,
		`{"a":1,"a":2}`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000), `{"deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		"\"\x01\"", `"12345678\"90"`, `"1234567\\"`, `{"type":"user","x":"\q"}`, "{\"type\":\"user\",\"x\":\"a\x01\"}",
		`{"type":"user","x":[1,2,]}`, `{"type":"user","x":01}`, `{"type":"user"} x`, `{"type":"user"}}`, `{"z":1e999}`,
		valid[:len(valid)-1], valid + "\n" + valid[:40],
	} {
		data := []byte(valid + "\n" + s + "\n" + valid)
		problems, _ := Read(bytes.NewReader(data), importtest.NewRecorder(t))
		checkNotJSON(t, data, problems)
	}
}

type ccNopEmitter struct{ messages int }

func (e *ccNopEmitter) Begin(formats.ThreadInfo) error      { return nil }
func (e *ccNopEmitter) Message(formats.Message) error       { e.messages++; return nil }
func (e *ccNopEmitter) Digest(string, string, string) error { return nil }
func (e *ccNopEmitter) Op(model.Op) error                   { return nil }
func (e *ccNopEmitter) End() error                          { return nil }

func BenchmarkReadClaudeCode(b *testing.B) {
	data, err := os.ReadFile(ccLong)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var e ccNopEmitter
		if _, err := Read(bytes.NewReader(data), &e); err != nil || e.messages != 292 {
			b.Fatalf("%v, %d messages", err, e.messages)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}
