// Package importtest is what the importers' tests share: an Emitter
// that keeps what it is given and checks that the calls come in a valid
// order, and the checks that hold of every imported thread.
package importtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/formats"
	"weft/model"
)

// Testdata is the folder of the importers' test files, from a format's
// package.
const Testdata = "../testdata/"

// Recorder is an Emitter that keeps everything it is given, and fails
// the test when the calls come in an invalid order.
type Recorder struct {
	t       testing.TB
	Threads []*Thread
	// Open is set between Begin and End.
	Open bool
}

// Thread is what a Recorder was given of one thread.
type Thread struct {
	Info     formats.ThreadInfo
	Messages []formats.Message
	Digests  []Digest
	Ops      []model.Op
}

// Digest is an Emitter.Digest call.
type Digest struct{ From, To, Summary string }

// NewRecorder returns an empty Recorder reporting to t.
func NewRecorder(t testing.TB) *Recorder { return &Recorder{t: t} }

func (r *Recorder) cur() *Thread {
	if !r.Open {
		r.t.Fatalf("emitter called outside Begin/End")
	}
	return r.Threads[len(r.Threads)-1]
}

// Begin starts a thread.
func (r *Recorder) Begin(t formats.ThreadInfo) error {
	if r.Open {
		r.t.Fatalf("Begin inside an open thread")
	}
	r.Open = true
	r.Threads = append(r.Threads, &Thread{Info: t})
	return nil
}

// Message keeps a message, which must be valid and have a key of its
// own in its thread.
func (r *Recorder) Message(m formats.Message) error {
	th := r.cur()
	if m.Key == "" {
		r.t.Fatalf("message without an import key: %+v", m)
	}
	for _, old := range th.Messages {
		if old.Key == m.Key {
			r.t.Fatalf("import key %q used twice in one thread", m.Key)
		}
	}
	if err := m.Validate(); err != nil {
		r.t.Fatalf("invalid message %q: %v", m.Key, err)
	}
	th.Messages = append(th.Messages, m)
	return nil
}

// Digest keeps a digest, which must name a range of emitted messages.
func (r *Recorder) Digest(from, to, summary string) error {
	th := r.cur()
	fi, ti := th.IndexOf(from), th.IndexOf(to)
	if fi < 0 || ti < 0 || fi > ti {
		r.t.Fatalf("digest %s..%s does not name an emitted range", from, to)
	}
	th.Digests = append(th.Digests, Digest{from, to, summary})
	return nil
}

// Op keeps an operation.
func (r *Recorder) Op(op model.Op) error {
	th := r.cur()
	th.Ops = append(th.Ops, op)
	return nil
}

// End ends the open thread.
func (r *Recorder) End() error {
	r.cur()
	r.Open = false
	return nil
}

// Count is how many threads and messages the recorder holds.
func (r *Recorder) Count() (threads, messages int) {
	for _, th := range r.Threads {
		messages += len(th.Messages)
	}
	return len(r.Threads), messages
}

// Keys lists the thread and message keys, a thread a line.
func (r *Recorder) Keys() string {
	var b strings.Builder
	for _, th := range r.Threads {
		b.WriteString(th.Info.Key + ":")
		for _, m := range th.Messages {
			b.WriteString(" " + m.Key)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// IndexOf is the place of the message with the key, or -1.
func (th *Thread) IndexOf(key string) int {
	for i, m := range th.Messages {
		if m.Key == key {
			return i
		}
	}
	return -1
}

// ByKey is the message with the key; the test fails without one.
func (th *Thread) ByKey(t testing.TB, key string) formats.Message {
	t.Helper()
	i := th.IndexOf(key)
	if i < 0 {
		t.Fatalf("no message %q in %s", key, th.Keys())
	}
	return th.Messages[i]
}

// Roles summarises the thread's roles compactly: "system user assistant
// tool".
func (th *Thread) Roles() string {
	roles := make([]string, len(th.Messages))
	for i, m := range th.Messages {
		roles[i] = string(m.Role)
	}
	return strings.Join(roles, " ")
}

// Keys is the thread's message keys, space-separated.
func (th *Thread) Keys() string {
	keys := make([]string, len(th.Messages))
	for i, m := range th.Messages {
		keys[i] = m.Key
	}
	return strings.Join(keys, " ")
}

// Run reads data with read into a new Recorder; a thread left open fails
// the test.
func Run(t testing.TB, read formats.Reader, data string) (*Recorder, []formats.Problem, error) {
	t.Helper()
	rec := NewRecorder(t)
	problems, err := read(strings.NewReader(data), rec)
	if rec.Open {
		t.Fatalf("a thread was left open")
	}
	return rec, problems, err
}

// RunOK is Run where an error fails the test.
func RunOK(t testing.TB, read formats.Reader, data string) (*Recorder, []formats.Problem) {
	t.Helper()
	rec, problems, err := Run(t, read, data)
	if err != nil {
		t.Fatalf("read: %v (problems %v)", err, problems)
	}
	return rec, problems
}

// File reads a test file; path is from the test's package.
func File(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Parts decodes a message's parts; parts that do not decode fail the
// test.
func Parts(t testing.TB, m formats.Message) []model.Part {
	t.Helper()
	if len(m.Parts) == 0 {
		return nil
	}
	var parts []model.Part
	if err := json.Unmarshal(m.Parts, &parts); err != nil {
		t.Fatalf("%s: parts: %v", m.Key, err)
	}
	return parts
}

// CheckThread checks what holds of every imported thread: content is
// the parts rendered, times are UTC, every part keeps its source block,
// and every linked result answers an earlier call that no result
// answered before it: the most recent such call with its ID, whose tool
// names the result (a file may use a call ID more than once, and a call
// left without a result is taken to be abandoned).
func CheckThread(t *testing.T, th *Thread) {
	t.Helper()
	if len(th.Messages) == 0 {
		t.Errorf("thread %q has no messages", th.Info.Key)
	}
	open := map[string][]string{} // call ID -> tools of the calls not answered yet, oldest first
	for _, m := range th.Messages {
		parts := Parts(t, m)
		if len(parts) > 0 && m.Content != formats.RenderContent(parts) {
			t.Errorf("%s: content %q is not its parts rendered", m.Key, m.Content)
		}
		if !m.CreatedAt.IsZero() && m.CreatedAt.Location() != time.UTC {
			t.Errorf("%s: time %v not in UTC", m.Key, m.CreatedAt)
		}
		for _, p := range parts {
			if len(p.Raw) == 0 {
				t.Errorf("%s: %s part without its source block", m.Key, p.Type)
			}
			switch p.Type {
			case model.PartToolCall:
				if p.ToolCallID != "" {
					open[p.ToolCallID] = append(open[p.ToolCallID], p.ToolName)
				}
				if m.Role != model.RoleAssistant || p.ToolName == "" || !json.Valid(p.Input) {
					t.Errorf("%s: bad tool call %+v in a %s message", m.Key, p, m.Role)
				}
			case model.PartToolResult:
				if m.Role != model.RoleTool {
					t.Errorf("%s: tool result in a %s message", m.Key, m.Role)
				}
				if p.ToolCallID == "" {
					continue
				}
				calls := open[p.ToolCallID]
				if len(calls) == 0 {
					t.Errorf("%s: result for %q answers no earlier call, or a call already answered", m.Key, p.ToolCallID)
					continue
				}
				tool := calls[len(calls)-1]
				open[p.ToolCallID] = calls[:len(calls)-1]
				if m.Name != "" && m.Name != tool {
					t.Errorf("%s: result for %q is named %q, but the call it answers is %q", m.Key, p.ToolCallID, m.Name, tool)
				}
			}
		}
	}
}

// FuzzCheck runs a reader on data and checks what must always hold: no
// panic, threads closed, valid messages with unique keys (the
// Recorder), an error exactly when nothing was imported, and the same
// result on a second read.
func FuzzCheck(t *testing.T, read formats.Reader, data []byte) {
	rec := NewRecorder(t)
	problems, err := read(bytes.NewReader(data), rec)
	if rec.Open {
		t.Fatalf("a thread was left open")
	}
	if err == nil && len(rec.Threads) == 0 {
		t.Fatalf("no error and no thread (problems %v)", problems)
	}
	if err != nil && len(rec.Threads) > 0 {
		t.Fatalf("error %v after %d threads", err, len(rec.Threads))
	}
	for _, th := range rec.Threads {
		if len(th.Messages) == 0 || th.Info.Key == "" {
			t.Fatalf("thread %+v with %d messages", th.Info, len(th.Messages))
		}
		for _, m := range th.Messages {
			if len(m.Parts) > 0 && model.DecodeParts(m.Parts) == nil {
				t.Fatalf("%s: parts do not decode: %s", m.Key, m.Parts)
			}
		}
	}
	again := NewRecorder(t)
	_, _ = read(bytes.NewReader(data), again)
	if rec.Keys() != again.Keys() {
		t.Fatalf("two reads differ")
	}
}

// ErrStop is the error a Failing emitter returns.
var ErrStop = errors.New("stop here")

// Failing is an Emitter that fails with ErrStop on its N-th message.
type Failing struct {
	N, Seen int
	// Ends counts the threads ended.
	Ends int
}

// Begin does nothing.
func (f *Failing) Begin(formats.ThreadInfo) error { return nil }

// Message counts the message, and fails on the N-th.
func (f *Failing) Message(formats.Message) error {
	f.Seen++
	if f.Seen == f.N {
		return ErrStop
	}
	return nil
}

// Digest does nothing.
func (f *Failing) Digest(string, string, string) error { return nil }

// Op does nothing.
func (f *Failing) Op(model.Op) error { return nil }

// End counts the thread ended.
func (f *Failing) End() error { f.Ends++; return nil }

// RecordSeeds are small inputs of every shape the readers of record
// files (openai, sharegpt) take, for their fuzzers.
var RecordSeeds = []string{
	`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]`,
	`{"messages":[{"role":"user","content":"<image>a"}],"images":["x.png"]}`,
	"{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"b\"}]}\n",
	"{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}\n{broken\n",
	"{\n \"messages\": [\n  {\"role\": \"developer\", \"content\": \"x\"}\n ]\n}",
	`[{"conversations":[{"from":"human","value":"hi"},{"from":"function_call","value":"{\"name\":\"f\",\"arguments\":{}}"},{"from":"observation","value":"r"}],"system":"s","id":"x"}]`,
	"",
	"[",
	"{",
}

// BadInput is a file an importer must refuse (ErrHas) or read in part,
// reporting Problems (substrings, in order, at Lines when given) and
// importing Messages.
type BadInput struct {
	Name, Data string
	ErrHas     string   // "" for no error
	Problems   []string // substrings, in order
	Lines      []int    // formats.Problem.Line of each, when given
	Messages   int
}

// CheckBadInput reads each case with read and checks what it reports.
func CheckBadInput(t *testing.T, read formats.Reader, cases []BadInput) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			rec, problems, err := Run(t, read, c.Data)
			if c.ErrHas == "" && err != nil {
				t.Fatalf("error %v (problems %v)", err, problems)
			}
			if c.ErrHas != "" && (err == nil || !strings.Contains(err.Error(), c.ErrHas)) {
				t.Fatalf("error %v, want one with %q", err, c.ErrHas)
			}
			if len(problems) != len(c.Problems) {
				t.Fatalf("problems %q, want %d like %q", problems, len(c.Problems), c.Problems)
			}
			for i, want := range c.Problems {
				if !strings.Contains(problems[i].Err, want) {
					t.Errorf("problem %d %q, want %q", i, problems[i], want)
				}
				if i < len(c.Lines) && problems[i].Line != c.Lines[i] {
					t.Errorf("problem %d at line %d, want %d", i, problems[i].Line, c.Lines[i])
				}
			}
			if _, n := rec.Count(); n != c.Messages {
				t.Errorf("%d messages imported, want %d", n, c.Messages)
			}
		})
	}
}

// KeepsNothingOf checks that what a reader made of raw is the caller's
// to keep after raw is written over (the proxy reads a request's body
// into a buffer that serves its next request): the messages' contents
// and parts, and each part's Raw and Input, are the same after raw is
// overwritten as before.
func KeepsNothingOf(t *testing.T, raw []json.RawMessage, msgs []model.NewMessage, parts [][]model.Part) {
	t.Helper()
	snapshot := func() []string {
		out := make([]string, len(msgs))
		for i := range msgs {
			out[i] = msgs[i].Content + "|" + string(msgs[i].Parts)
			for _, p := range slices.Concat(parts[i], msgs[i].ReadParts) {
				out[i] += "|" + string(p.Raw) + "|" + string(p.Input)
			}
		}
		return out
	}
	before := snapshot()
	for _, m := range raw {
		for i := range m {
			m[i] = 'x'
		}
	}
	after := snapshot()
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("message %d changed with what it was read from:\n%s\n%s", i, before[i], after[i])
		}
	}
}
