package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/e2e/internal/rig"
)

// The environment TestLoopSDKs reads.
const (
	sdksEnv        = "WEFT_SDKS"         // a folder whose node_modules holds @anthropic-ai/sdk and openai; unset skips
	sdksRequireEnv = "WEFT_SDKS_REQUIRE" // set: missing SDKs fail instead of skipping
)

func needSDKs(t *testing.T) string {
	t.Helper()
	dir := rig.Need(t, sdksEnv, os.Getenv(sdksEnv), sdksRequireEnv, os.Getenv(sdksRequireEnv) != "", "a folder with the provider SDKs in node_modules: .ci/loop installs them and runs this test")
	for _, pkg := range []string{"@anthropic-ai/sdk", "openai"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("%s=%s: %v", sdksEnv, dir, err)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	return dir
}

// sdkCall is one call an SDK made through weft, as sdks.mjs reports it.
type sdkCall struct {
	ID     string `json:"id"`
	API    string `json:"api"`
	Stream bool   `json:"stream"`
	Named  string `json:"named"`
	Text   string `json:"text"`
	Calls  []struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"calls"`
	Stop    string `json:"stop"`
	Events  int    `json:"events"`
	Status  int    `json:"status"`
	Session string `json:"session"`
	Bytes   string `json:"bytes"`
	Request string `json:"request"`
}

// sdkConversation is one SDK's conversation, streaming or not, and the
// Messages API's token count of its last question.
type sdkConversation struct {
	Label   string    `json:"label"`
	Session string    `json:"session"`
	Calls   []sdkCall `json:"calls"`
	Count   *struct {
		ID          string `json:"id"`
		InputTokens int    `json:"input_tokens"`
		Status      int    `json:"status"`
		Session     string `json:"session"`
		Bytes       string `json:"bytes"`
		Request     string `json:"request"`
	} `json:"count"`
}

const (
	sdkLookUp  = "Look up the api-gw limits."
	sdkLastAsk = "Which one suits it?"
	sdkTool    = "lookup"
)

// TestLoopSDKs drives the official @anthropic-ai/sdk and openai npm
// clients through weft serve to the stand-ins, streaming and not
// (sdks.mjs): each answer the SDK reads is what the stand-in sent, byte
// for byte; weft's session holds the user's and the assistant's
// messages, tool calls and results among them; and a digest made
// between two calls reaches the upstream with the next.
func TestLoopSDKs(t *testing.T) {
	sdks := needSDKs(t)
	dir := freshLogsDir(t)
	db := filepath.Join(dir, "weft.db")
	rep := &loopReport{name: "loop-sdks.txt"}
	defer rep.write(t)
	logTo := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	lookUp := []call{{tool: sdkTool, input: map[string]any{"q": "api-gw"}}}
	an := &standIn{Recorder: rig.Recorder{Log: logTo("anthropic-upstream.jsonl")},
		say: func(req messagesRequest) string { return loopAnswer(lastUserText(req)) },
		plan: func(req messagesRequest) []call {
			if lastUserText(req) == sdkLookUp {
				return lookUp
			}
			return nil
		},
	}
	oa := &chatStandIn{Recorder: rig.Recorder{Log: logTo("openai-upstream.jsonl")}, say: loopAnswer,
		plan: func(prompt string) []call {
			if prompt == sdkLookUp {
				return lookUp
			}
			return nil
		},
	}
	anSrv, oaSrv := httptest.NewServer(an), httptest.NewServer(oa)
	defer anSrv.Close()
	defer oaSrv.Close()
	base, _ := serveWeft(t, dir, db, "", "--upstream-anthropic", anSrv.URL, "--upstream-openai", oaSrv.URL+"/v1")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "sdks.mjs", "--url", base, "--sdks", sdks)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	os.WriteFile(filepath.Join(dir, "sdks.stdout"), stdout.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "sdks.stderr"), stderr.Bytes(), 0o644)
	if err != nil {
		serveLog, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
		t.Fatalf("node sdks.mjs: %v\n%s\n--- weft serve's log:\n%s", err, stderr.Bytes(), serveLog)
	}
	var result struct {
		Versions      map[string]string `json:"versions"`
		Conversations []sdkConversation `json:"conversations"`
	}
	line := stdout.Bytes()[bytes.LastIndex(stdout.Bytes(), []byte("RESULT "))+len("RESULT "):]
	if err := json.Unmarshal(line, &result); err != nil || len(result.Conversations) != 4 {
		t.Fatalf("sdks.mjs printed no result of 4 conversations (%v):\n%.2000s", err, stdout.Bytes())
	}
	n := 0
	for _, c := range result.Conversations {
		n += len(c.Calls)
		if c.Count != nil {
			n++
		}
	}
	rep.add("@anthropic-ai/sdk %s and openai %s through weft serve to the stand-ins, node %s: 4 conversations, %d SDK calls in %.1fs",
		result.Versions["@anthropic-ai/sdk"], result.Versions["openai"], nodeVersion(), n, took.Seconds())

	byCall := map[string]exchange{}
	for _, ex := range append(an.Exchanges(), oa.Exchanges()...) {
		if id := ex.Headers.Get("X-Call"); id != "" {
			byCall[id] = ex
		}
	}
	// Four sessions, one a conversation, of 8 messages each.
	titles := map[string]string{}
	for _, s := range settledSessions(t, db, func(s []listedSession) bool {
		return len(s) == 4 && !slices.ContainsFunc(s, func(x listedSession) bool { return x.MessageCount != 8 })
	}) {
		titles[s.SessionID] = s.Title
	}
	for _, conv := range result.Conversations {
		t.Run(conv.Label, func(t *testing.T) {
			checkSDKConversation(t, db, conv, byCall, titles)
		})
	}
	if !t.Failed() {
		rep.add("each answer the SDK read (create, or the stream's events) is what the stand-in sent, and its bytes are the stand-in's, byte for byte")
		rep.add("each session (named by /s/NAME, by X-Weft-Session, or recognised) holds the 8 messages: question, answer, question, call, result, answer, question, answer")
		rep.add("the digest of the first exchange, made over weft's HTTP API between two calls, reaches the upstream with the next call:")
		rep.add("  the Messages API's as its system prompt, Chat Completions' as a system message first; the first exchange is gone from it;")
		rep.add("  the Messages API's count_tokens (client.messages.countTokens) before it counts that thread, and stores nothing")
	}
}

func nodeVersion() string {
	out, _ := exec.CommandContext(context.Background(), "node", "--version").Output()
	return strings.TrimSpace(string(out))
}

// checkSDKConversation checks one conversation against what the stand-in
// got and sent and what weft stored.
func checkSDKConversation(t *testing.T, db string, conv sdkConversation, byCall map[string]exchange, titles map[string]string) {
	if len(conv.Calls) != 4 {
		t.Fatalf("%d calls, want 4", len(conv.Calls))
	}
	first := fmt.Sprintf("%s: what is a token bucket?", conv.Label)
	summary := fmt.Sprintf("%s: a token bucket refills at a fixed rate.", conv.Label)
	asks := []string{first, sdkLookUp, sdkLookUp, sdkLastAsk}
	for k, c := range conv.Calls {
		ex, ok := byCall[c.ID]
		switch {
		case !ok:
			t.Fatalf("%s: the stand-in got no request for it", c.ID)
		case c.Status != 200 || ex.Status != 200:
			t.Fatalf("%s: status %d at the client, %d at the stand-in: %s", c.ID, c.Status, ex.Status, c.Bytes)
		case c.Session == "" || c.Session != conv.Session:
			t.Errorf("%s: weft said session %q, the conversation's is %q", c.ID, c.Session, conv.Session)
		}
		// Byte for byte, streamed or not.
		if c.Bytes != ex.Answer {
			t.Errorf("%s: the client got %d bytes, not the %d the stand-in sent:\nclient:   %.400q\nstand-in: %.400q", c.ID, len(c.Bytes), len(ex.Answer), c.Bytes, ex.Answer)
		}
		if c.Stream && c.Events < 3 {
			t.Errorf("%s: the SDK read %d stream events", c.ID, c.Events)
		}
		// What the SDK made of it.
		if k == 1 {
			if len(c.Calls) != 1 || c.Calls[0].Name != sdkTool || !sameJSON(c.Calls[0].Input, []byte(`{"q":"api-gw"}`)) {
				t.Errorf("%s: the SDK read calls %+v, want one %s(q=api-gw)", c.ID, c.Calls, sdkTool)
			}
		} else if c.Text != loopAnswer(asks[k]) || len(c.Calls) != 0 {
			t.Errorf("%s: the SDK read %q and %d calls, want %q", c.ID, c.Text, len(c.Calls), loopAnswer(asks[k]))
		}
		// Before the digest the body goes as the SDK wrote it.
		if k < 3 && c.Request != string(ex.Request) {
			t.Errorf("%s: the stand-in got\n%.600s\nthe SDK sent\n%.600s", c.ID, ex.Request, c.Request)
		}
	}

	// After the digest: every field but the thread as the SDK wrote it;
	// the thread without the first exchange, the summary in its place.
	last := conv.Calls[3]
	ex := byCall[last.ID]
	var sent, got map[string]json.RawMessage
	json.Unmarshal([]byte(last.Request), &sent)
	json.Unmarshal(ex.Request, &got)
	for k, v := range sent {
		if k != "messages" && !sameJSON(v, got[k]) {
			t.Errorf("%s: %s changed on the way: %s -> %s", last.ID, k, v, got[k])
		}
	}
	if !strings.Contains(last.Request, jsonText(first)) || strings.Contains(string(ex.Request), jsonText(first)) {
		t.Errorf("%s: the first question is still sent after its digest:\n%s", last.ID, ex.Request)
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(got["messages"], &msgs)
	if strings.HasPrefix(conv.Label, "anthropic") {
		// The summary is a system turn of its own: the SDK's system
		// prompt (none here) goes as it came.
		if _, ok := got["system"]; ok || len(msgs) != 6 || msgs[0].Role != "system" || blockText(msgs[0].Content) != summary || msgs[1].Role != "user" || blockText(msgs[1].Content) != sdkLookUp {
			t.Errorf("%s: system %s and %d messages at the stand-in, want no system prompt, the summary as a system turn and 5 messages from %q:\n%s", last.ID, got["system"], len(msgs), sdkLookUp, ex.Request)
		}
	} else if len(msgs) != 6 || msgs[0].Role != "system" || chatText(msgs[0].Content) != summary || chatText(msgs[1].Content) != sdkLookUp {
		t.Errorf("%s: %d messages at the stand-in, want the summary as a system message, then 5 from %q:\n%s", last.ID, len(msgs), sdkLookUp, ex.Request)
	}

	// The token count of the last question, after the digest: weft
	// counts the effective thread upstream, and hands back the count.
	if strings.HasPrefix(conv.Label, "anthropic") {
		ct := conv.Count
		if ct == nil {
			t.Fatal("no count_tokens call")
		}
		ex, ok := byCall[ct.ID]
		var n struct {
			InputTokens int `json:"input_tokens"`
		}
		json.Unmarshal([]byte(ex.Answer), &n)
		switch {
		case !ok || ex.Path != "/v1/messages/count_tokens" || ct.Status != 200:
			t.Errorf("%s: status %d; the stand-in got %s %s", ct.ID, ct.Status, ex.Method, ex.Path)
		case ct.Bytes != ex.Answer || ct.InputTokens != n.InputTokens || n.InputTokens == 0:
			t.Errorf("%s: the client got %q (%d tokens), the stand-in sent %q", ct.ID, ct.Bytes, ct.InputTokens, ex.Answer)
		case ct.Session != conv.Session:
			t.Errorf("%s: counted in session %q, not the conversation's %q", ct.ID, ct.Session, conv.Session)
		case !strings.Contains(ct.Request, jsonText(first)) || strings.Contains(string(ex.Request), jsonText(first)) || !strings.Contains(string(ex.Request), jsonText(summary)):
			t.Errorf("%s: the stand-in counted\n%s\nwant the thread with the summary in place of the first exchange", ct.ID, ex.Request)
		}
	}

	// weft's session holds the user's and the assistant's messages (the
	// count stored nothing).
	stored := storedMessages(t, db, conv.Session, 8)
	roles := make([]string, len(stored))
	for i, m := range stored {
		roles[i] = m.Role
	}
	// A call and a result are stored with their structure; their text
	// says what they are.
	want := []string{first, loopAnswer(first), sdkLookUp, `[tool call lookup] {"q":"api-gw"}`, "[tool result] api-gw: sustained 1,200 requests/s, burst 300",
		loopAnswer(sdkLookUp), sdkLastAsk, loopAnswer(sdkLastAsk)}
	if got := strings.Join(roles, " "); got != "user assistant user assistant tool assistant user assistant" {
		t.Fatalf("the session holds %s: %+v", got, stored)
	}
	for i, w := range want {
		if stored[i].Content != w {
			t.Errorf("stored message %d is %q, want %q", i, stored[i].Content, w)
		}
	}
	switch named := conv.Calls[0].Named; named {
	case "prefix", "header":
		if titles[conv.Session] != "sdk-"+conv.Label {
			t.Errorf("the session named by %s is titled %q, want sdk-%s", named, titles[conv.Session], conv.Label)
		}
	default:
		if titles[conv.Session] != first {
			t.Errorf("the recognised session is titled %q, want its first question", titles[conv.Session])
		}
	}
}
