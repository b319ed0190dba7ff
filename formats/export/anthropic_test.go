package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode"

	"weft/formats"
	"weft/model"
)

func TestWriteAnthropicClean(t *testing.T) {
	var buf bytes.Buffer
	rep, err := WriteAnthropic(&buf, exFixtures["clean"])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"system":"You are terse.","messages":[
{"role":"user","content":[{"type":"text","text":"List files"}]},
{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"ls"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"a.txt\nb.txt"}]},
{"role":"assistant","content":[{"type":"thinking","thinking":"Two <b>&</b> files","signature":"sig1"},{"type":"text","text":"Two files."}]}
]}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	exReportEqual(t, "clean", rep, nil)
	validateAnthropic(t, buf.Bytes())
}

func TestWriteAnthropicRules(t *testing.T) {
	text := func(s string) string { b, _ := json.Marshal(s); return `{"type":"text","text":` + string(b) + `}` }
	user := func(blocks ...string) string { return `{"role":"user","content":[` + strings.Join(blocks, ",") + `]}` }
	asst := func(blocks ...string) string {
		return `{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}`
	}
	use := func(id, name, input string) string {
		return `{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}`
	}
	result := func(id, content string) string {
		return `{"type":"tool_result","tool_use_id":"` + id + `","content":` + content + `}`
	}
	png := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`
	cases := []struct {
		fixture string
		system  string
		want    []string // the messages
		report  []string
	}{
		{"call snipped", "", []string{
			user(text("List files"), text("[tool result Bash] a.txt")),
			asst(text("Two files."))},
			[]string{"item m4: tool result for call toolu_01 whose call is not in the thread: kept as text"}},
		{"result snipped", "", []string{
			user(text("List files")),
			asst(text("Looking."), text(`[tool call Bash] {"command":"ls"}`), text("Two files."))},
			[]string{"item m3: tool call toolu_01 (Bash) has no result in the thread: kept as text"}},
		{"digest in the middle", "", []string{
			user(text("Start"), text("[system] Summary: they talked."), text("Next")),
			asst(text("OK"))}, nil},
		{"leading system and digest", "Be brief.\n\nEarlier: setup.", []string{
			user(text("Hi")),
			asst(text("Hello"))}, nil},
		{"note between call and result", "", []string{
			user(text("Run it")),
			asst(use("toolu_01", "Bash", `{"command":"make"}`)),
			user(result("toolu_01", `"ok"`), text("[system] Note: the build is slow.")),
			asst(text("Built."))}, nil},
		{"consecutive same role", "", []string{
			user(text("one"), text("two")),
			asst(text("three"), text("four"))}, nil},
		{"starts with assistant", "", []string{
			user(text("(continued)")),
			asst(text("Where were we?")),
			user(text("Here."))},
			[]string{`item m7: the thread starts with an assistant message: added a user message "(continued)" before it`}},
		{"empty content", "", []string{
			user(text("(continued)")),
			asst(text("Fine.")),
			user(text("Bye"))},
			[]string{
				"item m1: empty user message: dropped",
				"item m2: empty user message: dropped",
				`item m4: the thread starts with an assistant message: added a user message "(continued)" before it`,
			}},
		{"non-object input", "", []string{
			user(text("go")),
			asst(use("toolu_01", "Bash", `{"value":"ls -la"}`)),
			user(result("toolu_01", `"x"`)),
			asst(use("toolu_02", "Calc", `{"value":[1,2]}`)),
			user(result("toolu_02", `"3"`)),
			asst(use("toolu_03", "Bash", `{"value":"{not json"}`)),
			user(`{"type":"tool_result","tool_use_id":"toolu_03","content":"err","is_error":true}`)},
			[]string{
				`item m2: tool call toolu_01 (Bash): input is not a JSON object: sent as {"value": ...}`,
				`item m4: tool call toolu_02 (Calc): input is not a JSON object: sent as {"value": ...}`,
				`item m6: tool call toolu_03 (Bash): input is not JSON: sent as {"value": "..."}`,
			}},
		{"invalid names", "", []string{
			user(text("hi"), text("yo")),
			asst(use("call_1", "browser_search", `{"q":"x"}`)),
			user(result("call_1", `"found"`))},
			[]string{`item m3: tool name "browser.search" is not valid ([a-zA-Z0-9_-]{1,128}): sent as "browser_search", here and in every later call`}},
		{"calls without ids", "", []string{
			user(text("go")),
			asst(use("toolu_m2_0", "Bash", `{"command":"pwd"}`)),
			user(result("toolu_m2_0", `"/home"`))}, nil},
		{"duplicate ids", "", []string{
			user(text("go")),
			asst(use("t1", "Bash", `{}`)),
			user(result("t1", `"a"`)),
			asst(use("t1_2", "Bash", `{}`)),
			user(result("t1_2", `"b"`))}, nil},
		{"results in a user message", "", []string{
			user(text("go")),
			asst(use("t1", "Read", `{"path":"a"}`), use("t2", "Read", `{"path":"b"}`)),
			user(result("t2", `"B"`), result("t1", `"A"`), text("Both read?"))}, nil},
		{"result moved after a user message", "", []string{
			user(text("go")),
			asst(use("t1", "Bash", `{"command":"ls"}`)),
			user(result("t1", `"x"`), text("wait")),
			asst(text("done"))}, nil},
		{"orphan inside a run of results", "", []string{
			user(text("go")),
			asst(use("a", "Bash", `{}`), use("b", "Bash", `{}`)),
			user(result("a", `"A"`), result("b", `"B"`), text("[tool result Bash] Z"), text("next"))},
			[]string{"item m4: tool result for call z whose call is not in the thread: kept as text"}},
		{"images", "", []string{
			user(text("What is this?"), png, `{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}`, text("[image image/jpeg]")),
			asst(text("A cat."))}, nil},
		{"tool message shapes", "", []string{
			user(text("go")),
			asst(use("t1", "Bash", `{}`), use("toolu_m2_1", "Bash", `{}`)),
			user(result("t1", `"before\nx\nafter\n[image image/gif]"`), result("toolu_m2_1", `"plain output"`))}, nil},
		{"tool result with an image", "", []string{
			user(text("shot")),
			asst(use("t1", "Screenshot", `{}`)),
			user(result("t1", `[`+text("taken")+`,`+png+`]`)),
			asst(text("Got it."))}, nil},
		{"trailing whitespace", "", []string{
			user(text("q")),
			asst(text("answer  \n"), text("more"))}, nil},
		{"trailing whitespace at the end", "", []string{
			user(text("q")),
			asst(text("answer"))}, nil},
		{"ids and thinking", "", []string{
			user(text("go")),
			asst(`{"type":"redacted_thinking","data":"abc"}`, use("call_1_x", "Bash", `{}`), use("toolu_m2_2", "Bash", `{}`)),
			user(result("call_1_x", `"one"`), result("toolu_m2_2", `"two"`))}, nil},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			items, ok := exFixtures[c.fixture]
			if !ok {
				t.Fatalf("no fixture %q", c.fixture)
			}
			var buf bytes.Buffer
			rep, err := WriteAnthropic(&buf, items)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"messages":[` + strings.Join(c.want, ",") + `]}`
			if c.system != "" {
				sys, _ := json.Marshal(c.system)
				want = `{"system":` + string(sys) + `,"messages":[` + strings.Join(c.want, ",") + `]}`
			}
			exJSONEqual(t, c.fixture, buf.Bytes(), want)
			exReportEqual(t, c.fixture, rep, c.report)
			validateAnthropic(t, buf.Bytes())
		})
	}
}

func TestWriteAnthropicEmpty(t *testing.T) {
	var buf bytes.Buffer
	if _, err := WriteAnthropic(&buf, []formats.Item{exItem("m1", model.RoleSystem, "Only a prompt.")}); err != nil {
		t.Fatal(err)
	}
	if want := "{\"system\":\"Only a prompt.\",\"messages\":[]}\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// validateAnthropic checks a document against the Messages API's rules.
func validateAnthropic(t testing.TB, doc []byte) {
	t.Helper()
	for _, p := range exAnthropicProblems(doc) {
		t.Errorf("invalid Anthropic document: %s", p)
	}
	if t.Failed() {
		t.Logf("document:\n%s", doc)
	}
}

func exAnthropicProblems(doc []byte) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	for k, v := range d {
		switch k {
		case "messages":
		case "system":
			if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
				bad("system is %v", v)
			}
		default:
			bad("unknown top-level key %q", k)
		}
	}
	msgs, ok := d["messages"].([]any)
	if !ok {
		return append(problems, "messages is not a list")
	}
	nonBlank := func(v any) bool { s, ok := v.(string); return ok && strings.TrimSpace(s) != "" }
	checkImage := func(where string, b map[string]any) {
		src, _ := b["source"].(map[string]any)
		switch src["type"] {
		case "base64":
			switch src["media_type"] {
			case "image/jpeg", "image/png", "image/gif", "image/webp":
			default:
				bad("%s: image media type %v", where, src["media_type"])
			}
			if !nonBlank(src["data"]) {
				bad("%s: image without data", where)
			}
		case "url":
			if !nonBlank(src["url"]) {
				bad("%s: image without url", where)
			}
		default:
			bad("%s: image source %v", where, src)
		}
	}
	ids := map[string]bool{}
	var calls map[string]bool // the tool_use IDs of the message before
	prevRole := ""
	for i, mv := range msgs {
		m, _ := mv.(map[string]any)
		role, _ := m["role"].(string)
		switch {
		case role != "user" && role != "assistant":
			bad("message %d: role %q", i, role)
		case i == 0 && role != "user":
			bad("message 0 is not a user message")
		case role == prevRole:
			bad("message %d: two %s messages in a row", i, role)
		}
		prevRole = role
		blocks, _ := m["content"].([]any)
		if len(blocks) == 0 {
			bad("message %d: no content blocks", i)
		}
		answered := map[string]bool{}
		seenOther := false
		next := map[string]bool{}
		for k, bv := range blocks {
			b, _ := bv.(map[string]any)
			where := fmt.Sprintf("message %d block %d", i, k)
			typ, _ := b["type"].(string)
			switch {
			case typ == "text":
				if !nonBlank(b["text"]) {
					bad("%s: empty text", where)
				}
				seenOther = true
			case typ == "image" && role == "user":
				checkImage(where, b)
				seenOther = true
			case typ == "tool_result" && role == "user":
				id, _ := b["tool_use_id"].(string)
				switch {
				case seenOther:
					bad("%s: tool_result after other content", where)
				case !calls[id]:
					bad("%s: tool_result for %s answers no tool_use of the message before", where, id)
				case answered[id]:
					bad("%s: %s answered twice", where, id)
				}
				answered[id] = true
				switch c := b["content"].(type) {
				case nil:
					if _, ok := b["content"]; ok {
						bad("%s: null content", where)
					}
				case string:
				case []any:
					for n, cv := range c {
						cb, _ := cv.(map[string]any)
						switch cb["type"] {
						case "text":
							if !nonBlank(cb["text"]) {
								bad("%s content %d: empty text", where, n)
							}
						case "image":
							checkImage(fmt.Sprintf("%s content %d", where, n), cb)
						default:
							bad("%s content %d: type %v", where, n, cb["type"])
						}
					}
				default:
					bad("%s: content %T", where, c)
				}
				if v, ok := b["is_error"]; ok {
					if _, ok := v.(bool); !ok {
						bad("%s: is_error %v", where, v)
					}
				}
			case typ == "thinking" && role == "assistant":
				if _, ok := b["thinking"].(string); !ok || !nonBlank(b["signature"]) {
					bad("%s: thinking without text or signature", where)
				}
			case typ == "redacted_thinking" && role == "assistant":
				if !nonBlank(b["data"]) {
					bad("%s: redacted thinking without data", where)
				}
			case typ == "tool_use" && role == "assistant":
				id, _ := b["id"].(string)
				if !exAnIDRE.MatchString(id) {
					bad("%s: tool_use id %q", where, id)
				} else if ids[id] {
					bad("%s: tool_use id %s used twice", where, id)
				}
				ids[id] = true
				next[id] = true
				if s, _ := b["name"].(string); !exAnNameRE.MatchString(s) {
					bad("%s: tool name %q", where, s)
				}
				if _, ok := b["input"].(map[string]any); !ok {
					bad("%s: input is not an object: %v", where, b["input"])
				}
			default:
				bad("%s: %q block in a %s message", where, typ, role)
			}
		}
		if role == "user" {
			for id := range calls {
				if !answered[id] {
					bad("message %d: tool_use %s of the message before is not answered", i, id)
				}
			}
		}
		calls = next
		if i == len(msgs)-1 && role == "assistant" && len(blocks) > 0 {
			last, _ := blocks[len(blocks)-1].(map[string]any)
			if s, ok := last["text"].(string); ok && last["type"] == "text" && strings.TrimRightFunc(s, unicode.IsSpace) != s {
				bad("message %d: final assistant content ends in whitespace", i)
			}
		}
	}
	for id := range calls {
		bad("tool_use %s of the last message is not answered", id)
	}
	return problems
}

func TestWriteAnthropicRandomThreads(t *testing.T) {
	exRandomThreads(t, WriteAnthropic, exAnthropicProblems, append(exRules[:7:7], "(continued)", "not a JSON object", "is not JSON:"))
}

func BenchmarkWriteAnthropic100k(b *testing.B) {
	items := exBenchItems(100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WriteAnthropic(io.Discard, items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(items))/b.Elapsed().Seconds(), "items/s")
}
