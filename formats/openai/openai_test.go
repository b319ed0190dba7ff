package openai

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/formats/internal/records"
	"weft/model"
)

const mllmFile = "../testdata/openai-messages/llamafactory_mllm_demo.json"

func file(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestReadOpenAIMLLMDemo(t *testing.T) {
	rec, problems := importtest.RunOK(t, Read, file(t, mllmFile))
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	if th, n := rec.Count(); th != 6 || n != 24 {
		t.Fatalf("got %d threads, %d messages; want 6, 24", th, n)
	}
	wantImages := []int{2, 1, 1, 2, 1, 1}
	keys := map[string]bool{}
	for i, th := range rec.Threads {
		if got := th.Roles(); got != "user assistant user assistant" {
			t.Errorf("thread %d roles %q", i+1, got)
		}
		if th.Info.Source != formats.OpenAI || !th.Info.CreatedAt.IsZero() {
			t.Errorf("thread %d info %+v", i+1, th.Info)
		}
		if keys[th.Info.Key] || len(th.Info.Key) != 16 {
			t.Errorf("thread %d key %q (repeated or not 16 hex)", i+1, th.Info.Key)
		}
		keys[th.Info.Key] = true
		images := 0
		for _, m := range th.Messages {
			if !m.CreatedAt.IsZero() {
				t.Errorf("%s has a time", m.Key)
			}
			for _, p := range importtest.Parts(t, m) {
				if p.Type == model.PartImage {
					images++
					if p.MediaType != "image/jpeg" || !strings.HasPrefix(string(p.Raw), `"mllm_demo_data/`) {
						t.Errorf("thread %d image part %+v", i+1, p)
					}
				}
			}
			if strings.Contains(m.Content, "<image>") {
				t.Errorf("thread %d %s keeps a placeholder: %q", i+1, m.Key, m.Content)
			}
		}
		if images != wantImages[i] {
			t.Errorf("thread %d has %d images, want %d", i+1, images, wantImages[i])
		}
	}
	first := rec.Threads[0]
	if first.Info.Title != "Who are they?" {
		t.Errorf("title %q", first.Info.Title)
	}
	m := first.Messages[0]
	if m.Content != "[image image/jpeg]\n\nWho are they?" {
		t.Errorf("first content %q", m.Content)
	}
	parts := importtest.Parts(t, m)
	if len(parts) != 2 || parts[0].Type != model.PartImage || parts[1].Type != model.PartText || parts[1].Text != "Who are they?" {
		t.Errorf("first parts %+v", parts)
	}
	if want := "0000000001:" + model.ContentDigest(model.RoleUser, m.Content)[:12]; m.Key != want {
		t.Errorf("key %q, want %q", m.Key, want)
	}
	if want := records.ThreadKey(model.ContentDigest(model.RoleUser, m.Content), 1); first.Info.Key != want {
		t.Errorf("thread key %q, want %q", first.Info.Key, want)
	}
	third := first.Messages[2]
	if third.Content != "What are they doing?\n\n[image image/jpeg]" {
		t.Errorf("third content %q", third.Content)
	}
	if a := first.Messages[1]; a.Content != "They're Kane and Gretzka from Bayern Munich." || a.Parts != nil {
		t.Errorf("plain answer %+v", a)
	}
	if rec.Threads[3].Info.Title != "他们是谁？" {
		t.Errorf("thread 4 title %q", rec.Threads[3].Info.Title)
	}
}

// The five accepted shapes, each from the same two-message thread.
func TestReadOpenAIShapes(t *testing.T) {
	const u = `{"role": "user", "content": "Hello there"}`
	const a = `{"role": "assistant", "content": "Hi! How can I help?"}`
	cases := []struct {
		name, data string
		threads    int
	}{
		{"a array of messages", "[" + u + ",\n" + a + "]", 1},
		{"a with BOM and space", "\ufeff \n [" + u + "," + a + "]", 1},
		{"b object", `{"model": "gpt-4o", "messages": [` + u + "," + a + `]}`, 1},
		{"b pretty", "{\n  \"messages\": [\n    " + u + ",\n    " + a + "\n  ],\n  \"model\": \"gpt-4o\"\n}\n", 1},
		{"c array of records", `[{"messages": [` + u + "," + a + `]}, {"messages": [` + u + "," + a + `]}]`, 2},
		{"d JSONL of records", `{"messages": [` + u + "," + a + "]}\n\n" + `{"messages": [` + u + "," + a + "]}\n", 2},
		{"e JSONL of messages", u + "\n" + a + "\n", 1},
		{"e CRLF", u + "\r\n" + a + "\r\n", 1},
	}
	var want string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, problems := importtest.RunOK(t, Read, c.data)
			if len(problems) > 0 {
				t.Errorf("problems: %v", problems)
			}
			if len(rec.Threads) != c.threads {
				t.Fatalf("%d threads, want %d", len(rec.Threads), c.threads)
			}
			th := rec.Threads[0]
			if th.Roles() != "user assistant" || th.Messages[0].Content != "Hello there" || th.Messages[1].Content != "Hi! How can I help?" {
				t.Fatalf("thread %+v", th.Messages)
			}
			if th.Info.Title != "Hello there" || th.Info.Source != formats.OpenAI {
				t.Errorf("info %+v", th.Info)
			}
			// The first thread of every shape has the same keys.
			keys := th.Info.Key + " " + th.Messages[0].Key + " " + th.Messages[1].Key
			if want == "" {
				want = keys
			} else if keys != want {
				t.Errorf("keys %q, want %q as for the other shapes", keys, want)
			}
			if c.threads == 2 && rec.Threads[1].Info.Key == th.Info.Key {
				t.Errorf("two records, one key %q", th.Info.Key)
			}
			if strings.Contains(c.name, "b ") && th.Messages[0].Meta["model"] != "gpt-4o" {
				t.Errorf("record meta not kept: %v", th.Messages[0].Meta)
			}
		})
	}
}

// Every kind of message the Chat Completions API has.
func TestReadOpenAIMessageShapes(t *testing.T) {
	data := `[
{"role": "developer", "content": "Be brief."},
{"role": "system", "content": [{"type": "text", "text": "Use tools."}]},
{"role": "user", "name": "ann", "content": [{"type": "text", "text": "What is <b>this</b>?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K", "detail": "low"}}, {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}}]},
{"role": "assistant", "content": null, "tool_calls": [
  {"id": "call_A", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}},
  {"id": "call_B", "type": "function", "function": {"name": "shell", "arguments": "ls -l"}},
  {"type": "function", "function": {"name": "noop", "arguments": ""}}]},
{"role": "tool", "tool_call_id": "call_B", "content": "file.txt"},
{"role": "tool", "tool_call_id": "call_A", "content": [{"type": "text", "text": "found"}, {"type": "image_url", "image_url": "https://x.test/a.gif"}]},
{"role": "tool", "content": "done"},
{"role": "assistant", "content": "Here.", "reasoning_content": "Think first."},
{"role": "assistant", "content": null, "refusal": "I can't do that."},
{"role": "assistant", "content": null, "function_call": {"name": "legacy", "arguments": "{\"a\": 1}"}},
{"role": "function", "name": "legacy", "content": "42"}
]`
	rec, problems := importtest.RunOK(t, Read, data)
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	if len(rec.Threads) != 1 {
		t.Fatalf("%d threads", len(rec.Threads))
	}
	th := rec.Threads[0]
	if got := th.Roles(); got != "system system user assistant tool tool tool assistant assistant assistant tool" {
		t.Fatalf("roles %q", got)
	}
	ms := th.Messages
	if ms[0].Content != "Be brief." || ms[0].Meta["source_role"] != "developer" || ms[0].Parts != nil {
		t.Errorf("developer: %+v", ms[0])
	}
	if ms[1].Content != "Use tools." {
		t.Errorf("system parts: %q", ms[1].Content)
	}
	user := importtest.Parts(t, ms[2])
	if ms[2].Name != "ann" || len(user) != 3 || user[0].Type != model.PartText || user[1].Type != model.PartImage ||
		user[1].MediaType != "image/png" || user[2].Type != model.PartOther || user[2].MediaType != "audio/wav" {
		t.Errorf("user: %q %+v", ms[2].Name, user)
	}
	if !strings.Contains(string(user[0].Raw), `<b>this</b>`) || !strings.Contains(string(user[1].Raw), `"detail":"low"`) {
		t.Errorf("raw blocks not kept: %s | %s", user[0].Raw, user[1].Raw)
	}
	if ms[2].Content != "What is <b>this</b>?\n\n[image image/png]" {
		t.Errorf("user content %q", ms[2].Content)
	}
	calls := importtest.Parts(t, ms[3])
	if len(calls) != 3 {
		t.Fatalf("calls %+v", calls)
	}
	if c := calls[0]; c.ToolCallID != "call_A" || c.ToolName != "lookup" || string(c.Input) != `{"q":"x"}` {
		t.Errorf("call A %+v", c)
	}
	if c := calls[1]; c.ToolCallID != "call_B" || string(c.Input) != `"ls -l"` {
		t.Errorf("call B (arguments that are not JSON) %+v", c)
	}
	if c := calls[2]; c.ToolCallID != "call_1" || c.ToolName != "noop" || string(c.Input) != `{}` {
		t.Errorf("call without id %+v", c)
	}
	if !strings.HasPrefix(ms[3].Content, `[tool call lookup] {"q":"x"}`) {
		t.Errorf("call content %q", ms[3].Content)
	}
	resB := importtest.Parts(t, ms[4])
	if len(resB) != 1 || resB[0].Type != model.PartToolResult || resB[0].ToolCallID != "call_B" || resB[0].Text != "file.txt" || ms[4].Name != "shell" {
		t.Errorf("result B %q %+v", ms[4].Name, resB)
	}
	if !strings.HasPrefix(string(resB[0].Raw), `{"role":"tool","tool_call_id":"call_B"`) {
		t.Errorf("result raw is not the message: %s", resB[0].Raw)
	}
	if ms[4].Content != "[tool result] file.txt" {
		t.Errorf("result content %q", ms[4].Content)
	}
	resA := importtest.Parts(t, ms[5])
	if len(resA) != 2 || resA[0].ToolCallID != "call_A" || resA[0].Text != "found" || resA[1].Type != model.PartImage || resA[1].MediaType != "image/gif" {
		t.Errorf("result A %+v", resA)
	}
	// A result without tool_call_id answers the oldest call still waiting.
	if res := importtest.Parts(t, ms[6]); res[0].ToolCallID != "call_1" || ms[6].Name != "noop" {
		t.Errorf("result without id %q %+v", ms[6].Name, res)
	}
	if p := importtest.Parts(t, ms[7]); len(p) != 2 || p[0].Type != model.PartThinking || p[0].Text != "Think first." || ms[7].Content != "Here." {
		t.Errorf("reasoning %q %+v", ms[7].Content, p)
	}
	if ms[8].Content != "I can't do that." || ms[8].Meta["refusal"] != "true" {
		t.Errorf("refusal %+v", ms[8])
	}
	if p := importtest.Parts(t, ms[9]); len(p) != 1 || p[0].Type != model.PartToolCall || p[0].ToolCallID != "" || p[0].ToolName != "legacy" || string(p[0].Input) != `{"a":1}` {
		t.Errorf("function_call %+v", p)
	}
	if p := importtest.Parts(t, ms[10]); len(p) != 1 || p[0].Type != model.PartToolResult || p[0].ToolCallID != "" || p[0].Text != "42" || ms[10].Name != "legacy" {
		t.Errorf("function result %q %+v", ms[10].Name, p)
	}
	for i, m := range ms {
		if want := fmt.Sprintf("%010d:%s", i+1, model.ContentDigest(m.Role, m.Content)[:12]); m.Key != want {
			t.Errorf("message %d key %q, want %q", i+1, m.Key, want)
		}
	}
}

func TestReadOpenAIBroken(t *testing.T) {
	const u = `{"role": "user", "content": "hi"}`
	const a = `{"role": "assistant", "content": "hello"}`
	cases := []importtest.BadInput{
		{Name: "empty", Data: "", ErrHas: "empty file"},
		{Name: "blank", Data: " \n\t\n", ErrHas: "empty file"},
		{Name: "garbage", Data: "hello world", ErrHas: `not an OpenAI messages file: it is not JSON (it starts with "hello world")`},
		{Name: "binary", Data: "\x00\x01\x02", ErrHas: "not JSON"},
		{Name: "empty array", Data: "[]", ErrHas: "no message or record with messages was found"},
		{Name: "array of numbers", Data: "[1, 2]", ErrHas: "no message or record", Problems: []string{"record 1: a number, not a message", "record 2: a number"}},
		{Name: "chatgpt export", Data: file(t, "../testdata/chatgpt-export/chatlore_conversations_edge_cases.json"), ErrHas: "ChatGPT export"},
		{Name: "sharegpt", Data: `[{"conversations": [{"from": "human", "value": "hi"}]}]`, ErrHas: "--format sharegpt"},
		{Name: "invalid JSONL line", Data: u + "\n{broken\n" + a + "\n", Problems: []string{"not valid JSON"}, Lines: []int{2}, Messages: 2},
		{Name: "first JSONL line broken", Data: "{broken\n" + u + "\n" + a + "\n", Problems: []string{"not valid JSON"}, Lines: []int{1}, Messages: 2},
		{Name: "unknown role", Data: "[" + u + `, {"role": "robot", "content": "beep"}, ` + a + "]", Problems: []string{`record 2: role "robot" is not one of`}, Lines: []int{0}, Messages: 2},
		{Name: "unknown role in record", Data: `{"messages": [` + u + `, {"role": "robot", "content": "beep"}]}` + "\n", Problems: []string{`message 2: role "robot"`}, Lines: []int{1}, Messages: 1},
		{Name: "no role", Data: u + "\n" + `{"content": "x"}` + "\n", Problems: []string{`it has no "role"`}, Lines: []int{2}, Messages: 1},
		{Name: "empty message", Data: u + "\n" + `{"role": "assistant", "content": ""}` + "\n", Problems: []string{"it is empty"}, Lines: []int{2}, Messages: 1},
		{Name: "content object", Data: u + "\n" + `{"role": "assistant", "content": {"x": 1}}` + "\n", Problems: []string{"its content is an object with keys x, not a string"}, Messages: 1},
		{Name: "role a number", Data: u + "\n" + `{"role": 5, "content": "x"}` + "\n", Problems: []string{`"role" is a number, not a string`}, Messages: 1},
		{Name: "record without messages", Data: `[{"messages": [` + u + `]}, {"model": "x"}, {"messages": []}, {"messages": "hi"}, {"messages": [` + a + `]}]`,
			Problems: []string{`record 2: a record without "messages"`, `record 3: its "messages" list is empty`, `record 4: its "messages" is a string, not a list`}, Messages: 2},
		{Name: "record with nothing importable", Data: `[{"messages": [` + u + `]}, {"messages": [{"role": "x"}]}]`,
			Problems: []string{`record 2: message 1: role "x"`, "record 2: no message to import"}, Messages: 1},
		{Name: "only broken records", Data: `[{"messages": [{"role": "x"}]}]`, ErrHas: "no message could be imported", Problems: []string{"role", "no message to import"}},
		{Name: "message in records file", Data: `{"messages": [` + u + "]}\n" + a + "\n", Problems: []string{"a single message in a file of records"}, Lines: []int{2}, Messages: 1},
		{Name: "record in messages file", Data: u + "\n" + `{"messages": [` + a + "]}\n", Problems: []string{"a record with \"messages\" in a file of single messages"}, Lines: []int{2}, Messages: 1},
		{Name: "cut off array", Data: "[" + u + ", " + a + `, {"role": "user", "con`, Problems: []string{"record 3: the file ends inside it"}, Messages: 2},
		{Name: "syntax error in array", Data: "[" + u + ", {x}, " + a + "]", Problems: []string{"record 2: not valid JSON (byte 36 of the file): invalid character 'x'"}, Messages: 1},
		{Name: "trailing data", Data: "[" + u + "] xyz", Problems: []string{"data after the end"}, Messages: 1},
		{Name: "tool_calls not a list", Data: u + "\n" + `{"role": "assistant", "content": "x", "tool_calls": 5}` + "\n", Problems: []string{"tool_calls: it is a number, not a list"}, Messages: 1},
		{Name: "too many images", Data: `{"messages": [{"role": "user", "content": "<image>hi"}], "images": ["a.png", "b.png"]}`, Problems: []string{"1 of its 2 images had no placeholder"}, Messages: 1},
		{Name: "placeholder without images", Data: `{"messages": [{"role": "user", "content": "<image>hi"}]}`, Messages: 1},
	}
	importtest.CheckBadInput(t, Read, cases)
}

// A message that cannot be read keeps its place: the messages after it
// keep their keys when it is mended.
func TestReadOpenAIKeysStable(t *testing.T) {
	lines := []string{
		`{"role": "system", "content": "You are terse."}`,
		`{"role": "user", "content": "one"}`,
		`{"role": "assistant", "content": "two"}`,
		`{"role": "user", "content": "three"}`,
	}
	short := strings.Join(lines[:3], "\n") + "\n"
	long := strings.Join(lines, "\n") + "\n"
	r1, _ := importtest.RunOK(t, Read, short)
	r2, _ := importtest.RunOK(t, Read, short)
	if r1.Keys() != r2.Keys() {
		t.Fatalf("two reads differ:\n%s\n%s", r1.Keys(), r2.Keys())
	}
	r3, _ := importtest.RunOK(t, Read, long)
	a, b := r1.Threads[0], r3.Threads[0]
	if a.Info.Key != b.Info.Key || len(b.Messages) != 4 {
		t.Fatalf("longer file: thread %q -> %q, %d messages", a.Info.Key, b.Info.Key, len(b.Messages))
	}
	for i, m := range a.Messages {
		if b.Messages[i].Key != m.Key {
			t.Errorf("message %d: key %q became %q", i, m.Key, b.Messages[i].Key)
		}
	}
	// The same thread as an array, and as a record, has the same keys.
	arr, _ := importtest.RunOK(t, Read, "["+strings.Join(lines, ",")+"]")
	recd, _ := importtest.RunOK(t, Read, `{"messages": [`+strings.Join(lines, ",")+"]}")
	if arr.Keys() != r3.Keys() || recd.Keys() != r3.Keys() {
		t.Errorf("shapes differ:\n%s%s%s", r3.Keys(), arr.Keys(), recd.Keys())
	}
	// A broken line keeps its ordinal.
	broken := strings.Join([]string{lines[0], lines[1], `{"role": "assistant", "content": `, lines[3]}, "\n")
	r4, problems := importtest.RunOK(t, Read, broken)
	if len(problems) != 1 || len(r4.Threads[0].Messages) != 3 || r4.Threads[0].Messages[2].Key != b.Messages[3].Key {
		t.Errorf("broken line: %v %s", problems, r4.Keys())
	}
	// Records: a longer record keeps its thread key and old message keys,
	// and records keep their keys when another is added after them.
	recs := `{"messages": [` + lines[1] + "," + lines[2] + "]}\n" + `{"messages": [` + lines[1] + "]}\n"
	longer := `{"messages": [` + lines[1] + "," + lines[2] + "," + lines[3] + "]}\n" + `{"messages": [` + lines[1] + "]}\n" + `{"messages": [` + lines[0] + "]}\n"
	x, _ := importtest.RunOK(t, Read, recs)
	y, _ := importtest.RunOK(t, Read, longer)
	if len(x.Threads) != 2 || len(y.Threads) != 3 {
		t.Fatalf("threads %d, %d", len(x.Threads), len(y.Threads))
	}
	for i := range x.Threads {
		if x.Threads[i].Info.Key != y.Threads[i].Info.Key || x.Threads[i].Messages[0].Key != y.Threads[i].Messages[0].Key {
			t.Errorf("record %d keys changed:\n%s%s", i+1, x.Keys(), y.Keys())
		}
	}
	if x.Threads[0].Info.Key == x.Threads[1].Info.Key {
		t.Errorf("two records with the same first message share a key")
	}
}

func TestReadOpenAIEmitterError(t *testing.T) {
	boom := errors.New("disk full")
	data := `{"role": "user", "content": "a"}` + "\n" + `{"role": "assistant", "content": "b"}` + "\n"
	for _, at := range []string{"begin", "message", "end"} {
		em := &failing{at: at, err: boom}
		_, err := Read(strings.NewReader(data), em)
		if !errors.Is(err, boom) {
			t.Errorf("failing at %s: error %v", at, err)
		}
	}
	// A reader that fails is an error too, whatever the shape.
	for _, start := range []string{`{"role": "user", "content": "a"}` + "\n", `[{"role": "user", "content": "a"},`, "{\n"} {
		r := io.MultiReader(strings.NewReader(start), iotest.ErrReader(boom))
		if _, err := Read(r, importtest.NewRecorder(t)); !errors.Is(err, boom) {
			t.Errorf("reader failing after %q: error %v", start, err)
		}
	}
}

type failing struct {
	at  string
	err error
}

func (f *failing) fail(at string) error {
	if at == f.at {
		return f.err
	}
	return nil
}
func (f *failing) Begin(formats.ThreadInfo) error { return f.fail("begin") }
func (f *failing) Message(formats.Message) error  { return f.fail("message") }
func (f *failing) Digest(_, _, _ string) error    { return nil }
func (f *failing) Op(model.Op) error              { return nil }
func (f *failing) End() error                     { return f.fail("end") }

// counter counts messages and nothing else.
type counter struct {
	threads, messages atomic.Int64
	bytes             int64
}

func (c *counter) Begin(formats.ThreadInfo) error { c.threads.Add(1); return nil }
func (c *counter) Message(m formats.Message) error {
	c.messages.Add(1)
	c.bytes += int64(len(m.Content))
	return nil
}
func (c *counter) Digest(_, _, _ string) error { return nil }
func (c *counter) Op(model.Op) error           { return nil }
func (c *counter) End() error                  { return nil }

// writeLines writes n single-message lines (contents of about size
// bytes) to w.
func writeLines(w io.Writer, n, size int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", size/27+1)[:size]
	roles := [2]string{"user", "assistant"}
	for i := range n {
		if _, err := fmt.Fprintf(bw, `{"role":%q,"content":"message %d: %s"}`+"\n", roles[i%2], i, filler); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// A file of single messages streams: the emitter sees messages while the
// file is still being written, and memory does not grow with the file.
// JSON lines (e) and a JSON array (a) alike.
func TestReadOpenAIStreams(t *testing.T) {
	const n = 200_000
	for _, shape := range []string{"jsonl", "array"} {
		t.Run(shape, func(t *testing.T) {
			pr, pw := io.Pipe()
			var written atomic.Int64
			var seenEarly atomic.Bool
			em := &watch{counter: &counter{}, onMessage: func(k int64) {
				if k == 1000 && written.Load() < n/2 {
					seenEarly.Store(true)
				}
			}}
			go func() {
				bw := bufio.NewWriterSize(pw, 4096)
				sep := "\n"
				if shape == "array" {
					bw.WriteString("[\n")
				}
				for i := range n {
					if shape == "array" && i > 0 {
						bw.WriteString(",\n")
						sep = ""
					}
					fmt.Fprintf(bw, `{"role":"user","content":"message %d %s"}`+sep, i, strings.Repeat("x", 150))
					written.Add(1)
				}
				if shape == "array" {
					bw.WriteString("\n]\n")
				}
				bw.Flush()
				pw.Close()
			}()
			problems, err := Read(pr, em)
			if err != nil || len(problems) > 0 {
				t.Fatalf("%v %v", err, problems)
			}
			if got := em.messages.Load(); got != n || em.threads.Load() != 1 {
				t.Fatalf("%d messages in %d threads", got, em.threads.Load())
			}
			if !seenEarly.Load() {
				t.Errorf("the emitter saw its 1000th message only after half the file was written")
			}
			if em.maxHeapGrowth > 16<<20 {
				t.Errorf("heap grew by %d MB while reading %d MB of messages", em.maxHeapGrowth>>20, em.bytes>>20)
			}
			t.Logf("heap growth at most %d KB over %d MB of content", em.maxHeapGrowth>>10, em.bytes>>20)
		})
	}
}

// watch samples the live heap as messages arrive.
type watch struct {
	*counter
	onMessage     func(k int64)
	base          uint64
	maxHeapGrowth uint64
}

func (w *watch) Message(m formats.Message) error {
	if err := w.counter.Message(m); err != nil {
		return err
	}
	k := w.messages.Load()
	w.onMessage(k)
	if k == 1 || k%50_000 == 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if k == 1 {
			w.base = ms.HeapAlloc
		} else if ms.HeapAlloc > w.base && ms.HeapAlloc-w.base > w.maxHeapGrowth {
			w.maxHeapGrowth = ms.HeapAlloc - w.base
		}
	}
	return nil
}

func FuzzReadOpenAI(f *testing.F) {
	for _, s := range importtest.RecordSeeds {
		f.Add([]byte(s))
	}
	for _, p := range []string{mllmFile, "../testdata/sharegpt/llamafactory_glaive_toolcall_en_demo.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 8<<10 {
			data = data[:8<<10] // the fuzzer mutates better on small inputs
		}
		f.Add(data)
	}
	f.Add([]byte(`{"role":"user","content":"a\u00e9\ud83d\ude00\n\"q\"","name":"x"}`))
	f.Add([]byte(`{"role":"developer","content":"\ud800 lone"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		importtest.FuzzCheck(t, Read, data)
		fastCheck(t, data)
	})
}

// fastCheck checks that the fast way reads a line as encoding/json
// and the general way do.
func fastCheck(t *testing.T, data []byte) {
	fast, ok := fastMessage(data)
	if !ok {
		return
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("the fast way read %q, encoding/json refuses it: %v", data, err)
	}
	general, msg := convert(&m, data, &records.Calls{}, nil)
	if msg != "" && strings.TrimSpace(fast.Content) != "" {
		t.Fatalf("the fast way read %q, the general way refuses it: %s", data, msg)
	}
	if msg == "" && (general.Role != fast.Role || general.Content != fast.Content || general.Name != fast.Name ||
		general.Parts != nil || fmt.Sprint(general.Meta) != fmt.Sprint(fast.Meta)) {
		t.Fatalf("%q: the fast way read %+v, the general way %+v", data, fast, general)
	}
}

func TestFastMessage(t *testing.T) {
	for _, line := range []string{
		`{"role":"user","content":"plain"}`,
		` { "content" : "a\tb\n\u00e9\u20ac\ud83d\ude00\/\\\"" , "role" : "assistant", "name": "bo" } `,
		`{"role":"developer","content":"x"}`,
		`{"role":"system","content":"  "}`,
		// decoded as encoding/json decodes them: U+FFFD
		`{"role":"user","content":"\ud800"}`,
		"{\"role\":\"user\",\"content\":\"\xff\"}",
	} {
		if _, ok := fastMessage([]byte(line)); !ok {
			t.Errorf("%s: not read the fast way", line)
		}
		fastCheck(t, []byte(line))
	}
	for _, line := range []string{
		`{"role":"tool","content":"x"}`,
		`{"role":"user","content":null}`,
		`{"Role":"user","content":"x"}`,
		`{"role":"user","content":"x","tool_calls":[]}`,
		`{"role":"user","content":"x"} x`,
		`{"role":"user","content":"x",}`,
		`{"role":"user","content":"\x"}`,
		"{\"role\":\"user\",\"content\":\"a\tb\"}",
		`{"role":"user"}`,
		`{}`,
	} {
		if _, ok := fastMessage([]byte(line)); ok {
			t.Errorf("%s: read the fast way", line)
		}
	}
}

// BenchmarkReadOpenAIJSONL reads a file of 1M single messages (~200
// bytes of content each).
func BenchmarkReadOpenAIJSONL(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "messages.jsonl")
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := writeLines(fh, n, 200); err != nil {
		b.Fatal(err)
	}
	fh.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var total time.Duration
	runs := 0
	for b.Loop() {
		fh, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		em := &counter{}
		start := time.Now()
		_, err = Read(fh, em)
		total += time.Since(start)
		fh.Close()
		if err != nil || em.messages.Load() != n {
			b.Fatalf("%v, %d messages", err, em.messages.Load())
		}
		runs++
	}
	b.ReportMetric(float64(n*runs)/total.Seconds(), "msgs/s")
}
