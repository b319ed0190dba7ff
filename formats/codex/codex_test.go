package codex

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/model"
)

const cxFile = "../testdata/codex-rollout/rollout_all_record_types.jsonl"

func cxRead(t testing.TB, data string) (*importtest.Recorder, []formats.Problem, error) {
	t.Helper()
	rec := importtest.NewRecorder(t)
	problems, err := Read(strings.NewReader(data), rec)
	if rec.Open {
		t.Fatalf("a thread was left open")
	}
	return rec, problems, err
}

func cxReadOK(t testing.TB, data string) (*importtest.Thread, []formats.Problem) {
	t.Helper()
	rec, problems, err := cxRead(t, data)
	if err != nil {
		t.Fatalf("ReadCodex: %v (problems %v)", err, problems)
	}
	if len(rec.Threads) != 1 {
		t.Fatalf("%d threads, want 1", len(rec.Threads))
	}
	return rec.Threads[0], problems
}

func TestCodexRollout(t *testing.T) {
	th, problems := cxReadOK(t, string(importtest.File(t, cxFile)))
	if len(problems) != 0 {
		t.Errorf("problems %v", problems) // the unknown record type is ignored, not a problem
	}
	importtest.CheckThread(t, th)
	info := th.Info
	if info.Key != "11111111-1111-4111-8111-111111111111" || info.Source != formats.Codex || info.Title != "List the synthetic files." ||
		!info.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || info.CreatedAt.Location() != time.UTC {
		t.Errorf("info %+v", info)
	}
	// lines 3 and 12 (event_msg) repeat lines 4 and 13; line 14 is unknown
	if got, want := th.Keys(), "L4 L5 L6 L7 L8 L9 L10 L11 L13"; got != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	if got, want := th.Roles(), "user assistant assistant tool assistant tool assistant tool assistant"; got != want {
		t.Errorf("roles %q, want %q", got, want)
	}
	texts := map[string]int{}
	for _, m := range th.Messages {
		texts[m.Content]++
		if strings.Contains(m.Content, "SYNTHETIC_ENCRYPTED") || strings.Contains(m.Content, "future_synthetic_record") {
			t.Errorf("%s renders %q", m.Key, m.Content)
		}
		if m.CreatedAt.Location() != time.UTC || m.CreatedAt.Year() != 2026 {
			t.Errorf("%s at %v", m.Key, m.CreatedAt)
		}
	}
	if texts["List the synthetic files."] != 1 || texts["The synthetic files are alpha.txt and beta.txt."] != 1 {
		t.Errorf("event duplicates imported: %v", texts)
	}

	user := th.ByKey(t, "L4")
	if user.Content != "List the synthetic files." || !user.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 7, 1e6, time.UTC)) ||
		user.Meta["cwd"] != "/workspace/synthetic-project" || user.Meta["cli_version"] != "0.0.0-test" {
		t.Errorf("user: %q at %v meta %v", user.Content, user.CreatedAt, user.Meta)
	}
	reasoning := th.ByKey(t, "L5")
	parts := importtest.Parts(t, reasoning)
	if len(parts) != 1 || parts[0].Type != model.PartThinking || parts[0].Text != "I will inspect the synthetic directory." ||
		reasoning.Content != "" || reasoning.Meta["model"] != "synthetic-model" {
		t.Errorf("reasoning: %q %+v %v", reasoning.Content, parts, reasoning.Meta)
	}
	calls := []struct{ call, result, id, tool, input, output string }{
		{"L6", "L7", "call-structured-001", "exec_command", `{"cmd":"find . -maxdepth 1 -type f"}`, "./alpha.txt\n./beta.txt"},
		{"L8", "L9", "call-custom-001", "apply_patch", `"*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** End Patch"`, "Done!"},
		{"L10", "L11", "call-mcp-001", "mcp__synthetic__lookup", `{"query":"fixture"}`, `{"status":"ok"}`},
	}
	for _, c := range calls {
		call := importtest.Parts(t, th.ByKey(t, c.call))
		if len(call) != 1 || call[0].Type != model.PartToolCall || call[0].ToolCallID != c.id || call[0].ToolName != c.tool || string(call[0].Input) != c.input {
			t.Errorf("%s: call %+v", c.call, call)
		}
		res := th.ByKey(t, c.result)
		rp := importtest.Parts(t, res)
		if res.Role != model.RoleTool || res.Name != c.tool || len(rp) != 1 || rp[0].Type != model.PartToolResult ||
			rp[0].ToolCallID != c.id || rp[0].Text != c.output || res.Content != "[tool result] "+c.output || res.Meta["call_id"] != c.id {
			t.Errorf("%s: result %+v parts %+v", c.result, res, rp)
		}
	}
	final := th.ByKey(t, "L13")
	if final.Role != model.RoleAssistant || final.Content != "The synthetic files are alpha.txt and beta.txt." ||
		!final.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 15, 1e6, time.UTC)) {
		t.Errorf("final: %+v", final)
	}
}

// cxRec writes a record line.
func cxRec(sec int, typ, payload string) string {
	return fmt.Sprintf(`{"timestamp":"2026-01-02T03:04:%02d.000Z","type":%q,"payload":%s}`, sec, typ, payload)
}

func cxMsg(sec int, role, text string) string {
	kind := "input_text"
	if role == "assistant" {
		kind = "output_text"
	}
	return cxRec(sec, "response_item", fmt.Sprintf(`{"type":"message","role":%q,"content":[{"type":%q,"text":%q}]}`, role, kind, text))
}

const cxMeta = `{"timestamp":"2026-01-02T03:04:00.000Z","type":"session_meta","payload":{"id":"sess","timestamp":"2026-01-02T03:04:00.000Z"}}`

func cxLines(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func TestCodexCompaction(t *testing.T) {
	th, problems := cxReadOK(t, cxLines(
		cxMeta,                       // L1
		cxMsg(1, "user", "one"),      // L2
		cxMsg(2, "assistant", "two"), // L3
		cxRec(3, "compacted", `{"message":"We talked about one and two."}`), // L4
		cxMsg(4, "user", "three"),               // L5
		cxMsg(5, "assistant", "four"),           // L6
		cxRec(6, "compacted", `{"message":""}`), // L7: no summary
		cxMsg(7, "user", "five"),                // L8
	))
	if len(problems) != 0 {
		t.Errorf("problems %v", problems)
	}
	if got := th.Keys(); got != "L2 L3 L5 L6 L8" {
		t.Errorf("keys %q", got)
	}
	want := []importtest.Digest{{From: "L2", To: "L3", Summary: "We talked about one and two."}, {From: "L5", To: "L6", Summary: cxDefaultSummary}}
	if fmt.Sprint(th.Digests) != fmt.Sprint(want) {
		t.Errorf("digests %v, want %v", th.Digests, want)
	}

	// a compaction with nothing before it keeps its summary as a message
	th, _ = cxReadOK(t, cxLines(cxMeta, cxRec(1, "compacted", `{"message":"Earlier: setup.","replacement_history":[]}`), cxMsg(2, "user", "go on")))
	if th.Keys() != "L2 L3" || th.Messages[0].Role != model.RoleSystem || th.Messages[0].Content != "Earlier: setup." ||
		th.Messages[0].Meta["compacted"] != "true" || len(th.Digests) != 0 || th.Info.Title != "go on" {
		t.Errorf("leading compaction: %s %+v %v", th.Keys(), th.Messages[0], th.Digests)
	}
}

func TestCodexEvents(t *testing.T) {
	// without the response items, the events are the conversation
	th, _ := cxReadOK(t, cxLines(cxMeta,
		cxRec(1, "event_msg", `{"type":"user_message","message":"hello","images":[]}`),
		cxRec(2, "event_msg", `{"type":"agent_reasoning","text":"thinking it over"}`),
		cxRec(3, "event_msg", `{"type":"agent_message","message":"hi there"}`),
		cxRec(4, "event_msg", `{"type":"token_count","info":null}`),
	))
	if th.Keys() != "L2 L3 L4" || th.Roles() != "user assistant assistant" || th.Messages[0].Meta["event"] != "user_message" ||
		th.Messages[2].Content != "hi there" || importtest.Parts(t, th.Messages[1])[0].Type != model.PartThinking {
		t.Errorf("events: %s %s %+v", th.Keys(), th.Roles(), th.Messages)
	}
	// a text said twice is matched once each time; the event for a message
	// whose response item is missing is kept
	th, _ = cxReadOK(t, cxLines(cxMeta,
		cxRec(1, "event_msg", `{"type":"user_message","message":"continue"}`), // L2 dup of L3
		cxMsg(1, "user", "continue"),                                          // L3
		cxRec(2, "response_item", `{"type":"reasoning","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"xx"}`), // L4
		cxRec(2, "event_msg", `{"type":"agent_reasoning","text":"plan"}`),                                                            // L5 dup of L4
		cxRec(3, "event_msg", `{"type":"user_message","message":"continue"}`),                                                        // L6 dup of L7
		cxMsg(3, "user", "continue"),                                          // L7
		cxRec(4, "event_msg", `{"type":"user_message","message":"continue"}`), // L8: no response item
	))
	if got := th.Keys(); got != "L3 L4 L7 L8" {
		t.Errorf("matching: keys %q", got)
	}
}

func TestCodexItems(t *testing.T) {
	th, problems := cxReadOK(t, cxLines(
		`{"timestamp":"2026-01-02T03:04:00.000Z","type":"session_meta","payload":{"id":"sess","timestamp":"2026-01-02T03:04:00.000Z","source":{"subagent":"review"},"git":{"branch":"main"},"cwd":7}}`,
		cxRec(1, "turn_context", `{"model":"gpt-5-codex"}`), // L2
		cxRec(1, "response_item", `{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>be careful</permissions instructions>"}]}`),                                // L3
		cxRec(1, "response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/x</cwd>\n</environment_context>"}]}`),                                        // L4
		cxRec(2, "response_item", `{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AAAA"},{"type":"input_text","text":"What is <this> & that?\nSecond line"}]}`), // L5
		cxRec(3, "response_item", `{"type":"function_call","name":"shell","arguments":"not json {","call_id":"c1"}`),                                                                                                 // L6
		cxRec(4, "response_item", `{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"boom\\n\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":0.1}}"}`),                                      // L7
		cxRec(5, "response_item", `{"type":"function_call_output","call_id":"elsewhere","output":{"content":"ok","success":false}}`),                                                                                 // L8
		cxRec(6, "response_item", `{"type":"local_shell_call","call_id":"c2","status":"completed","action":{"type":"exec","command":["ls"]}}`),                                                                       // L9
		cxRec(7, "response_item", `{"type":"function_call_output","call_id":"c2","output":"a\nb"}`),                                                                                                                  // L10
		cxRec(8, "response_item", `{"type":"web_search_call","status":"completed","action":{"type":"search","query":"weft"}}`),                                                                                       // L11
		cxRec(9, "response_item", `{"type":"reasoning","summary":[],"encrypted_content":"opaque"}`),                                                                                                                  // L12: nothing to read
		cxRec(9, "response_item", `{"type":"ghost_snapshot","ghost_commit":{}}`),                                                                                                                                     // L13: skipped
		cxRec(9, "response_item", `{"type":"message","role":"critic","content":[]}`),                                                                                                                                 // L14: a problem
		cxRec(9, "response_item", `{"type":"message","role":"assistant","content":7}`),                                                                                                                               // L15: a problem
		cxRec(9, "response_item", `{"type":"message","role":"assistant","content":[]}`),                                                                                                                              // L16: empty, skipped
		`{"type":"response_item"}`, // L17: a problem
		`not json at all`,          // L18: a problem
		`[1,2]`,                    // L19: a problem
		cxRec(10, "response_item", `{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't."}]}`), // L20
		cxRec(11, "event_msg", `{"type":"exec_command_end","call_id":7,"text":{"x":1},"duration":{"secs":1}}`),                  // L21: skipped
		cxRec(11, "turn_context", `{"model":null,"summary":"auto","sandbox_policy":{"type":"read-only"}}`),                      // L22
	))
	importtest.CheckThread(t, th)
	if got, want := th.Keys(), "L3 L4 L5 L6 L7 L8 L9 L10 L11 L20"; got != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	var lines []int
	for _, p := range problems {
		lines = append(lines, p.Line)
	}
	if fmt.Sprint(lines) != "[14 15 17 18 19]" {
		t.Errorf("problems %v", problems)
	}
	if th.Info.Key != "sess" || th.Messages[0].Meta["cwd"] != "" {
		t.Errorf("session meta with fields of other shapes: %+v %v", th.Info, th.Messages[0].Meta)
	}
	if th.Info.Title != "What is <this> & that?" {
		t.Errorf("title %q: the context Codex adds is not the title", th.Info.Title)
	}
	if m := th.ByKey(t, "L3"); m.Role != model.RoleSystem || m.Meta["source_role"] != "developer" {
		t.Errorf("developer: %+v", m)
	}
	img := th.ByKey(t, "L5")
	if parts := importtest.Parts(t, img); len(parts) != 2 || parts[0].Type != model.PartImage || parts[0].MediaType != "image/png" ||
		img.Content != "[image image/png]\n\nWhat is <this> & that?\nSecond line" {
		t.Errorf("image: %q %+v", img.Content, parts)
	}
	if !bytes.Contains(img.Parts, []byte("<this> & that")) {
		t.Errorf("parts HTML-escaped: %s", img.Parts)
	}
	if parts := importtest.Parts(t, th.ByKey(t, "L6")); string(parts[0].Input) != `"not json {"` {
		t.Errorf("arguments that are not JSON: %s", parts[0].Input)
	}
	if m := th.ByKey(t, "L7"); m.Content != "[tool error] boom\n" || m.Name != "shell" {
		t.Errorf("exec output: %q %q", m.Content, m.Name)
	}
	if m := th.ByKey(t, "L8"); importtest.Parts(t, m)[0].ToolCallID != "" || m.Meta["call_id"] != "elsewhere" || m.Content != "[tool error] ok" {
		t.Errorf("result of an unknown call: %+v", m)
	}
	if parts := importtest.Parts(t, th.ByKey(t, "L9")); parts[0].ToolName != "local_shell" || string(parts[0].Input) != `{"type":"exec","command":["ls"]}` {
		t.Errorf("local shell: %+v", parts)
	}
	if m := th.ByKey(t, "L10"); m.Name != "local_shell" || importtest.Parts(t, m)[0].ToolCallID != "c2" {
		t.Errorf("local shell output: %+v", m)
	}
	if parts := importtest.Parts(t, th.ByKey(t, "L11")); parts[0].ToolName != "web_search" || parts[0].ToolCallID != "" {
		t.Errorf("web search: %+v", parts)
	}
	if m := th.ByKey(t, "L20"); m.Content != "I can't." || m.Meta["model"] != "gpt-5-codex" {
		t.Errorf("refusal: %+v", m)
	}
}

// A rollout may use a call ID more than once. Each output answers the
// most recent call of its ID that no output answered yet: a call left
// without an output (an interrupted turn) was abandoned, and the call
// made after it with the same ID is the one its output answers. An
// output with no such call is kept unlinked, its call ID in meta.
func TestCodexReusedCallID(t *testing.T) {
	call := func(sec int, tool string) string {
		return cxRec(sec, "response_item", fmt.Sprintf(`{"type":"function_call","name":%q,"arguments":"{}","call_id":"c"}`, tool))
	}
	out := func(sec int, text string) string {
		return cxRec(sec, "response_item", fmt.Sprintf(`{"type":"function_call_output","call_id":"c","output":%q}`, text))
	}
	cases := []struct {
		name  string
		lines []string
		want  string // key:name:linked of each output
	}{
		{"two calls, then two outputs", []string{call(1, "shell"), call(2, "apply_patch"), out(3, "a"), out(4, "b")},
			"L4:apply_patch:c L5:shell:c"},
		{"call, output, call, output", []string{call(1, "shell"), out(2, "a"), call(3, "apply_patch"), out(4, "b")},
			"L3:shell:c L5:apply_patch:c"},
		{"an output repeated", []string{call(1, "shell"), out(2, "a"), out(3, "a again")},
			"L3:shell:c L4::"},
		{"an abandoned call", []string{call(1, "shell"), call(2, "apply_patch"), out(3, "a"), call(4, "view"), out(5, "b")},
			"L4:apply_patch:c L6:view:c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			th, problems := cxReadOK(t, cxLines(append([]string{cxMeta}, tc.lines...)...))
			if len(problems) > 0 {
				t.Fatalf("problems %v", problems)
			}
			importtest.CheckThread(t, th)
			var got []string
			for _, m := range th.Messages {
				if m.Role == model.RoleTool {
					got = append(got, m.Key+":"+m.Name+":"+importtest.Parts(t, m)[0].ToolCallID)
					if m.Meta["call_id"] != "c" {
						t.Errorf("%s: call_id %q in meta", m.Key, m.Meta["call_id"])
					}
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("outputs %s, want %s", strings.Join(got, " "), tc.want)
			}
		})
	}
}

func TestCodexKeys(t *testing.T) {
	// no session_meta: keyed by the first line, stably
	data := cxLines(cxMsg(1, "user", "hi"), cxMsg(2, "assistant", "hello"))
	th, problems := cxReadOK(t, data)
	k1 := th.Info.Key
	if !strings.HasPrefix(k1, "derived-") || len(problems) != 1 || !strings.Contains(problems[0].Err, k1) ||
		!th.Info.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 1, 0, time.UTC)) {
		t.Errorf("key %q created %v problems %v", k1, th.Info.CreatedAt, problems)
	}
	th, _ = cxReadOK(t, data+cxMsg(3, "user", "more")+"\n")
	if th.Info.Key != k1 {
		t.Errorf("the key changed as the file grew: %q, %q", k1, th.Info.Key)
	}

	// a rollout from before the record wrapper
	th, problems = cxReadOK(t, cxLines(
		`{"id":"old-session","timestamp":"2025-05-01T10:00:00Z","instructions":null}`,
		`{"record_type":"state"}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"old question"}]}`,
		`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"x"}`,
		`{"type":"function_call_output","call_id":"x","output":"ok"}`,
	))
	if th.Info.Key != "old-session" || !th.Info.CreatedAt.Equal(time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)) ||
		th.Keys() != "L3 L4 L5" || th.Roles() != "user assistant tool" || len(problems) != 0 || th.Messages[2].Name != "shell" {
		t.Errorf("legacy: %+v %s %s %v", th.Info, th.Keys(), th.Roles(), problems)
	}
}

// Reading the rollout as it grows, line by line, gives the same message
// under the same key every time: a re-import adds only what is new.
func TestCodexGrowing(t *testing.T) {
	lines := strings.SplitAfter(string(importtest.File(t, cxFile)), "\n")
	final, _ := cxReadOK(t, strings.Join(lines, ""))
	want := map[string]string{}
	for _, m := range final.Messages {
		want[m.Key] = m.Content + "\x00" + string(m.Parts)
	}
	for n := 1; n < len(lines); n++ {
		rec, _, err := cxRead(t, strings.Join(lines[:n], ""))
		if err != nil {
			continue // no message yet
		}
		for _, m := range rec.Threads[0].Messages {
			// an event read before its response item is written is kept;
			// it is the one message that can differ
			if m.Meta["event"] != "" {
				continue
			}
			if got := m.Content + "\x00" + string(m.Parts); want[m.Key] != got {
				t.Errorf("%d lines: %s is %q, at the end %q", n, m.Key, got, want[m.Key])
			}
		}
		if rec.Threads[0].Info.Key != final.Info.Key {
			t.Errorf("%d lines: key %q", n, rec.Threads[0].Info.Key)
		}
	}
}

func TestCodexBroken(t *testing.T) {
	long := func(path string) string { return string(importtest.File(t, path)) }
	cases := []struct{ name, in, err string }{
		{"empty", "", "empty file"},
		{"blank lines", "\n  \n\r\n", "empty file"},
		{"garbage", "hello\nworld\n", "no Codex messages"},
		{"chatgpt export", long("../testdata/chatgpt-export/chatlore_conversations_edge_cases.json"), "not a Codex rollout: it starts with a JSON list"},
		{"claude code", long("../testdata/claude-code/spotter_tool_heavy.jsonl"), "no Codex messages"},
		{"session meta only", cxMeta + "\n", "no Codex messages"},
		{"truncated", cxMeta + "\n" + cxMsg(1, "user", "hi")[:40], "no Codex messages"},
		{"payload not an object", cxRec(1, "response_item", `5`), "no Codex messages"},
		{"list", "[1,2,3]", "not a Codex rollout"},
		{"not objects", "1\n\"x\"\n", "no Codex messages"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, problems, err := cxRead(t, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one saying %q (problems %v)", err, tc.err, problems)
			}
			t.Logf("%v; problems %v", err, problems)
			if len(rec.Threads) != 0 {
				t.Errorf("%d threads", len(rec.Threads))
			}
			if len(problems) > formats.MaxProblems+1 {
				t.Errorf("%d problems", len(problems))
			}
		})
	}
	// a cut-off last line is a problem; the rest imports
	th, problems := cxReadOK(t, cxMeta+"\n"+cxMsg(1, "user", "hi")+"\n"+cxMsg(2, "assistant", "hello")[:50])
	if th.Keys() != "L2" || len(problems) != 1 || problems[0].Line != 3 || !strings.Contains(problems[0].Err, "not JSON") {
		t.Errorf("cut off: %s %v", th.Keys(), problems)
	}
}

func TestCodexEmitterError(t *testing.T) {
	f := &importtest.Failing{N: 2}
	_, err := Read(bytes.NewReader(importtest.File(t, cxFile)), f)
	if !errors.Is(err, importtest.ErrStop) || f.Seen != 2 || f.Ends != 0 {
		t.Errorf("error %v after %d messages, %d ends", err, f.Seen, f.Ends)
	}
}

func FuzzReadCodex(f *testing.F) {
	data, err := os.ReadFile(cxFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(cxLines(cxMeta, cxMsg(1, "user", "one"), cxRec(2, "compacted", `{"message":"s"}`), cxMsg(3, "assistant", "two"),
		cxRec(4, "event_msg", `{"type":"agent_message","message":"two"}`))))
	f.Add([]byte(cxLines(`{"id":"old","timestamp":"2025-05-01T10:00:00Z"}`,
		`{"type":"function_call","name":"shell","arguments":"{}","call_id":"x"}`, `{"type":"function_call_output","call_id":"x","output":[{"type":"input_image","image_url":"data:image/png;base64,"}]}`)))
	// found by fuzzing: a call without arguments
	f.Add([]byte(`{"tYpe":"function_call","nAme":"0"}`))
	// a call ID used twice: two calls, then their outputs
	f.Add([]byte(cxLines(cxMeta,
		cxRec(1, "response_item", `{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}`),
		cxRec(2, "response_item", `{"type":"custom_tool_call","name":"apply_patch","input":"x","call_id":"c"}`),
		cxRec(3, "response_item", `{"type":"function_call_output","call_id":"c","output":"one"}`),
		cxRec(4, "response_item", `{"type":"custom_tool_call_output","call_id":"c","output":"two"}`))))
	// a call ID used again after its call was answered, and an output
	// repeated
	f.Add([]byte(cxLines(cxMeta,
		cxRec(1, "response_item", `{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}`),
		cxRec(2, "response_item", `{"type":"function_call_output","call_id":"c","output":"one"}`),
		cxRec(3, "response_item", `{"type":"function_call_output","call_id":"c","output":"again"}`),
		cxRec(4, "response_item", `{"type":"custom_tool_call","name":"apply_patch","input":"x","call_id":"c"}`),
		cxRec(5, "response_item", `{"type":"custom_tool_call_output","call_id":"c","output":"two"}`))))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := importtest.NewRecorder(t)
		problems, err := Read(bytes.NewReader(data), rec)
		if err == nil && len(rec.Threads) != 1 {
			t.Fatalf("%d threads and no error", len(rec.Threads))
		}
		if err != nil && len(rec.Threads) != 0 {
			t.Fatalf("an error (%v) after a thread", err)
		}
		if len(problems) > formats.MaxProblems+1 {
			t.Fatalf("%d problems", len(problems))
		}
		for _, th := range rec.Threads {
			importtest.CheckThread(t, th)
		}
	})
}
