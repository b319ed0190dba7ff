package export

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/formats"
	"weft/formats/claudecode"
	"weft/formats/internal/importtest"
	"weft/model"
)

var ccUUIDRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[45][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

const ccSession = "0f3c2a55-6b1e-4c8e-9d2a-3b4c5d6e7f80"

// ccItems is a thread as operations leave it: a digest's summary where
// messages were, an inserted assistant message, a tool call and its
// result.
func ccItems() []formats.Item {
	summary := exSynth("op1/0", model.OpDigest, "We chose JWT over sessions.")
	summary.Summary, summary.MessageCount = true, 3
	summary.TimeSpanStart, summary.TimeSpanEnd = exT0, exT0.Add(5*time.Minute)
	inserted := exSynth("op2/0", model.OpInsert, "Note: the token lives 15 minutes.")
	inserted.Role = model.RoleAssistant
	return []formats.Item{
		exItem("m1", model.RoleUser, "How do we log in?"),
		summary,
		inserted,
		exItem("m5", model.RoleAssistant, "", exText("Looking."), exCall("toolu_01", "Bash", `{"command": "ls"}`)),
		exTool("m6", "Bash", exResult("toolu_01", "a.txt\nb.txt")),
		exItem("m7", model.RoleUser, "Thanks"),
	}
}

// ccRecords splits a transcript into its records.
func ccRecords(t *testing.T, doc []byte) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range bytes.Lines(doc) {
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestWriteClaudeCodeRecords(t *testing.T) {
	var buf bytes.Buffer
	rep, err := WriteClaudeCode(&buf, ccItems(), ClaudeCodeOptions{SessionID: ccSession, Cwd: "/home/ana/auth", Title: "auth design", Now: exT0})
	if err != nil {
		t.Fatal(err)
	}
	exReportEqual(t, "claude-code", rep, nil)
	var again bytes.Buffer
	WriteClaudeCode(&again, ccItems(), ClaudeCodeOptions{SessionID: ccSession, Cwd: "/home/ana/auth", Title: "auth design", Now: exT0})
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two exports under one session ID differ")
	}
	recs := ccRecords(t, buf.Bytes())
	if len(recs) != 7 {
		t.Fatalf("%d records, want a title and 6 messages:\n%s", len(recs), buf.Bytes())
	}
	if recs[0]["type"] != "custom-title" || recs[0]["customTitle"] != "auth design" || recs[0]["sessionId"] != ccSession {
		t.Errorf("title record %v", recs[0])
	}
	var parent any // the first message record has a null parent
	seen := map[string]bool{}
	types := []string{}
	for k, r := range recs[1:] {
		uuid, _ := r["uuid"].(string)
		if !ccUUIDRE.MatchString(uuid) || seen[uuid] {
			t.Errorf("record %d: uuid %q", k, uuid)
		}
		seen[uuid] = true
		if r["parentUuid"] != parent {
			t.Errorf("record %d: parentUuid %v, want %v", k, r["parentUuid"], parent)
		}
		parent = uuid
		for field, want := range map[string]any{"sessionId": ccSession, "cwd": "/home/ana/auth", "version": ClaudeCodeVersion, "isSidechain": false, "userType": "external"} {
			if r[field] != want {
				t.Errorf("record %d: %s %v, want %v", k, field, r[field], want)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, r["timestamp"].(string)); err != nil {
			t.Errorf("record %d: timestamp %v", k, r["timestamp"])
		}
		msg := r["message"].(map[string]any)
		if msg["role"] != r["type"] {
			t.Errorf("record %d: a %v record holds a %v message", k, r["type"], msg["role"])
		}
		types = append(types, r["type"].(string))
	}
	if got := strings.Join(types, " "); got != "user user assistant assistant user user" {
		t.Errorf("records %s", got)
	}
	summary := recs[2]
	if summary["weftRole"] != "system" || summary["message"].(map[string]any)["content"] != "[summary of 3 messages, 2026-01-26 09:00–09:05 UTC]\nWe chose JWT over sessions." {
		t.Errorf("summary record %v", summary)
	}
	call, result := recs[4]["message"].(map[string]any), recs[5]["message"].(map[string]any)
	if call["stop_reason"] != "tool_use" || call["id"] == recs[3]["message"].(map[string]any)["id"] {
		t.Errorf("assistant record %v", call)
	}
	use := call["content"].([]any)[1].(map[string]any)
	res := result["content"].([]any)[0].(map[string]any)
	if use["type"] != "tool_use" || use["id"] != "toolu_01" || res["type"] != "tool_result" || res["tool_use_id"] != "toolu_01" || res["content"] != "a.txt\nb.txt" {
		t.Errorf("tool call %v, result %v", use, res)
	}
}

// ccRequest is the request Claude Code sends when it resumes a
// transcript and the user types one more prompt: consecutive records of
// a role make one message, tool results first.
func ccRequest(t *testing.T, doc []byte) []byte {
	t.Helper()
	type message struct {
		Role    string `json:"role"`
		Content []any  `json:"content"`
	}
	var msgs []message
	for _, r := range ccRecords(t, doc) {
		if r["type"] != "user" && r["type"] != "assistant" {
			continue
		}
		m := r["message"].(map[string]any)
		var blocks []any
		switch c := m["content"].(type) {
		case string:
			blocks = []any{map[string]any{"type": "text", "text": c}}
		case []any:
			blocks = c
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == m["role"] {
			msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		} else {
			msgs = append(msgs, message{Role: m["role"].(string), Content: blocks})
		}
	}
	prompt := []any{map[string]any{"type": "text", "text": "go on"}}
	if n := len(msgs); n > 0 && msgs[n-1].Role == "user" {
		msgs[n-1].Content = append(msgs[n-1].Content, prompt...)
	} else {
		msgs = append(msgs, message{Role: "user", Content: prompt})
	}
	isResult := func(b any) bool { return b.(map[string]any)["type"] == "tool_result" }
	for k := range msgs {
		slices.SortStableFunc(msgs[k].Content, func(a, b any) int {
			switch {
			case isResult(a) && !isResult(b):
				return -1
			case isResult(b) && !isResult(a):
				return 1
			}
			return 0
		})
	}
	body, err := json.Marshal(map[string]any{"messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// ccReadBack reads a transcript with weft's importer.
func ccReadBack(t testing.TB, doc []byte) *importtest.Thread {
	t.Helper()
	rec, problems := importtest.RunOK(t, claudecode.Read, string(doc))
	if len(problems) > 0 {
		t.Errorf("reading the transcript back: %v", problems)
	}
	if len(rec.Threads) != 1 {
		t.Fatalf("%d threads read back", len(rec.Threads))
	}
	return rec.Threads[0]
}

// ccSameThread checks that what was read back is items again: the same
// messages in the same order, each with the same role, text, tool calls
// and results (model.Identity; text that is only white space is no
// text, and a provider's body has none), leaving out items the export
// drops without a word (only unsigned thinking).
func ccSameThread(t testing.TB, items []formats.Item, th *importtest.Thread) {
	t.Helper()
	ident := func(role model.Role, content string, parts []model.Part) string {
		parts = slices.DeleteFunc(slices.Clone(parts), func(p model.Part) bool {
			return p.Type == model.PartText && strings.TrimSpace(p.Text) == ""
		})
		return string(role) + " " + model.Identity(role, content, parts).String()[:12]
	}
	var want, got []string
	x := xpRead(items, xpAnthropic)
	for i := range items {
		if x.xi[i].live() {
			// The role it is written as: an unknown role is a user's.
			it := &items[i]
			want = append(want, ident(x.xi[i].role, it.Content, it.Parts))
		}
	}
	for _, m := range th.Messages {
		got = append(got, ident(m.Role, m.Content, model.DecodeParts(m.Parts)))
	}
	if !slices.Equal(got, want) {
		t.Errorf("read back %d messages, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
	}
}

func TestClaudeCodeReadsBack(t *testing.T) {
	items := ccItems()
	var buf bytes.Buffer
	if _, err := WriteClaudeCode(&buf, items, ClaudeCodeOptions{SessionID: ccSession, Cwd: "/w", Title: "auth design", Now: exT0}); err != nil {
		t.Fatal(err)
	}
	validateAnthropic(t, ccRequest(t, buf.Bytes()))
	th := ccReadBack(t, buf.Bytes())
	ccSameThread(t, items, th)
	if th.Info.Key != ccSession || th.Info.Title != "auth design" || th.Info.Source != formats.ClaudeCode {
		t.Errorf("thread %+v", th.Info)
	}
	if summary := th.Messages[1]; summary.Role != model.RoleSystem || summary.Content != "We chose JWT over sessions." {
		t.Errorf("the summary read back as %s %q", summary.Role, summary.Content)
	}
	if !th.Messages[0].CreatedAt.Equal(exT0) {
		t.Errorf("time %v, want %v", th.Messages[0].CreatedAt, exT0)
	}
}

// Random threads: what Claude Code sends of the transcript is a valid
// Messages API request, and a thread the export did not have to change
// (an empty report) in the importer's shape (no user message holding
// tool results) reads back as itself.
func TestClaudeCodeRandomThreads(t *testing.T) {
	exact := 0
	for seed := range uint64(1500) {
		items := exRandomThread(rand.New(rand.NewPCG(seed, 1)))
		var buf bytes.Buffer
		rep, err := WriteClaudeCode(&buf, items, ClaudeCodeOptions{Cwd: "/w", Now: exT0})
		if err != nil {
			t.Fatal(err)
		}
		if ps := exAnthropicProblems(ccRequest(t, buf.Bytes())); len(ps) > 0 {
			t.Fatalf("seed %d: Claude Code would send an invalid request: %q\nreport %q\n%s", seed, ps, rep.Folded, buf.Bytes())
		}
		// The importer's shape: no user message holding tool results,
		// and only images a provider takes (others become a placeholder
		// text in every provider export).
		importerShaped := !slices.ContainsFunc(items, func(it formats.Item) bool {
			return slices.ContainsFunc(it.Parts, func(p model.Part) bool {
				return it.Role == model.RoleUser && p.Type == model.PartToolResult ||
					p.Type == model.PartImage && xpReadImage(&p, xpAnthropic) == nil
			})
		})
		if len(rep.Folded) == 0 && importerShaped && ccLive(items) {
			exact++
			ccSameThread(t, items, ccReadBack(t, buf.Bytes()))
		}
		if t.Failed() {
			t.Fatalf("seed %d:\n%s", seed, buf.Bytes())
		}
	}
	t.Logf("%d of 1500 random threads read back exactly", exact)
	if exact < 20 {
		t.Errorf("only %d random threads read back exactly; the test needs more", exact)
	}
}

// ccLive reports whether the export writes anything of items.
func ccLive(items []formats.Item) bool {
	x := xpRead(items, xpAnthropic)
	return slices.ContainsFunc(x.xi, func(xi xpItem) bool { return xi.live() })
}

// Real Claude Code sessions, whole and with random messages snipped: the
// transcript reads back as the thread it was written from.
func TestClaudeCodeImportedRoundTrip(t *testing.T) {
	for _, imp := range exImports[:2] {
		t.Run(imp.path, func(t *testing.T) {
			items := exImported(t, imp.path, imp.read)
			for seed := range uint64(10) {
				its := items
				if seed > 0 {
					r := rand.New(rand.NewPCG(seed, 3))
					its = slices.DeleteFunc(slices.Clone(items), func(formats.Item) bool { return r.IntN(5) == 0 })
				}
				var buf bytes.Buffer
				rep, err := WriteClaudeCode(&buf, its, ClaudeCodeOptions{Cwd: "/w", Now: exT0})
				if err != nil {
					t.Fatal(err)
				}
				validateAnthropic(t, ccRequest(t, buf.Bytes()))
				if seed == 0 {
					exReportEqual(t, "whole session", rep, nil)
					ccSameThread(t, its, ccReadBack(t, buf.Bytes()))
				}
				if t.Failed() {
					t.Fatalf("seed %d", seed)
				}
			}
		})
	}
}

func TestClaudeCodeProjectDir(t *testing.T) {
	long := "/home/ana/" + strings.Repeat("deep/", 45) + "project"
	tests := []struct{ cwd, want string }{
		// What Claude Code 2.1.330 made of its working folder.
		{"/tmp/ccexp/proj.dir/sub_x", "-tmp-ccexp-proj-dir-sub-x"},
		{"/home/marco/projects/spotter", "-home-marco-projects-spotter"},
		{`C:\Users\ana\my app`, "C--Users-ana-my-app"},
		// One "-" per UTF-16 unit: é is one, 😀 two.
		{"/home/josé/😀", "-home-jos----"},
		{long, strings.ReplaceAll(long, "/", "-")[:200] + "-" + ccJavaHash36(long)},
	}
	for _, tt := range tests {
		if got := ClaudeCodeProjectDir(tt.cwd); got != tt.want {
			t.Errorf("ClaudeCodeProjectDir(%q) = %q, want %q", tt.cwd, got, tt.want)
		}
	}
}

// ccJavaHash36 is Math.abs(hash).toString(36) for JavaScript's string
// hash (h = (h << 5) - h + charCode | 0), written as Claude Code has it.
func ccJavaHash36(s string) string {
	var h int32
	for _, c := range s { // ASCII in the test
		h = (h << 5) - h + int32(c)
	}
	n := int64(h)
	if n < 0 {
		n = -n
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	if n == 0 {
		return "0"
	}
	var out []byte
	for ; n > 0; n /= 36 {
		out = append([]byte{digits[n%36]}, out...)
	}
	return string(out)
}
