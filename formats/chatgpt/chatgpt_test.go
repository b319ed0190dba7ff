package chatgpt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/model"
)

const (
	cgEdgeFile = "../testdata/chatgpt-export/chatlore_conversations_edge_cases.json"
	cgRealFile = "../testdata/chatgpt-export/chatgpt2graph_conversations.json"
)

func TestChatGPTEdgeCases(t *testing.T) {
	rec, problems := importtest.RunOK(t, Read, string(importtest.File(t, cgEdgeFile)))
	if len(rec.Threads) != 2 {
		t.Fatalf("%d threads, want 2 (of 4 conversations: one has no mapping, one no message)", len(rec.Threads))
	}
	for _, th := range rec.Threads {
		importtest.CheckThread(t, th)
	}

	// the two records that do not import are problems naming them
	if len(problems) != 2 {
		t.Fatalf("problems %v, want 2", problems)
	}
	if p := problems[0]; p.Line != 0 || !strings.Contains(p.Err, "conversation 3") ||
		!strings.Contains(p.Err, "33333333-aaaa-4bbb-8ccc-000000000003") || !strings.Contains(p.Err, "no mapping") {
		t.Errorf("problem for the record without mapping: %q", p)
	}
	if p := problems[1]; p.Line != 0 || !strings.Contains(p.Err, `conversation 4 "No id"`) || !strings.Contains(p.Err, "no message") {
		t.Errorf("problem for the record without id (and messages): %q", p)
	}

	th := rec.Threads[0]
	if th.Info.Key != "11111111-aaaa-4bbb-8ccc-000000000001" || th.Info.Title != "Postgres indexing" || th.Info.Source != formats.ChatGPT {
		t.Errorf("thread 1 info %+v", th.Info)
	}
	if want := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC); !th.Info.CreatedAt.Equal(want) || th.Info.CreatedAt.Location() != time.UTC {
		t.Errorf("thread 1 created %v, want %v", th.Info.CreatedAt, want)
	}
	// current_node a3's path: the hidden empty system message and the
	// regenerated answer a1 are not in it
	if got, want := th.Keys(), "u1 a2 u2 t1 c1 x1 a3"; got != want {
		t.Errorf("thread 1 keys %q, want %q", got, want)
	}
	if got, want := th.Roles(), "user assistant user assistant assistant tool assistant"; got != want {
		t.Errorf("thread 1 roles %q, want %q", got, want)
	}
	for _, m := range th.Messages {
		if strings.Contains(m.Content, "First answer that was regenerated") || strings.Contains(string(m.Parts), "regenerated") {
			t.Errorf("the regenerated branch is imported: %s", m.Key)
		}
	}
	u1 := th.ByKey(t, "u1")
	if u1.Content != "Why is my query on orders slow?" || u1.Meta["attachments"] != "explain.txt" || u1.Meta["source_id"] != "u1" {
		t.Errorf("u1: %q meta %v", u1.Content, u1.Meta)
	}
	if !u1.CreatedAt.Equal(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("u1 at %v", u1.CreatedAt)
	}
	a2 := th.ByKey(t, "a2")
	if a2.Content != "You are missing an index on customer_id. Add a composite index." || a2.Meta["model"] != "gpt-5" ||
		!a2.CreatedAt.Equal(time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC)) {
		t.Errorf("a2: %q at %v meta %v", a2.Content, a2.CreatedAt, a2.Meta)
	}

	// multimodal: an image part, then the text
	u2 := th.ByKey(t, "u2")
	parts := importtest.Parts(t, u2)
	if len(parts) != 2 || parts[0].Type != model.PartImage || parts[1].Type != model.PartText ||
		parts[1].Text != "Here is the plan output. Can you write the statement?" ||
		!strings.Contains(string(parts[0].Raw), `"asset_pointer":"file-service://file-2"`) {
		t.Errorf("u2 parts %+v", parts)
	}
	if u2.Content != "[image]\n\nHere is the plan output. Can you write the statement?" || u2.Meta["content_type"] != "multimodal_text" {
		t.Errorf("u2 content %q meta %v", u2.Content, u2.Meta)
	}

	// thoughts: thinking only, so no content
	t1 := th.ByKey(t, "t1")
	parts = importtest.Parts(t, t1)
	if len(parts) != 1 || parts[0].Type != model.PartThinking || parts[0].Text != "x\n\ny" || t1.Content != "" {
		t.Errorf("t1: %q parts %+v", t1.Content, parts)
	}

	// code -> a call to the tool that answers it; the output -> a tool
	// message linked to it
	c1 := th.ByKey(t, "c1")
	parts = importtest.Parts(t, c1)
	if len(parts) != 1 || parts[0].Type != model.PartToolCall || parts[0].ToolName != "python" || parts[0].ToolCallID != "c1" ||
		string(parts[0].Input) != `{"code":"CREATE INDEX idx_orders_customer ON orders (customer_id, created_at);"}` {
		t.Errorf("c1 parts %+v", parts)
	}
	x1 := th.ByKey(t, "x1")
	parts = importtest.Parts(t, x1)
	if x1.Role != model.RoleTool || x1.Name != "python" || len(parts) != 1 || parts[0].Type != model.PartToolResult ||
		parts[0].ToolCallID != "c1" || parts[0].Text != "CREATE INDEX" || x1.Content != "[tool result] CREATE INDEX" {
		t.Errorf("x1: %+v parts %+v", x1, parts)
	}
	a3 := th.ByKey(t, "a3")
	if a3.Content != "Done. The query should now use the index." || !a3.CreatedAt.Equal(time.Date(2026, 1, 1, 10, 2, 0, 0, time.UTC)) {
		t.Errorf("a3: %q at %v", a3.Content, a3.CreatedAt)
	}

	th = rec.Threads[1]
	if th.Info.Key != "22222222-aaaa-4bbb-8ccc-000000000002" || th.Info.Title != "Trip ideas" ||
		!th.Info.CreatedAt.Equal(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("thread 2 info %+v", th.Info)
	}
	if th.Keys() != "b1 b2" || th.Roles() != "user assistant" ||
		th.Messages[1].Content != "Sintra is forty minutes away by train." || th.Messages[1].Meta["model"] != "gpt-5-mini" {
		t.Errorf("thread 2: %s %s %+v", th.Keys(), th.Roles(), th.Messages)
	}
}

func TestChatGPTRealExport(t *testing.T) {
	rec, problems := importtest.RunOK(t, Read, string(importtest.File(t, cgRealFile)))
	if len(problems) > 0 {
		t.Errorf("problems %v", problems)
	}
	if len(rec.Threads) != 1 {
		t.Fatalf("%d threads, want 1", len(rec.Threads))
	}
	th := rec.Threads[0]
	importtest.CheckThread(t, th)
	if th.Info.Key != "966da5c4-5bb7-4e4d-ab6d-a7316b96266e" || th.Info.Title != "Average Distance in U(0,1)" {
		t.Errorf("info %+v", th.Info)
	}
	// float seconds are read to the microsecond as written
	if want := time.Date(2023, 9, 21, 19, 57, 53, 968528000, time.UTC); !th.Info.CreatedAt.Equal(want) {
		t.Errorf("created %v, want %v", th.Info.CreatedAt, want)
	}
	// 45 nodes: the root, two hidden empty system messages, 42 messages
	if len(th.Messages) != 42 {
		t.Fatalf("%d messages, want 42", len(th.Messages))
	}
	count := map[model.Role]int{}
	calls := 0
	for i, m := range th.Messages {
		count[m.Role]++
		if i > 0 && m.CreatedAt.Before(th.Messages[i-1].CreatedAt) {
			t.Errorf("%s: time goes back", m.Key)
		}
		parts := importtest.Parts(t, m)
		if len(parts) == 1 && parts[0].Type == model.PartToolCall {
			calls++
			if parts[0].ToolName != "python" || parts[0].ToolCallID != m.Key || !strings.HasPrefix(string(parts[0].Input), `{"code":"`) {
				t.Errorf("%s: call %+v", m.Key, parts[0])
			}
		}
		// every code-interpreter output answers the call right before it
		if m.Role == model.RoleTool {
			prev := importtest.Parts(t, th.Messages[i-1])
			if len(parts) != 1 || parts[0].ToolCallID != th.Messages[i-1].Key || prev[0].Type != model.PartToolCall || m.Name != "python" {
				t.Errorf("%s: result %+v does not answer %s", m.Key, parts, th.Messages[i-1].Key)
			}
		}
	}
	if count[model.RoleUser] != 8 || count[model.RoleAssistant] != 23 || count[model.RoleTool] != 11 || count[model.RoleSystem] != 0 || calls != 11 {
		t.Errorf("roles %v, %d calls; want 8 user, 23 assistant, 11 tool, no system, 11 calls", count, calls)
	}
	first, last := th.Messages[0], th.Messages[41]
	if first.Key != "aaa22f3c-c635-4d92-8b01-5e8c4f5a8a8a" || first.Role != model.RoleUser ||
		!strings.HasPrefix(first.Content, "given two random independent variables x,y in U(0,1)") ||
		!first.CreatedAt.Equal(time.Date(2023, 9, 21, 19, 57, 53, 969279000, time.UTC)) {
		t.Errorf("first message %s %s %q %v", first.Key, first.Role, first.Content, first.CreatedAt)
	}
	if last.Key != "875ad56f-8b75-4e69-9fdc-f96acf212f9c" || last.Meta["model"] != "gpt-4-code-interpreter" ||
		!strings.HasPrefix(last.Content, "Here's the updated graph with the mean split frequency") {
		t.Errorf("last message %s %q %v", last.Key, last.Content, last.Meta)
	}
	reset := th.ByKey(t, "c2caa526-4bf4-462d-b306-d85452407936")
	if reset.Content != "[tool result] Code execution state reset." {
		t.Errorf("tool output %q", reset.Content)
	}
}

// cgConv builds a conversation from nodes "id:parent:role:text" (root
// has an empty parent and role; text "" for message null).
func cgConv(fields string, nodes ...string) string {
	var b strings.Builder
	b.WriteString("{" + fields)
	if fields != "" {
		b.WriteString(",")
	}
	b.WriteString(`"mapping":{`)
	for i, n := range nodes {
		f := strings.SplitN(n, ":", 5)
		id, parent, role, at, text := f[0], f[1], f[2], f[3], f[4]
		if i > 0 {
			b.WriteString(",")
		}
		par := "null"
		if parent != "" {
			par = fmt.Sprintf("%q", parent)
		}
		msg := "null"
		if role != "" {
			if at == "" {
				at = "null"
			}
			msg = fmt.Sprintf(`{"id":%q,"author":{"role":%q},"create_time":%s,"content":{"content_type":"text","parts":[%q]}}`, id, role, at, text)
		}
		fmt.Fprintf(&b, `%q:{"id":%q,"parent":%s,"message":%s}`, id, id, par, msg)
	}
	b.WriteString("}}")
	return b.String()
}

func TestChatGPTPaths(t *testing.T) {
	tree := []string{
		"r:::" + ":",
		"u:r:user:100:question",
		"a1:u:assistant:200:first answer",
		"a2:u:assistant:300:second answer",
		"a3:u:assistant:250:third answer",
	}
	cases := []struct {
		name, fields, want string
	}{
		{"current node", `"id":"c","current_node":"a1"`, "u a1"},
		{"no current node: the newest leaf", `"id":"c"`, "u a2"},
		{"current node not in the mapping", `"id":"c","current_node":"gone"`, "u a2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := importtest.RunOK(t, Read, "["+cgConv(tc.fields, tree...)+"]")
			if got := rec.Threads[0].Keys(); got != tc.want {
				t.Errorf("keys %q, want %q", got, tc.want)
			}
		})
	}
	// leaves without times: the last in the file
	rec, _ := importtest.RunOK(t, Read, "["+cgConv(`"id":"c"`, "r:::"+":", "u:r:user::q", "x:u:assistant::one", "y:u:assistant::two")+"]")
	th := rec.Threads[0]
	if th.Keys() != "u y" || !th.Messages[0].CreatedAt.IsZero() || !th.Info.CreatedAt.IsZero() {
		t.Errorf("untimed: keys %q, times %v %v", th.Keys(), th.Messages[0].CreatedAt, th.Info.CreatedAt)
	}
	// a parent cycle ends the walk instead of looping
	rec, _ = importtest.RunOK(t, Read, "["+cgConv(`"id":"c","current_node":"b"`, "a:b:user::one", "b:a:assistant::two")+"]")
	if got := rec.Threads[0].Keys(); got != "a b" {
		t.Errorf("cycle: keys %q", got)
	}
}

func TestChatGPTNoID(t *testing.T) {
	conv := func(title, at string) string {
		return cgConv(fmt.Sprintf(`"title":%q,"create_time":%s`, title, at), "r:::"+":", "u:r:user:100:hi")
	}
	read := func(data string) (string, []formats.Problem) {
		rec, problems := importtest.RunOK(t, Read, data)
		return rec.Threads[0].Info.Key, problems
	}
	k1, problems := read("[" + conv("Plans", "1700000000.5") + "]")
	if !strings.HasPrefix(k1, "derived-") || len(problems) != 1 || !strings.Contains(problems[0].Err, "no id") ||
		!strings.Contains(problems[0].Err, k1) {
		t.Errorf("key %q problems %v", k1, problems)
	}
	if k2, _ := read("[" + conv("Plans", "1700000000.5") + "]"); k2 != k1 {
		t.Errorf("derived key not stable: %q then %q", k1, k2)
	}
	if k3, _ := read("[" + conv("Plans", "1700000001.5") + "]"); k3 == k1 {
		t.Errorf("another create_time gives the same key %q", k3)
	}
	if k4, _ := read("[" + conv("Other", "1700000000.5") + "]"); k4 == k1 {
		t.Errorf("another title gives the same key %q", k4)
	}
	// conversation_id stands in for id
	rec, problems := importtest.RunOK(t, Read, "["+cgConv(`"conversation_id":"cid"`, "r:::"+":", "u:r:user::hi")+"]")
	if rec.Threads[0].Info.Key != "cid" || len(problems) != 0 {
		t.Errorf("key %q problems %v", rec.Threads[0].Info.Key, problems)
	}
}

func cgOne(t *testing.T, messages ...string) (*importtest.Thread, []formats.Problem) {
	t.Helper()
	var nodes []string
	nodes = append(nodes, `"root":{"id":"root","message":null,"parent":null}`)
	parent := "root"
	for i, m := range messages {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, fmt.Sprintf(`%q:{"id":%q,"parent":%q,"message":%s}`, id, id, parent, m))
		parent = id
	}
	data := fmt.Sprintf(`[{"id":"conv","title":"t","create_time":1700000000,"current_node":%q,"mapping":{%s}}]`, parent, strings.Join(nodes, ","))
	rec, problems := importtest.RunOK(t, Read, data)
	if len(rec.Threads) != 1 {
		t.Fatalf("%d threads", len(rec.Threads))
	}
	importtest.CheckThread(t, rec.Threads[0])
	return rec.Threads[0], problems
}

func TestChatGPTContentTypes(t *testing.T) {
	msg := func(role, name, recipient, content, meta string) string {
		if meta == "" {
			meta = "{}"
		}
		return fmt.Sprintf(`{"author":{"role":%q,"name":%q},"recipient":%q,"create_time":1700000001.25,"content":%s,"metadata":%s}`,
			role, name, recipient, content, meta)
	}
	text := func(s string) string { return fmt.Sprintf(`{"content_type":"text","parts":[%q]}`, s) }
	th, problems := cgOne(t,
		msg("system", "", "all", text("You are terse."), ""), // n1 kept
		msg("system", "", "all", text(""), ""),               // n2 empty: skipped
		msg("user", "", "all", `{"content_type":"user_editable_context","user_profile":"p"}`, `{"is_visually_hidden_from_conversation":true}`), // n3 hidden
		msg("user", "", "all", `{"content_type":"multimodal_text","parts":[{"content_type":"image_asset_pointer","asset_pointer":"sediment://file_9"},{"content_type":"audio_transcription","text":"spoken <words> & more"},{"content_type":"audio_asset_pointer","format":"wav"}]}`,
			`{"attachments":[{"id":"file_9","name":"pic.png","mime_type":"image/png"}]}`), // n4
		msg("assistant", "", "bio", text("User likes <tea>."), `{"model_slug":"gpt-4o"}`), // n5 a call to bio
		msg("tool", "bio", "all", text("Model set context updated."), ""),                 // n6 its result
		msg("assistant", "", "dalle.text2im", text(`{"prompt": "a cat"}`), ""),            // n7 a call with JSON input
		msg("tool", "dalle.text2im", "all", `{"content_type":"multimodal_text","parts":[{"content_type":"image_asset_pointer","asset_pointer":"file-service://file-7"},"DALL·E displayed 1 images."]}`, ""), // n8
		msg("tool", "dalle.text2im", "all", `{"content_type":"system_error","name":"Err","text":"second answer, failed"}`, ""),                                                                              // n9 second result: unlinked, an error
		msg("assistant", "", "all", `{"content_type":"reasoning_recap","content":"Thought for 4 seconds"}`, ""),                                                                                             // n10
		msg("assistant", "", "all", `{"content_type":"tether_browsing_display","result":"","summary":null}`, ""),                                                                                            // n11 other
		msg("assistant", "", "all", text(""), ""),                                              // n12 empty answer: skipped
		msg("critic", "", "all", text("hmm"), ""),                                              // n13 unknown role: a problem
		msg("user", "", "all", `{"content_type":42}`, ""),                                      // n14 unreadable content: a problem
		msg("assistant", "", "all", text("Done."), ""),                                         // n15
		msg("assistant", "", "all", `{"content_type":"computer_output","text":{"odd":1}}`, ""), // n16 kept whole
		msg("user", "", "all", `null`, ""),                                                     // n17 nothing said: skipped
	)
	if got, want := th.Keys(), "n1 n4 n5 n6 n7 n8 n9 n10 n11 n15 n16"; got != want {
		t.Fatalf("keys %q, want %q", got, want)
	}
	if all := fmt.Sprint(problems); len(problems) != 2 || !strings.Contains(all, `"critic"`) || !strings.Contains(all, "message n14 has unreadable content") {
		t.Errorf("problems %v", problems)
	}
	if m := th.ByKey(t, "n1"); m.Role != model.RoleSystem || m.Content != "You are terse." ||
		!m.CreatedAt.Equal(time.Date(2023, 11, 14, 22, 13, 21, 250000000, time.UTC)) {
		t.Errorf("n1: %+v", m)
	}
	n4 := th.ByKey(t, "n4")
	parts := importtest.Parts(t, n4)
	if len(parts) != 3 || parts[0].Type != model.PartImage || parts[0].MediaType != "image/png" ||
		parts[1].Type != model.PartText || parts[1].Text != "spoken <words> & more" || parts[2].Type != model.PartOther ||
		n4.Meta["attachments"] != "pic.png" || n4.Content != "[image image/png]\n\nspoken <words> & more" {
		t.Errorf("n4: %q %+v %v", n4.Content, parts, n4.Meta)
	}
	if !strings.Contains(string(n4.Parts), `"text":"spoken <words> & more"`) {
		t.Errorf("parts are HTML-escaped: %s", n4.Parts)
	}
	parts = importtest.Parts(t, th.ByKey(t, "n5"))
	if parts[0].Type != model.PartToolCall || parts[0].ToolName != "bio" || string(parts[0].Input) != `{"text":"User likes <tea>."}` {
		t.Errorf("n5: %+v", parts)
	}
	n6 := th.ByKey(t, "n6")
	if parts = importtest.Parts(t, n6); parts[0].ToolCallID != "n5" || n6.Name != "bio" || parts[0].Text != "Model set context updated." {
		t.Errorf("n6: %+v %+v", n6, parts)
	}
	if parts = importtest.Parts(t, th.ByKey(t, "n7")); parts[0].ToolName != "dalle.text2im" || string(parts[0].Input) != `{"prompt":"a cat"}` {
		t.Errorf("n7: %+v", parts)
	}
	n8 := th.ByKey(t, "n8")
	if parts = importtest.Parts(t, n8); len(parts) != 2 || parts[0].ToolCallID != "n7" || parts[0].Text != "DALL·E displayed 1 images." ||
		parts[1].Type != model.PartImage || n8.Content != "[tool result] DALL·E displayed 1 images.\n\n[image]" {
		t.Errorf("n8: %q %+v", n8.Content, parts)
	}
	n9 := th.ByKey(t, "n9")
	if parts = importtest.Parts(t, n9); parts[0].ToolCallID != "" || !parts[0].IsError || n9.Name != "dalle.text2im" ||
		n9.Content != "[tool error] second answer, failed" {
		t.Errorf("n9: %q %+v", n9.Content, parts)
	}
	if parts = importtest.Parts(t, th.ByKey(t, "n10")); len(parts) != 1 || parts[0].Type != model.PartThinking || parts[0].Text != "Thought for 4 seconds" {
		t.Errorf("n10: %+v", parts)
	}
	n11 := th.ByKey(t, "n11")
	if parts = importtest.Parts(t, n11); len(parts) != 1 || parts[0].Type != model.PartOther ||
		string(parts[0].Raw) != `{"content_type":"tether_browsing_display","result":"","summary":null}` || n11.Meta["content_type"] != "tether_browsing_display" {
		t.Errorf("n11: %+v", parts)
	}
	if parts = importtest.Parts(t, th.ByKey(t, "n16")); len(parts) != 1 || parts[0].Type != model.PartOther ||
		string(parts[0].Raw) != `{"content_type":"computer_output","text":{"odd":1}}` {
		t.Errorf("n16: %+v", parts)
	}
}

func TestChatGPTShapes(t *testing.T) {
	one := cgConv(`"id":"one","title":"One"`, "r:::"+":", "u:r:user:1700000000:hello")
	two := cgConv(`"id":"two","title":"Two"`, "r:::"+":", "u:r:user:1700000000:bye")
	// a single conversation object, and JSON lines of them
	for name, data := range map[string]string{"object": one, "lines": one + "\n" + two + "\n", "bom": "\xef\xbb\xbf[" + one + "]"} {
		rec, problems := importtest.RunOK(t, Read, data)
		if len(rec.Threads) == 0 || rec.Threads[0].Info.Key != "one" || len(problems) != 0 {
			t.Errorf("%s: %d threads, problems %v", name, len(rec.Threads), problems)
		}
	}
	// a duplicate id is skipped
	rec, problems := importtest.RunOK(t, Read, "["+one+","+one+","+two+"]")
	if len(rec.Threads) != 2 || len(problems) != 1 || !strings.Contains(problems[0].Err, "conversation 2 (one)") {
		t.Errorf("duplicate: %d threads, problems %v", len(rec.Threads), problems)
	}
	// a cut-off file: what came before the cut is imported
	data := "[" + one + "," + two[:len(two)/2]
	rec, problems = importtest.RunOK(t, Read, data)
	if len(rec.Threads) != 1 || len(problems) != 1 || !strings.Contains(problems[0].Err, "conversation 2") || !strings.Contains(problems[0].Err, "cut off") {
		t.Errorf("truncated: %d threads, problems %v", len(rec.Threads), problems)
	}
	// the closing bracket missing, trailing data, a bad element
	for _, data := range []string{"[" + one, "[" + one + "] trailing", "[" + one + ",7]", "[" + one + `,{"title":"x","mapping":5}]`} {
		rec, problems = importtest.RunOK(t, Read, data)
		if len(rec.Threads) != 1 || len(problems) != 1 {
			t.Errorf("%.60q…: %d threads, problems %v", data[len(data)-20:], len(rec.Threads), problems)
		}
	}
}

// cgEdgeTruncations: the edge-case file cut at every 97th byte imports
// nothing wrong and never panics.
func TestChatGPTTruncations(t *testing.T) {
	data := importtest.File(t, cgEdgeFile)
	for n := 0; n < len(data); n += 97 {
		rec := importtest.NewRecorder(t)
		Read(bytes.NewReader(data[:n]), rec)
		for _, th := range rec.Threads {
			importtest.CheckThread(t, th)
		}
	}
}

func TestChatGPTBroken(t *testing.T) {
	jsonl := func(path string) string {
		data := importtest.File(t, path)
		return string(data[:min(len(data), 4000)])
	}
	cases := []struct{ name, in, err string }{
		{"empty", "", "empty file"},
		{"blank", " \n\t\n", "empty file"},
		{"bom only", "\xef\xbb\xbf\n", "empty file"},
		{"garbage", "hello world", "not a ChatGPT export"},
		{"a number", "42", "not a ChatGPT export"},
		{"a string", `"conversations"`, "not a ChatGPT export"},
		{"empty list", "[]", "no ChatGPT conversation"},
		{"open bracket", "[", "no ChatGPT conversation could be read"},
		{"truncated first conversation", `[{"id":"x","mapping":{"a":{"par`, "cut off"},
		{"bad JSON", `[{"id": x}]`, "not valid JSON"},
		{"list of numbers", "[1,2,3]", "none of its 3 elements is a conversation object (the first is a number)"},
		{"nulls then no conversation", `[null,{"foo":1}]`, "its first object (element 2) is an object with keys foo"},
		{"sharegpt", `[{"id":"1","conversations":[{"from":"human","value":"hi"}]}]`, "not a ChatGPT export"},
		{"openai messages", `{"messages":[{"role":"user","content":"hi"}]}`, "not a ChatGPT export"},
		{"codex rollout", jsonl("../testdata/codex-rollout/rollout_all_record_types.jsonl"), "not a ChatGPT export"},
		{"claude code", jsonl("../testdata/claude-code/spotter_tool_heavy.jsonl"), "not a ChatGPT export"},
		{"no mapping", `[{"id":"x","title":"t"}]`, "no ChatGPT conversation with messages"},
		{"empty mapping", `[{"id":"x","mapping":{}}]`, "no ChatGPT conversation with messages"},
		{"mapping not an object", `[{"id":"x","mapping":[1]}]`, "no ChatGPT conversation with messages"},
		{"id not a string", `[{"id":7,"mapping":{}}]`, "no ChatGPT conversation with messages"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, problems, err := importtest.Run(t, Read, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one saying %q (problems %v)", err, tc.err, problems)
			}
			t.Logf("%v; problems %v", err, problems)
			if len(rec.Threads) != 0 {
				t.Errorf("%d threads emitted", len(rec.Threads))
			}
		})
	}
}

func TestChatGPTEmitterError(t *testing.T) {
	f := &importtest.Failing{N: 3}
	_, err := Read(bytes.NewReader(importtest.File(t, cgEdgeFile)), f)
	if !errors.Is(err, importtest.ErrStop) || f.Seen != 3 || f.Ends != 0 {
		t.Errorf("error %v after %d messages and %d ends; want the emitter's, at once", err, f.Seen, f.Ends)
	}
}

// cgCounting counts the bytes read from it.
type cgCounting struct {
	r io.Reader
	n int
}

func (c *cgCounting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type cgBeginAt struct {
	importtest.Failing
	src   *cgCounting
	first int
}

func (b *cgBeginAt) Begin(formats.ThreadInfo) error {
	if b.first == 0 {
		b.first = b.src.n
	}
	return nil
}

// A large export is streamed: the first thread is emitted long before
// the file is read to its end.
func TestChatGPTStreams(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	pad := strings.Repeat("lorem ipsum ", 80)
	for i := range 800 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(cgConv(fmt.Sprintf(`"id":"c%d"`, i), "r:::"+":", "u:r:user:1700000000:"+pad))
	}
	b.WriteString("]")
	src := &cgCounting{r: strings.NewReader(b.String())}
	em := &cgBeginAt{src: src}
	if _, err := Read(src, em); err != nil {
		t.Fatal(err)
	}
	if em.Ends != 800 || em.first == 0 || em.first > b.Len()/4 {
		t.Errorf("%d threads; the first began after %d of %d bytes", em.Ends, em.first, b.Len())
	}
}

func FuzzReadChatGPT(f *testing.F) {
	for _, path := range []string{cgEdgeFile, cgRealFile} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("[" + cgConv(`"id":"c","current_node":"b"`, "a:b:user::one", "b:a:assistant::two") + "]"))
	f.Add([]byte(`{"id":"x","mapping":{"r":{"message":null},"u":{"parent":"r","message":{"author":{"role":"tool"},"content":{"content_type":"execution_output","text":"1"}}}}}`))
	f.Add([]byte(`[{"title":"t","create_time":1e9,"mapping":{"u":{"message":{"author":{"role":"assistant"},"recipient":"python","content":{"content_type":"code","text":"1"}}}}}]`))
	// found by fuzzing: a tool message without content
	f.Add([]byte(` {"mapping":{"00": {"messAge": {"Author": { "role": "tool"}}}}}0`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := importtest.NewRecorder(t)
		problems, err := Read(bytes.NewReader(data), rec)
		if rec.Open && err == nil {
			t.Fatalf("thread left open without an error")
		}
		if err == nil && len(rec.Threads) == 0 {
			t.Fatalf("no thread and no error (problems %v)", problems)
		}
		if len(problems) > formats.MaxProblems+1 {
			t.Fatalf("%d problems", len(problems))
		}
		for _, th := range rec.Threads {
			importtest.CheckThread(t, th)
		}
	})
}
