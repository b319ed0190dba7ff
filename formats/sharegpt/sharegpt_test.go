package sharegpt

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/model"
)

const (
	sgDummyFile  = "../testdata/sharegpt/fastchat_dummy_conversation.json"
	sgGlaiveFile = "../testdata/sharegpt/llamafactory_glaive_toolcall_en_demo.json"
)

func TestReadShareGPTFastChat(t *testing.T) {
	rec, problems := importtest.RunOK(t, Read, string(importtest.File(t, sgDummyFile)))
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	if th, n := rec.Count(); th != 500 || n != 2000 {
		t.Fatalf("%d threads, %d messages; want 500, 2000", th, n)
	}
	for i, th := range rec.Threads {
		if want := fmt.Sprintf("identity_%d", i); th.Info.Key != want || th.Info.Source != formats.ShareGPT {
			t.Fatalf("thread %d: %+v, want key %s", i, th.Info, want)
		}
		for _, m := range th.Messages {
			if m.Parts != nil || !m.CreatedAt.IsZero() || m.Meta != nil {
				t.Fatalf("%s/%s: plain text with parts, a time or meta: %+v", th.Info.Key, m.Key, m)
			}
		}
	}
	th := rec.Threads[2]
	if th.Roles() != "user assistant user assistant user assistant" || th.Info.Title != "What is up?" {
		t.Errorf("identity_2: %q %q", th.Roles(), th.Info.Title)
	}
	if m := th.Messages[5]; m.Content != "Goodbye! If you have any more questions in the future, don't hesitate to ask." ||
		m.Key != "0000000006:"+model.ContentDigest(model.RoleAssistant, m.Content)[:12] {
		t.Errorf("identity_2 last: %+v", m)
	}
	if th := rec.Threads[499]; th.Roles() != "user assistant" {
		t.Errorf("identity_499: %q", th.Roles())
	}
}

// The glaive tool-call demo: 300 conversations, 211 function_call turns,
// each answered by the observation right after it.
func TestReadShareGPTGlaive(t *testing.T) {
	rec, problems := importtest.RunOK(t, Read, string(importtest.File(t, sgGlaiveFile)))
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	if th, n := rec.Count(); th != 300 || n != 1914 {
		t.Fatalf("%d threads, %d messages; want 300, 1914", th, n)
	}
	calls, results := 0, 0
	for ti, th := range rec.Threads {
		if len(th.Info.Key) != 16 {
			t.Errorf("thread %d: key %q is not derived", ti+1, th.Info.Key)
		}
		if th.Messages[0].Meta["tools"] == "" {
			t.Errorf("thread %d: tools not kept in meta", ti+1)
		}
		for i, m := range th.Messages {
			parts := importtest.Parts(t, m)
			if m.Role == model.RoleTool && (len(parts) != 1 || parts[0].Type != model.PartToolResult) {
				t.Errorf("thread %d %s: tool message without a result: %q", ti+1, m.Key, m.Content)
			}
			if len(parts) == 0 || parts[0].Type != model.PartToolCall {
				continue
			}
			calls++
			call := parts[0]
			if m.Role != model.RoleAssistant || call.ToolName == "" || !strings.HasPrefix(call.ToolCallID, "call_") || len(call.Input) == 0 || call.Input[0] != '{' {
				t.Errorf("thread %d %s: call %+v", ti+1, m.Key, call)
			}
			if !strings.HasPrefix(m.Content, "[tool call "+call.ToolName+"]") {
				t.Errorf("thread %d %s: content %q", ti+1, m.Key, m.Content)
			}
			next := th.Messages[i+1]
			res := importtest.Parts(t, next)
			if next.Role != model.RoleTool || len(res) != 1 || res[0].Type != model.PartToolResult ||
				res[0].ToolCallID != call.ToolCallID || next.Name != call.ToolName || !strings.HasPrefix(next.Content, "[tool result] ") {
				t.Errorf("thread %d: call %s answered by %+v", ti+1, call.ToolCallID, next)
			} else {
				results++
			}
		}
	}
	if calls != 211 || results != 211 {
		t.Errorf("%d calls, %d paired results; want 211, 211", calls, results)
	}
	first := rec.Threads[0]
	if first.Roles() != "user assistant user assistant tool assistant user assistant" {
		t.Errorf("record 1 roles %q", first.Roles())
	}
	call := importtest.Parts(t, first.Messages[3])[0]
	if call.ToolCallID != "call_1" || call.ToolName != "search_recipes" || string(call.Input) != `{"ingredients":["chicken","bell peppers","rice"]}` {
		t.Errorf("record 1 call %+v", call)
	}
	if first.Info.Title != "Hi, I have some ingredients and I want to cook something. Can you help me find…" {
		t.Errorf("title %q", first.Info.Title)
	}
	if th := rec.Threads[90]; len(th.Messages) != 14 {
		t.Errorf("record 91 has %d messages, want 14", len(th.Messages))
	}
}

func TestReadShareGPTShapes(t *testing.T) {
	rec := `{"id": "r1", "system": "Be kind.", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}`
	cases := map[string]string{
		"array":  "[" + rec + "]",
		"jsonl":  rec + "\n",
		"object": "{\n  \"id\": \"r1\",\n  \"system\": \"Be kind.\",\n  \"conversations\": [\n    {\"from\": \"human\", \"value\": \"hi\"},\n    {\"from\": \"gpt\", \"value\": \"hello\"}\n  ]\n}\n",
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			r, problems := importtest.RunOK(t, Read, data)
			if len(problems) > 0 || len(r.Threads) != 1 {
				t.Fatalf("problems %v, %d threads", problems, len(r.Threads))
			}
			th := r.Threads[0]
			if th.Info.Key != "r1" || th.Info.Title != "hi" || th.Roles() != "system user assistant" {
				t.Fatalf("%+v %q", th.Info, th.Roles())
			}
			if th.Messages[0].Content != "Be kind." || !strings.HasPrefix(th.Messages[0].Key, "0000000000:") || !strings.HasPrefix(th.Messages[1].Key, "0000000001:") {
				t.Errorf("system %+v", th.Messages[0])
			}
		})
	}
}

func TestReadShareGPTTurns(t *testing.T) {
	data := `[{"conversations": [
{"from": "system", "value": "sys"},
{"from": "user", "value": "look <image> here"},
{"from": "Assistant", "value": "ok"},
{"from": "bing", "value": "b"},
{"from": "bard", "value": "c"},
{"from": "chatgpt", "value": "d"},
{"from": "function_call", "value": "[{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 1}\"}, {\"name\": \"b\", \"arguments\": {}}]"},
{"from": "observation", "value": "ra"},
{"from": "tool", "value": {"out": 2}},
{"from": "observation", "value": "orphan"},
{"from": "function_call", "value": "not json"},
{"role": "user", "content": "role/content turn"}
], "images": ["pic.webp"], "source": "test", "score": 3}]`
	rec, problems := importtest.RunOK(t, Read, data)
	if len(problems) != 1 || !strings.Contains(problems[0].Err, "record 1: turn 11: function_call value is not JSON") {
		t.Errorf("problems %v", problems)
	}
	th := rec.Threads[0]
	if th.Roles() != "system user assistant assistant assistant assistant assistant tool tool tool assistant user" {
		t.Fatalf("roles %q", th.Roles())
	}
	ms := th.Messages
	if ms[0].Meta["source"] != "test" || ms[0].Meta["score"] != "3" {
		t.Errorf("record meta %v", ms[0].Meta)
	}
	if p := importtest.Parts(t, ms[1]); len(p) != 3 || p[1].Type != model.PartImage || p[1].MediaType != "image/webp" || ms[1].Content != "look \n\n[image image/webp]\n\n here" {
		t.Errorf("image %q %+v", ms[1].Content, p)
	}
	calls := importtest.Parts(t, ms[6])
	if len(calls) != 2 || calls[0].ToolCallID != "call_1" || string(calls[0].Input) != `{"x":1}` || calls[1].ToolCallID != "call_2" || calls[1].ToolName != "b" {
		t.Errorf("parallel calls %+v", calls)
	}
	for i, want := range []struct{ id, name, text string }{{"call_1", "a", "ra"}, {"call_2", "b", `{"out":2}`}, {"", "", "orphan"}} {
		m := ms[7+i]
		p := importtest.Parts(t, m)
		if len(p) != 1 || p[0].ToolCallID != want.id || m.Name != want.name || p[0].Text != want.text {
			t.Errorf("result %d: %q %+v", i, m.Name, p)
		}
	}
	if ms[10].Content != "not json" || ms[10].Parts != nil {
		t.Errorf("bad function_call kept as text: %+v", ms[10])
	}
	if ms[11].Content != "role/content turn" {
		t.Errorf("role/content turn %+v", ms[11])
	}
}

func TestReadShareGPTBroken(t *testing.T) {
	const good = `{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}`
	cases := []importtest.BadInput{
		{Name: "empty", Data: "", ErrHas: "empty file"},
		{Name: "garbage", Data: "<html>", ErrHas: `not a ShareGPT file: it is not JSON (it starts with "<html>")`},
		{Name: "openai", Data: `[{"role": "user", "content": "hi"}]`, ErrHas: "--format openai"},
		{Name: "openai records", Data: `{"messages": [{"role": "user", "content": "hi"}]}`, ErrHas: "--format openai"},
		{Name: "chatgpt", Data: string(importtest.File(t, "../testdata/chatgpt-export/chatgpt2graph_conversations.json")), ErrHas: "ChatGPT export"},
		{Name: "no records", Data: `[{"a": 1}]`, ErrHas: `no record with "conversations" was found`, Problems: []string{"record 1: an object with keys a: a record without"}},
		{Name: "unknown from", Data: `[{"conversations": [{"from": "human", "value": "hi"}, {"from": "alien", "value": "zz"}, {"from": "gpt", "value": "yo"}]}]`,
			Problems: []string{`record 1: turn 2: from "alien" is not one of`}, Messages: 2},
		{Name: "invalid JSONL line", Data: good + "\n{oops\n" + good + "\n", Problems: []string{"not valid JSON"}, Lines: []int{2}, Messages: 4},
		{Name: "record without conversations", Data: good + "\n" + `{"id": "x"}` + "\n" + good + "\n", Problems: []string{`a record without "conversations"`}, Lines: []int{2}, Messages: 4},
		{Name: "empty conversations", Data: `[{"conversations": []}, ` + good + `]`, Problems: []string{`record 1: its "conversations" list is empty`}, Messages: 2},
		{Name: "conversations not a list", Data: `[{"conversations": "hi"}, ` + good + `]`, Problems: []string{`its "conversations" is a string, not a list`}, Messages: 2},
		{Name: "only bad turns", Data: `[{"conversations": [{"from": "x", "value": "y"}]}]`, ErrHas: "no conversation could be imported", Problems: []string{`from "x"`, "no message to import"}},
		{Name: "empty value", Data: `[{"conversations": [{"from": "human", "value": ""}, {"from": "gpt", "value": "yo"}]}]`, Problems: []string{"turn 1: it is empty"}, Messages: 1},
		{Name: "no from", Data: `[{"conversations": [{"value": "x"}, {"from": "gpt", "value": "yo"}]}]`, Problems: []string{`turn 1: it has no "from"`}, Messages: 1},
		{Name: "system not a string", Data: `[{"system": 5, "conversations": [{"from": "gpt", "value": "yo"}]}]`, Problems: []string{`its "system" is a number, not a string`}, Messages: 1},
		{Name: "duplicate id", Data: `[{"id": "a", "conversations": [{"from": "gpt", "value": "1"}]}, {"id": "a", "conversations": [{"from": "gpt", "value": "2"}]}]`,
			Problems: []string{`record 2: id "a" was used by an earlier record: this one is keyed "a@2"`}, Messages: 2},
		{Name: "cut off", Data: "[" + good + `, {"conversations": [`, Problems: []string{"record 2: the file ends inside it"}, Messages: 2},
	}
	importtest.CheckBadInput(t, Read, cases)
}

func TestReadShareGPTKeysStable(t *testing.T) {
	data := string(importtest.File(t, sgGlaiveFile))
	a, _ := importtest.RunOK(t, Read, data)
	b, _ := importtest.RunOK(t, Read, data)
	if a.Keys() != b.Keys() {
		t.Fatal("two reads of the glaive demo differ")
	}
	// A longer version of the first record (one more turn) keeps its keys.
	turn := `{"from": "human", "value": "one"}, {"from": "gpt", "value": "two"}`
	short, _ := importtest.RunOK(t, Read, `[{"conversations": [`+turn+`]}]`)
	long, _ := importtest.RunOK(t, Read, `[{"conversations": [`+turn+`, {"from": "human", "value": "three"}]}, {"conversations": [`+turn+`]}]`)
	s, l := short.Threads[0], long.Threads[0]
	if s.Info.Key != l.Info.Key || s.Messages[0].Key != l.Messages[0].Key || s.Messages[1].Key != l.Messages[1].Key || len(l.Messages) != 3 {
		t.Errorf("longer record:\n%s%s", short.Keys(), long.Keys())
	}
	if long.Threads[1].Info.Key == l.Info.Key {
		t.Errorf("two records with the same turns share key %q", l.Info.Key)
	}
}

func FuzzReadShareGPT(f *testing.F) {
	for _, s := range importtest.RecordSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"conversations":[{"from":"function_call","value":"[{\"name\":\"a\"},{\"name\":\"b\",\"arguments\":\"x\"}]"},{"from":"tool","value":null},{"from":"gpt","value":"<image><video>"}],"images":["a.png"],"videos":"v.mp4","id":7}`))
	for _, p := range []string{sgDummyFile, sgGlaiveFile} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:4<<10])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		importtest.FuzzCheck(t, Read, data)
	})
}

func TestReadShareGPTEmitterError(t *testing.T) {
	f := &importtest.Failing{N: 1}
	_, err := Read(strings.NewReader(`[{"conversations": [{"from": "human", "value": "x"}]}]`), f)
	if !errors.Is(err, importtest.ErrStop) {
		t.Errorf("error %v", err)
	}
}
