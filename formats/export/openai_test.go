package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"weft/formats"
	"weft/formats/chatgpt"
	"weft/formats/claudecode"
	"weft/formats/codex"
	"weft/formats/internal/importtest"
	"weft/model"
)

// Fixtures shared by the exporters' tests.

var exT0 = time.Date(2026, 1, 26, 9, 0, 0, 0, time.UTC)

func exItem(id string, role model.Role, content string, parts ...model.Part) formats.Item {
	it := formats.Item{ID: model.ItemID(id), Role: role, Content: content, Parts: parts, CreatedAt: exT0}
	if content == "" && len(parts) > 0 {
		it.Content = formats.RenderContent(parts)
	}
	return it
}

func exNamed(it formats.Item, name string) formats.Item {
	it.Name = name
	return it
}

func exText(s string) model.Part { return model.Part{Type: model.PartText, Text: s} }

func exCall(id, name, input string) model.Part {
	p := model.Part{Type: model.PartToolCall, ToolCallID: id, ToolName: name}
	if input != "" {
		p.Input = json.RawMessage(input)
	}
	return p
}

func exResult(id, text string) model.Part {
	return model.Part{Type: model.PartToolResult, ToolCallID: id, Text: text}
}

func exError(id, text string) model.Part {
	p := exResult(id, text)
	p.IsError = true
	return p
}

func exThinking(text, signature string) model.Part {
	p := model.Part{Type: model.PartThinking, Text: text}
	if signature != "" {
		raw, _ := json.Marshal(map[string]string{"type": "thinking", "thinking": text, "signature": signature})
		p.Raw = raw
	}
	return p
}

func exImage(mediaType, raw string) model.Part {
	p := model.Part{Type: model.PartImage, MediaType: mediaType}
	if raw != "" {
		p.Raw = json.RawMessage(raw)
	}
	return p
}

const exPNG = `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`

func exTool(id, name string, parts ...model.Part) formats.Item {
	return exNamed(exItem(id, model.RoleTool, "", parts...), name)
}

func exSynth(id string, op model.OpType, content string) formats.Item {
	opID, _, _ := model.ItemID(id).Synthetic()
	return formats.Item{ID: model.ItemID(id), Role: model.RoleSystem, Content: content, CreatedAt: exT0,
		Synthetic: true, OpID: opID, OpType: op}
}

// exFixtures are threads as operations leave them, one per rule.
var exFixtures = map[string][]formats.Item{
	"clean": {
		exItem("m1", model.RoleSystem, "You are terse."),
		exItem("m2", model.RoleUser, "List files"),
		exItem("m3", model.RoleAssistant, "", exText("Looking."), exCall("toolu_01", "Bash", `{"command": "ls"}`)),
		exTool("m4", "Bash", exResult("toolu_01", "a.txt\nb.txt")),
		exItem("m5", model.RoleAssistant, "", exThinking("Two <b>&</b> files", "sig1"), exText("Two files.")),
	},
	"call snipped": {
		exItem("m2", model.RoleUser, "List files"),
		exTool("m4", "Bash", exResult("toolu_01", "a.txt")),
		exItem("m5", model.RoleAssistant, "Two files."),
	},
	"result snipped": {
		exItem("m2", model.RoleUser, "List files"),
		exItem("m3", model.RoleAssistant, "", exText("Looking."), exCall("toolu_01", "Bash", `{"command":"ls"}`)),
		exItem("m5", model.RoleAssistant, "Two files."),
	},
	"digest in the middle": {
		exItem("m1", model.RoleUser, "Start"),
		exSynth("op1/0", model.OpDigest, "Summary: they talked."),
		exItem("m5", model.RoleUser, "Next"),
		exItem("m6", model.RoleAssistant, "OK"),
	},
	"leading system and digest": {
		exItem("m1", model.RoleSystem, "Be brief."),
		exSynth("op1/0", model.OpDigest, "Earlier: setup."),
		exItem("m4", model.RoleUser, "Hi"),
		exItem("m5", model.RoleAssistant, "Hello"),
	},
	"note between call and result": {
		exItem("m1", model.RoleUser, "Run it"),
		exItem("m2", model.RoleAssistant, "", exCall("toolu_01", "Bash", `{"command":"make"}`)),
		exSynth("op2/0", model.OpInsert, "Note: the build is slow."),
		exTool("m3", "Bash", exResult("toolu_01", "ok")),
		exItem("m4", model.RoleAssistant, "Built."),
	},
	"consecutive same role": {
		exItem("m1", model.RoleUser, "one"),
		exItem("m2", model.RoleUser, "two"),
		exItem("m3", model.RoleAssistant, "three"),
		exItem("m4", model.RoleAssistant, "four"),
	},
	"starts with assistant": {
		exItem("m7", model.RoleAssistant, "Where were we?"),
		exItem("m8", model.RoleUser, "Here."),
	},
	"empty content": {
		exItem("m1", model.RoleUser, ""),
		exItem("m2", model.RoleUser, "  \n"),
		exItem("m3", model.RoleAssistant, "", exThinking("unsigned", "")),
		exItem("m4", model.RoleAssistant, "Fine."),
		exItem("m5", model.RoleUser, "", exText(""), exText("Bye")),
	},
	"non-object input": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "", exCall("toolu_01", "Bash", `"ls -la"`)),
		exTool("m3", "Bash", exResult("toolu_01", "x")),
		exItem("m4", model.RoleAssistant, "", exCall("toolu_02", "Calc", `[1, 2]`)),
		exTool("m5", "Calc", exResult("toolu_02", "3")),
		exItem("m6", model.RoleAssistant, "", exCall("toolu_03", "Bash", `{not json`)),
		exTool("m7", "Bash", exError("toolu_03", "err")),
	},
	"invalid names": {
		exNamed(exItem("m1", model.RoleUser, "hi"), "ana maria"),
		exNamed(exItem("m2", model.RoleUser, "yo"), "bob_1"),
		exItem("m3", model.RoleAssistant, "", exCall("call_1", "browser.search", `{"q":"x"}`)),
		exTool("m4", "browser.search", exResult("call_1", "found")),
	},
	"calls without ids": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "", exCall("", "Bash", `{"command":"pwd"}`)),
		exTool("m3", "Bash", exResult("", "/home")),
	},
	"duplicate ids": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "", exCall("t1", "Bash", `{}`)),
		exTool("m3", "Bash", exResult("t1", "a")),
		exItem("m4", model.RoleAssistant, "", exCall("t1", "Bash", `{}`)),
		exTool("m5", "Bash", exResult("t1", "b")),
	},
	"results in a user message": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "", exCall("t1", "Read", `{"path":"a"}`), exCall("t2", "Read", `{"path":"b"}`)),
		exItem("m3", model.RoleUser, "", exResult("t2", "B"), exResult("t1", "A"), exText("Both read?")),
	},
	"result moved after a user message": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "", exCall("t1", "Bash", `{"command":"ls"}`)),
		exItem("m3", model.RoleUser, "wait"),
		exTool("m4", "Bash", exResult("t1", "x")),
		exItem("m5", model.RoleAssistant, "done"),
	},
	"orphan inside a run of results": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "", exCall("a", "Bash", `{}`), exCall("b", "Bash", `{}`)),
		exTool("m3", "Bash", exResult("a", "A")),
		exTool("m4", "Bash", exResult("z", "Z")),
		exTool("m5", "Bash", exResult("b", "B")),
		exItem("m6", model.RoleUser, "next"),
	},
	"images": {
		exItem("m1", model.RoleUser, "", exText("What is this?"), exImage("image/png", exPNG)),
		exItem("m2", model.RoleUser, "", exImage("", `{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}}`), exImage("image/jpeg", "")),
		exItem("m3", model.RoleAssistant, "A cat."),
	},
	"tool message shapes": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "", exCall("t1", "Bash", `{}`), exCall("", "Bash", `{}`)),
		exTool("m3", "Bash", exText("before"), exResult("t1", "x"), exText("after"), exImage("image/gif", "")),
		exNamed(exItem("m4", model.RoleTool, "plain output"), "Bash"),
	},
	"trailing whitespace": {
		exItem("m1", model.RoleUser, "q"),
		exItem("m2", model.RoleAssistant, "answer  \n"),
		exItem("m3", model.RoleAssistant, "more"),
	},
	"trailing whitespace at the end": {
		exItem("m1", model.RoleUser, "q"),
		exItem("m2", model.RoleAssistant, "answer  \n"),
	},
	"ids and thinking": {
		exItem("m1", model.RoleUser, "go"),
		exItem("m2", model.RoleAssistant, "",
			model.Part{Type: model.PartThinking, Raw: json.RawMessage(`{"type":"redacted_thinking","data":"abc"}`)},
			exCall("call.1/x", "Bash", ``), exCall("", "Bash", `null`)),
		exTool("m3", "Bash", exResult("call.1/x", "one")),
		exTool("m4", "Bash", exResult("", "two")),
	},
	"tool result with an image": {
		exItem("m1", model.RoleUser, "shot"),
		exItem("m2", model.RoleAssistant, "", exCall("t1", "Screenshot", `{}`)),
		exTool("m3", "Screenshot", exResult("t1", "taken"), exImage("image/png", exPNG)),
		exItem("m4", model.RoleAssistant, "Got it."),
	},
}

// exJSONEqual compares two JSON values, ignoring layout and key order.
func exJSONEqual(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want is not JSON: %v\n%s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		gc, _ := json.Marshal(g)
		wc, _ := json.Marshal(w)
		t.Errorf("%s:\n got %s\nwant %s", what, gc, wc)
	}
}

func exReportEqual(t *testing.T, what string, got Report, want []string) {
	t.Helper()
	if !slices.Equal(got.Folded, want) {
		t.Errorf("%s: report\n got %q\nwant %q", what, got.Folded, want)
	}
}

func TestWriteOpenAIClean(t *testing.T) {
	var buf bytes.Buffer
	rep, err := WriteOpenAI(&buf, exFixtures["clean"])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[
{"role":"system","content":"You are terse."},
{"role":"user","content":"List files"},
{"role":"assistant","content":"Looking.","tool_calls":[{"id":"toolu_01","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"ls\"}"}}]},
{"role":"tool","tool_call_id":"toolu_01","content":"a.txt\nb.txt"},
{"role":"assistant","content":"Two files."}
]}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	exReportEqual(t, "clean", rep, nil)
	validateOpenAI(t, buf.Bytes())
}

func TestWriteOpenAIRules(t *testing.T) {
	cases := []struct {
		fixture string
		want    string // the messages
		report  []string
	}{
		{"call snipped", `[
			{"role":"user","content":"List files"},
			{"role":"user","content":"[tool result Bash] a.txt"},
			{"role":"assistant","content":"Two files."}]`,
			[]string{"item m4: tool result for call toolu_01 whose call is not in the thread: kept as text"}},
		{"result snipped", `[
			{"role":"user","content":"List files"},
			{"role":"assistant","content":"Looking.\n\n[tool call Bash] {\"command\":\"ls\"}"},
			{"role":"assistant","content":"Two files."}]`,
			[]string{"item m3: tool call toolu_01 (Bash) has no result in the thread: kept as text"}},
		{"digest in the middle", `[
			{"role":"user","content":"Start"},
			{"role":"system","content":"Summary: they talked."},
			{"role":"user","content":"Next"},
			{"role":"assistant","content":"OK"}]`, nil},
		{"leading system and digest", `[
			{"role":"system","content":"Be brief."},
			{"role":"system","content":"Earlier: setup."},
			{"role":"user","content":"Hi"},
			{"role":"assistant","content":"Hello"}]`, nil},
		{"note between call and result", `[
			{"role":"user","content":"Run it"},
			{"role":"assistant","content":"[tool call Bash] {\"command\":\"make\"}"},
			{"role":"system","content":"Note: the build is slow."},
			{"role":"user","content":"[tool result Bash] ok"},
			{"role":"assistant","content":"Built."}]`,
			[]string{
				"item m2: tool call toolu_01 (Bash) is not answered right after it: kept as text",
				"item m3: tool result for call toolu_01 that does not come right after its call: kept as text",
			}},
		{"consecutive same role", `[
			{"role":"user","content":"one"},
			{"role":"user","content":"two"},
			{"role":"assistant","content":"three"},
			{"role":"assistant","content":"four"}]`, nil},
		{"starts with assistant", `[
			{"role":"assistant","content":"Where were we?"},
			{"role":"user","content":"Here."}]`, nil},
		{"empty content", `[
			{"role":"assistant","content":"Fine."},
			{"role":"user","content":"Bye"}]`,
			[]string{"item m1: empty user message: dropped", "item m2: empty user message: dropped"}},
		{"non-object input", `[
			{"role":"user","content":"go"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_01","type":"function","function":{"name":"Bash","arguments":"\"ls -la\""}}]},
			{"role":"tool","tool_call_id":"toolu_01","content":"x"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_02","type":"function","function":{"name":"Calc","arguments":"[1,2]"}}]},
			{"role":"tool","tool_call_id":"toolu_02","content":"3"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_03","type":"function","function":{"name":"Bash","arguments":"{not json"}}]},
			{"role":"tool","tool_call_id":"toolu_03","content":"err"}]`, nil},
		{"invalid names", `[
			{"role":"user","content":"hi"},
			{"role":"user","name":"bob_1","content":"yo"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"browser_search","arguments":"{\"q\":\"x\"}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"found"}]`,
			[]string{
				`item m1: name "ana maria" is not valid ([a-zA-Z0-9_-]{1,64}): dropped`,
				`item m3: tool name "browser.search" is not valid ([a-zA-Z0-9_-]{1,64}): sent as "browser_search", here and in every later call`,
			}},
		{"calls without ids", `[
			{"role":"user","content":"go"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_m2_0","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"pwd\"}"}}]},
			{"role":"tool","tool_call_id":"call_m2_0","content":"/home"}]`, nil},
		{"duplicate ids", `[
			{"role":"user","content":"go"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"Bash","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"t1","content":"a"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"t1_2","type":"function","function":{"name":"Bash","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"t1_2","content":"b"}]`, nil},
		{"results in a user message", `[
			{"role":"user","content":"go"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"t1","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a\"}"}},
				{"id":"t2","type":"function","function":{"name":"Read","arguments":"{\"path\":\"b\"}"}}]},
			{"role":"tool","tool_call_id":"t2","content":"B"},
			{"role":"tool","tool_call_id":"t1","content":"A"},
			{"role":"user","content":"Both read?"}]`, nil},
		{"result moved after a user message", `[
			{"role":"user","content":"go"},
			{"role":"assistant","content":"[tool call Bash] {\"command\":\"ls\"}"},
			{"role":"user","content":"wait"},
			{"role":"user","content":"[tool result Bash] x"},
			{"role":"assistant","content":"done"}]`,
			[]string{
				"item m2: tool call t1 (Bash) is not answered right after it: kept as text",
				"item m4: tool result for call t1 that does not come right after its call: kept as text",
			}},
		{"orphan inside a run of results", `[
			{"role":"user","content":"go"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"a","type":"function","function":{"name":"Bash","arguments":"{}"}},
				{"id":"b","type":"function","function":{"name":"Bash","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"a","content":"A"},
			{"role":"tool","tool_call_id":"b","content":"B"},
			{"role":"user","content":"[tool result Bash] Z"},
			{"role":"user","content":"next"}]`,
			[]string{"item m4: tool result for call z whose call is not in the thread: kept as text"}},
		{"images", `[
			{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
			{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}},{"type":"text","text":"[image image/jpeg]"}]},
			{"role":"assistant","content":"A cat."}]`, nil},
		{"tool message shapes", `[
			{"role":"user","content":"go"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"t1","type":"function","function":{"name":"Bash","arguments":"{}"}},
				{"id":"call_m2_1","type":"function","function":{"name":"Bash","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"t1","content":"before\nx\nafter\n[image image/gif]"},
			{"role":"tool","tool_call_id":"call_m2_1","content":"plain output"}]`, nil},
		{"tool result with an image", `[
			{"role":"user","content":"shot"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"Screenshot","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"t1","content":"taken\n[image image/png]"},
			{"role":"assistant","content":"Got it."}]`, nil},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			items, ok := exFixtures[c.fixture]
			if !ok {
				t.Fatalf("no fixture %q", c.fixture)
			}
			var buf bytes.Buffer
			rep, err := WriteOpenAI(&buf, items)
			if err != nil {
				t.Fatal(err)
			}
			exJSONEqual(t, c.fixture, buf.Bytes(), `{"messages":`+c.want+`}`)
			exReportEqual(t, c.fixture, rep, c.report)
			validateOpenAI(t, buf.Bytes())
		})
	}
}

func TestWriteOpenAIEmpty(t *testing.T) {
	var buf bytes.Buffer
	if _, err := WriteOpenAI(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "{\"messages\":[]}\n" {
		t.Errorf("got %q", buf.String())
	}
}

// validateOpenAI checks a document against chat completions' rules.
func validateOpenAI(t testing.TB, doc []byte) {
	t.Helper()
	for _, p := range exOpenAIProblems(doc) {
		t.Errorf("invalid OpenAI document: %s", p)
	}
	if t.Failed() {
		t.Logf("document:\n%s", doc)
	}
}

var (
	exNameRE   = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	exAnNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	exAnIDRE   = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
)

func exOpenAIProblems(doc []byte) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	for k := range d {
		if k != "messages" {
			bad("unknown top-level key %q", k)
		}
	}
	msgs, ok := d["messages"].([]any)
	if !ok {
		return append(problems, "messages is not a list")
	}
	ids := map[string]bool{}
	var open map[string]bool // the calls of the last assistant message with tool calls, while only tool messages follow it
	closeOpen := func(at string) {
		for id, answered := range open {
			if !answered {
				bad("tool call %s is not answered before %s", id, at)
			}
		}
		open = nil
	}
	for i, mv := range msgs {
		m, ok := mv.(map[string]any)
		if !ok {
			bad("message %d is not an object", i)
			continue
		}
		role, _ := m["role"].(string)
		if n, ok := m["name"]; ok {
			if s, _ := n.(string); !exNameRE.MatchString(s) {
				bad("message %d: invalid name %v", i, n)
			}
		}
		content, hasContent := m["content"]
		if role == "tool" {
			id, _ := m["tool_call_id"].(string)
			switch answered, known := open[id]; {
			case id == "":
				bad("message %d: tool message without tool_call_id", i)
			case open == nil:
				bad("message %d: tool message for %s follows no assistant tool calls", i, id)
			case !known:
				bad("message %d: tool message for %s answers no call of the last assistant message with calls", i, id)
			case answered:
				bad("message %d: call %s answered twice", i, id)
			default:
				open[id] = true
			}
			if _, ok := content.(string); !ok {
				bad("message %d: tool content is not a string", i)
			}
			continue
		}
		closeOpen(fmt.Sprintf("message %d (%s)", i, role))
		switch role {
		case "system", "developer":
			if s, ok := content.(string); !ok || s == "" {
				bad("message %d: system content %v", i, content)
			}
		case "user":
			switch c := content.(type) {
			case string:
				if c == "" {
					bad("message %d: empty user content", i)
				}
			case []any:
				if len(c) == 0 {
					bad("message %d: empty content list", i)
				}
				for k, pv := range c {
					p, _ := pv.(map[string]any)
					switch p["type"] {
					case "text":
						if s, _ := p["text"].(string); s == "" {
							bad("message %d part %d: empty text", i, k)
						}
					case "image_url":
						u, _ := p["image_url"].(map[string]any)
						if s, _ := u["url"].(string); s == "" {
							bad("message %d part %d: image without url", i, k)
						}
					default:
						bad("message %d part %d: unknown part %v", i, k, p["type"])
					}
				}
			default:
				bad("message %d: user content %T", i, content)
			}
		case "assistant":
			calls, _ := m["tool_calls"].([]any)
			if _, ok := m["tool_calls"]; ok && len(calls) == 0 {
				bad("message %d: empty tool_calls", i)
			}
			switch c := content.(type) {
			case string:
				if c == "" && len(calls) == 0 {
					bad("message %d: empty assistant message", i)
				}
			case nil:
				if !hasContent || len(calls) == 0 {
					bad("message %d: assistant without content or tool calls", i)
				}
			default:
				bad("message %d: assistant content %T", i, content)
			}
			if len(calls) > 0 {
				open = map[string]bool{}
			}
			for k, cv := range calls {
				c, _ := cv.(map[string]any)
				id, _ := c["id"].(string)
				if id == "" {
					bad("message %d call %d: no id", i, k)
				} else if ids[id] {
					bad("message %d call %d: id %s used twice", i, k, id)
				}
				ids[id] = true
				open[id] = false
				if c["type"] != "function" {
					bad("message %d call %d: type %v", i, k, c["type"])
				}
				f, _ := c["function"].(map[string]any)
				if s, _ := f["name"].(string); !exNameRE.MatchString(s) {
					bad("message %d call %d: invalid name %q", i, k, s)
				}
				if _, ok := f["arguments"].(string); !ok {
					bad("message %d call %d: arguments is not a string", i, k)
				}
			}
		default:
			bad("message %d: role %q", i, role)
		}
	}
	closeOpen("the end")
	return problems
}

// exRandomThread is a random thread with tool calls and results, after
// random operations: items snipped, moved, digested.
func exRandomThread(r *rand.Rand) []formats.Item {
	var items []formats.Item
	seq := 0
	next := func() string { seq++; return "m" + strconv.Itoa(seq) }
	calls := 0
	var lastID string
	texts := []string{"hello", "Let me check that.", "  padded text  \n", "", " \n\t", "done <ok> & \"quoted\"", "line one\nline two\n"}
	text := func() string { return texts[r.IntN(len(texts))] }
	image := func() model.Part {
		switch r.IntN(4) {
		case 0:
			return exImage("image/png", exPNG)
		case 1:
			return exImage("image/jpeg", `{"type":"input_image","image_url":"data:image/jpeg;base64,/9j/4AAQ"}`)
		case 2:
			return exImage("image/bmp", `{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"Qk0="}}`)
		}
		return exImage("", "")
	}
	n := 1 + r.IntN(30)
	for len(items) < n {
		switch k := r.IntN(14); {
		case k == 0:
			it := exItem(next(), model.RoleSystem, text())
			switch r.IntN(3) {
			case 0:
				it = exSynth(fmt.Sprintf("op%d/0", seq), model.OpDigest, "Summary of earlier turns.")
			case 1:
				it = exSynth(fmt.Sprintf("op%d/0", seq), model.OpInsert, text())
			}
			items = append(items, it)
		case k <= 2:
			it := exItem(next(), model.RoleUser, text())
			if r.IntN(3) == 0 {
				it = exItem(string(it.ID), model.RoleUser, "", exText(text()), image())
			}
			if r.IntN(4) == 0 {
				it.Name = []string{"ana", "ana maria", strings.Repeat("x", 70)}[r.IntN(3)]
			}
			items = append(items, it)
		case k <= 8:
			var parts []model.Part
			if r.IntN(2) == 0 {
				parts = append(parts, exText(text()))
			}
			if r.IntN(3) == 0 {
				sig := ""
				if r.IntN(2) == 0 {
					sig = "sig"
				}
				parts = append(parts, exThinking("thinking...", sig))
			}
			type call struct{ id, name string }
			var made []call
			for c := r.IntN(4); c > 0; c-- {
				calls++
				id := "toolu_" + strconv.Itoa(calls)
				switch r.IntN(10) {
				case 0:
					id = ""
				case 1:
					if lastID != "" {
						id = lastID
					}
				case 2:
					id = "call." + strconv.Itoa(calls) + "/x"
				}
				lastID = id
				name := []string{"Bash", "Read", "browser.search", "", strings.Repeat("n", 130)}[r.IntN(5)]
				input := []string{`{"command":"ls"}`, `"text"`, `[1,2]`, `{bad`, ``, `null`, `42`}[r.IntN(7)]
				parts = append(parts, exCall(id, name, input))
				made = append(made, call{id, name})
			}
			items = append(items, exItem(next(), model.RoleAssistant, "", parts...))
			r.Shuffle(len(made), func(i, j int) { made[i], made[j] = made[j], made[i] })
			var results []model.Part
			for _, c := range made {
				if r.IntN(8) == 0 {
					continue
				}
				res := exResult(c.id, text())
				if r.IntN(6) == 0 {
					res.IsError = true
				}
				results = append(results, res)
			}
			if r.IntN(6) == 0 {
				results = append(results, exResult("ghost_"+strconv.Itoa(seq), "boo"))
			}
			if r.IntN(2) == 0 {
				for _, res := range results {
					parts := []model.Part{res}
					if r.IntN(5) == 0 {
						parts = append(parts, image())
					}
					if r.IntN(8) == 0 {
						parts = append([]model.Part{exText("before")}, parts...)
					}
					items = append(items, exTool(next(), "Bash", parts...))
				}
			} else if len(results) > 0 {
				if r.IntN(2) == 0 {
					results = append(results, exText(text()))
				}
				items = append(items, exItem(next(), model.RoleUser, "", results...))
			}
		case k <= 10:
			items = append(items, exItem(next(), model.RoleAssistant, text()))
		case k == 11:
			it := exItem(next(), model.RoleTool, text())
			if r.IntN(2) == 0 {
				it = exTool(string(it.ID), "Bash", exResult("toolu_"+strconv.Itoa(r.IntN(calls+1)), text()))
			}
			items = append(items, it)
		case k == 12:
			items = append(items, exItem(next(), model.RoleAssistant, "", exThinking("only thinking", "")))
		default:
			switch r.IntN(4) {
			case 0:
				items = append(items, exItem(next(), model.RoleUser, "", exCall("toolu_u", "Bash", `{}`)))
			case 1:
				items = append(items, exItem(next(), model.RoleAssistant, "", exResult("toolu_1", "misplaced")))
			case 2:
				items = append(items, exItem(next(), model.RoleSystem, "", exText("sys"), exCall("", "Bash", ``), image()))
			default:
				items = append(items, formats.Item{ID: model.ItemID(next()), Role: "", Content: "no role"})
			}
		}
	}
	// Operations: snip, move, digest.
	kept := items[:0]
	for _, it := range items {
		if r.IntN(6) != 0 {
			kept = append(kept, it)
		}
	}
	items = kept
	for m := r.IntN(3); m > 0 && len(items) > 1; m-- {
		i, j := r.IntN(len(items)), r.IntN(len(items))
		it := items[i]
		items = slices.Insert(slices.Delete(items, i, i+1), j, it)
	}
	if r.IntN(3) == 0 && len(items) > 2 {
		i := r.IntN(len(items))
		j := i + r.IntN(min(4, len(items)-i))
		items = slices.Replace(items, i, j+1, exSynth("opd/0", model.OpDigest, "Digest of a range."))
	}
	return items
}

// exStrings collects every string of a decoded JSON document.
func exStrings(v any, b *strings.Builder) {
	switch v := v.(type) {
	case string:
		b.WriteString(v)
		b.WriteByte(0)
	case []any:
		for _, e := range v {
			exStrings(e, b)
		}
	case map[string]any:
		for _, e := range v {
			exStrings(e, b)
		}
	}
}

// exCheckKept checks that no text of the thread was lost on the way.
func exCheckKept(t testing.TB, items []formats.Item, doc []byte) {
	t.Helper()
	var d any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	exStrings(d, &b)
	all := b.String()
	check := func(id model.ItemID, s string) {
		if s = strings.TrimSpace(s); s != "" && !strings.Contains(all, s) {
			t.Errorf("item %s: text %q is not in the document", id, s)
		}
	}
	for _, it := range items {
		if !xpStructural(it.Parts) {
			check(it.ID, it.Content)
			continue
		}
		for _, p := range it.Parts {
			if p.Type == model.PartText || p.Type == model.PartToolResult {
				check(it.ID, p.Text)
			}
		}
	}
}

func TestWriteOpenAIRandomThreads(t *testing.T) {
	exRandomThreads(t, WriteOpenAI, exOpenAIProblems, append(exRules[:7:7], `: name "`))
}

// exRandomThreads writes 500 random edited threads with write: each
// document must be valid (problems finds none), keep every item, be the
// same when written twice, and the rules named must all be seen at work.
func exRandomThreads(t *testing.T, write func(io.Writer, []formats.Item) (Report, error), problems func([]byte) []string, rules []string) {
	t.Helper()
	seen := exRuleCounter{}
	defer seen.check(t, rules...)
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 1))
		items := exRandomThread(r)
		var buf bytes.Buffer
		rep, err := write(&buf, items)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if ps := problems(buf.Bytes()); len(ps) > 0 {
			t.Fatalf("seed %d: invalid document: %q\nreport %q\n%s", seed, ps, rep.Folded, buf.Bytes())
		}
		exCheckKept(t, items, buf.Bytes())
		seen.count(rep)
		var again bytes.Buffer
		rep2, _ := write(&again, items)
		if !bytes.Equal(buf.Bytes(), again.Bytes()) || !slices.Equal(rep.Folded, rep2.Folded) {
			t.Fatalf("seed %d: two exports differ", seed)
		}
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// exImported reads a conversation file with an importer and returns
// its first thread as export items.
func exImported(t testing.TB, path string, read formats.Reader) []formats.Item {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	rec := importtest.NewRecorder(t)
	if _, err := read(f, rec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rec.Threads) == 0 {
		t.Fatalf("%s: no threads", path)
	}
	var items []formats.Item
	for i, m := range rec.Threads[0].Messages {
		items = append(items, formats.Item{ID: model.MessageID(uint64(i + 1)), Role: m.Role, Content: m.Content, Name: m.Name,
			Parts: model.DecodeParts(m.Parts), CreatedAt: m.CreatedAt, Tokens: m.Tokens})
	}
	return items
}

var exImports = []struct {
	path string
	read formats.Reader
}{
	{"../testdata/claude-code/spotter_long_session.jsonl", claudecode.Read},
	{"../testdata/claude-code/spotter_tool_heavy.jsonl", claudecode.Read},
	{"../testdata/codex-rollout/rollout_all_record_types.jsonl", codex.Read},
	{"../testdata/chatgpt-export/chatgpt2graph_conversations.json", chatgpt.Read},
}

// Real threads export valid, and stay valid with random items snipped.
func TestWriteProvidersImported(t *testing.T) {
	for _, imp := range exImports {
		t.Run(imp.path, func(t *testing.T) {
			items := exImported(t, imp.path, imp.read)
			for seed := range uint64(20) {
				its := items
				if seed > 0 {
					r := rand.New(rand.NewPCG(seed, 2))
					its = slices.DeleteFunc(slices.Clone(items), func(formats.Item) bool { return r.IntN(5) == 0 })
				}
				var oa, an bytes.Buffer
				rep, err := WriteOpenAI(&oa, its)
				if err != nil {
					t.Fatal(err)
				}
				validateOpenAI(t, oa.Bytes())
				exCheckKept(t, its, oa.Bytes())
				rep2, err := WriteAnthropic(&an, its)
				if err != nil {
					t.Fatal(err)
				}
				validateAnthropic(t, an.Bytes())
				exCheckKept(t, its, an.Bytes())
				if seed == 0 {
					t.Logf("%d items; openai report %d lines, anthropic %d", len(items), len(rep.Folded), len(rep2.Folded))
				}
				if t.Failed() {
					t.Fatalf("seed %d", seed)
				}
			}
		})
	}
}

// exBenchItems is a realistic long thread: user turns, assistant turns
// with tool calls and their results, about 300 bytes each.
func exBenchItems(n int) []formats.Item {
	r := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields("the quick brown fox jumps over a lazy dog while weft keeps every operation reversible and the effective thread is what reaches the provider")
	sentence := func(size int) string {
		var b strings.Builder
		for b.Len() < size {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	items := make([]formats.Item, 0, n)
	at := exT0
	for len(items) < n {
		id := func() model.ItemID { return model.MessageID(uint64(len(items) + 1)) }
		at = at.Add(time.Minute)
		items = append(items, formats.Item{ID: id(), Role: model.RoleUser, Content: sentence(300), CreatedAt: at, Tokens: 70})
		if r.IntN(3) == 0 {
			callID := "toolu_" + strconv.Itoa(len(items))
			parts := []model.Part{exText(sentence(150)), exCall(callID, "Bash", `{"command":"grep -rn \"`+sentence(60)+`\" ."}`)}
			items = append(items, formats.Item{ID: id(), Role: model.RoleAssistant, Content: formats.RenderContent(parts), Parts: parts, CreatedAt: at, Tokens: 70})
			res := []model.Part{exResult(callID, sentence(300))}
			items = append(items, formats.Item{ID: id(), Role: model.RoleTool, Name: "Bash", Content: formats.RenderContent(res), Parts: res, CreatedAt: at, Tokens: 70})
		}
		parts := []model.Part{exText(sentence(300))}
		items = append(items, formats.Item{ID: id(), Role: model.RoleAssistant, Content: parts[0].Text, Parts: parts, CreatedAt: at, Tokens: 70})
	}
	return items[:n]
}

func BenchmarkWriteOpenAI100k(b *testing.B) {
	items := exBenchItems(100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WriteOpenAI(io.Discard, items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(items))/b.Elapsed().Seconds(), "items/s")
}

// The validators catch what they are there to catch.
func TestExportValidators(t *testing.T) {
	openai := []string{
		`{"messages":[{"role":"tool","tool_call_id":"a","content":"x"}]}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"b","content":"x"}]}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"system","content":"s"},{"role":"tool","tool_call_id":"a","content":"x"}]}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f.g","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]}`,
		`{"messages":[{"role":"user","name":"a b","content":"x"}]}`,
		`{"messages":[{"role":"assistant","content":null}]}`,
	}
	for _, doc := range openai {
		if len(exOpenAIProblems([]byte(doc))) == 0 {
			t.Errorf("validateOpenAI passed %s", doc)
		}
	}
	anthropic := []string{
		`{"messages":[{"role":"assistant","content":[{"type":"text","text":"a"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}`,
		`{"messages":[{"role":"user","content":[]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"b"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"b"},{"type":"tool_result","tool_use_id":"t"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"x"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"text","text":"b "}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"x"}}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`,
	}
	for _, doc := range anthropic {
		if len(exAnthropicProblems([]byte(doc))) == 0 {
			t.Errorf("validateAnthropic passed %s", doc)
		}
	}
}

// exRuleCounter counts the report lines of random exports by rule, to
// check that the random threads exercise every rule.
type exRuleCounter map[string]int

var exRules = []string{
	"whose call is not in the thread", "that does not come right after its call", "without a call id",
	"has no result in the thread", "is not answered right after it", "empty", "tool name",
	`: name "`, "(continued)", "not a JSON object", "is not JSON:",
}

func (c exRuleCounter) count(r Report) {
	for _, line := range r.Folded {
		for _, rule := range exRules {
			if strings.Contains(line, rule) {
				c[rule]++
			}
		}
	}
}

func (c exRuleCounter) check(t *testing.T, rules ...string) {
	t.Logf("report lines by rule: %v", map[string]int(c))
	for _, rule := range rules {
		if c[rule] == 0 {
			t.Errorf("no random thread exercised %q", rule)
		}
	}
}
