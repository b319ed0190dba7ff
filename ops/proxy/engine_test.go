package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/ops/tools/toolstest"
)

// proxyMsgs reads a JSON list of messages as a request carries them.
func proxyMsgs(t *testing.T, s string) []json.RawMessage {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// sentMessages is the "messages" a Messages API request of thread goes
// upstream with, after turn.
func sentMessages(t *testing.T, thread string, turn *Turn) string {
	t.Helper()
	return sentAs(t, Anthropic, thread, turn)
}

// sentAs is sentMessages for a request of api.
func sentAs(t *testing.T, api API, thread string, turn *Turn) string {
	t.Helper()
	b, err := parseProxyBody(api, []byte(`{"messages":`+thread+`}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := b.rewrite(nil, turn)
	if err != nil {
		t.Fatal(err)
	}
	return rawField(t, out, "messages")
}

// proxyTurn takes a request through the fixture's proxy engine, and
// waits for its messages to be stored.
func proxyTurn(f *toolstest.Fixture, r Request) Turn {
	f.T.Helper()
	turn, err := EngineOf(f.Svc).Take(context.Background(), r)
	if err != nil {
		f.T.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		f.T.Fatal(err)
	}
	return turn
}

// listSessions are the sessions as list_sessions gives them.
func listSessions(f *toolstest.Fixture) []ops.SessionOut {
	f.T.Helper()
	return f.MustCall("list_sessions", `{"max_tokens":0}`).(reads.ListSessionsResult).Sessions
}

const (
	anFirst  = `{"role":"user","content":[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"Find the TODOs\nin the repo"}]}`
	anAnswer = `{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"TODO"}}]}`
	anResult = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go:3: TODO"}]}`
	anDone   = `{"role":"assistant","content":[{"type":"text","text":"One, in a.go."}]}`
	anNext   = `{"role":"user","content":"Fix it."}`
)

func TestProxyTwoTurnsContinueOneSession(t *testing.T) {
	f := toolstest.New(t)
	ctx := context.Background()
	events, stop := f.Svc.Subscribe()
	defer stop()

	first := proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, "["+anFirst+"]")})
	if !first.Created || first.Appended != 1 || first.Recognized != 0 || !first.Unchanged || first.Stored != 1 {
		t.Fatalf("first request: %+v", first)
	}
	info, _, err := f.Svc.View(first.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Source != Source || info.Title != "Find the TODOs" {
		t.Errorf("the new session is %q from %q, want \"Find the TODOs\" from proxy", info.Title, info.Source)
	}
	ev := <-events
	if ev.Kind != ops.EventSessionCreated || ev.Author != "proxy" || !strings.Contains(ev.What, "1 message new") || !strings.Contains(ev.What, "tokens sent") {
		t.Errorf("event %+v", ev)
	}

	if _, err := EngineOf(f.Svc).RecordAnswer(ctx, Answer{API: Anthropic, SessionID: first.SessionID, After: first.Stored, Message: json.RawMessage(anAnswer), Model: "m1"}); err != nil {
		t.Fatal(err)
	}
	second := proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, "["+anFirst+","+anAnswer+","+anResult+"]")})
	if second.SessionID != first.SessionID || second.Created || second.Recognized != 2 || second.Appended != 1 || !second.Unchanged || second.Stored != 3 {
		t.Fatalf("second request: %+v", second)
	}
	// The same request again (a retry) stores nothing.
	before := f.FileHash()
	again := proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, "["+anFirst+","+anAnswer+","+anResult+"]")})
	if again.SessionID != first.SessionID || again.Appended != 0 || f.FileHash() != before {
		t.Errorf("a retry: %+v, file changed: %v", again, f.FileHash() != before)
	}
	_, items, err := f.Svc.ExportItems(first.SessionID, true)
	if err != nil {
		t.Fatal(err)
	}
	roles := []model.Role{}
	for _, it := range items {
		roles = append(roles, it.Role)
	}
	if len(roles) != 3 || roles[1] != model.RoleAssistant || roles[2] != model.RoleTool {
		t.Errorf("stored roles %v, want user, assistant, tool", roles)
	}
	if st := f.Svc.ProxyStatsOf(first.SessionID); st == nil || st.Requests != 3 || st.RawTokens != second.RawTokens {
		t.Errorf("stats %+v", st)
	}
}

func TestProxySendsTheEffectiveThread(t *testing.T) {
	f := toolstest.New(t)
	thread := "[" + anFirst + "," + anAnswer + "," + anResult + "," + anDone + "," + anNext + "]"
	turn := proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, thread)})
	sid := turn.SessionID
	f.Svc.SetDefaultSession(sid)

	// A digest of the first turns: the summary opens the thread as a
	// system turn of its own (the client's system prompt is its own);
	// what follows is sent as it came.
	f.MustCall("digest_messages", `{"start_idx":0,"end_idx":3,"summary":"Found one TODO in a.go."}`)
	turn = proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, thread)})
	if turn.Unchanged || turn.Anthropic == nil || turn.SessionID != sid || turn.Appended != 0 {
		t.Fatalf("after a digest: %+v", turn)
	}
	if got, want := sentMessages(t, thread, &turn), `[{"role":"system","content":[{"type":"text","text":"Found one TODO in a.go."}]},`+anNext+`]`; got != want {
		t.Errorf("sent\n%s\nwant\n%s", got, want)
	}
	if turn.SentTokens >= turn.RawTokens {
		t.Errorf("sent %d tokens of %d", turn.SentTokens, turn.RawTokens)
	}

	// A snip of the call alone: its result is kept as text, so the
	// thread stays valid.
	f.MustCall("toggle_operation", `{"operation_id":"`+lastOp(f, sid)+`","active":false}`)
	f.MustCall("snip_messages", `{"ids":["m2"]}`)
	turn = proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, thread)})
	body, _ := json.Marshal(turn.Anthropic)
	if strings.Contains(string(body), "tool_result") || !strings.Contains(string(body), "a.go:3: TODO") {
		t.Errorf("a result without its call: %s", body)
	}
	if len(turn.Adjustments) == 0 {
		t.Error("no adjustment says the result was folded")
	}

	// The same in chat-completions shape.
	oa := `[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"bye"}]`
	turn = proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, oa)})
	f.Svc.SetDefaultSession(turn.SessionID)
	f.MustCall("snip_messages", `{"start_idx":1,"end_idx":2}`)
	turn = proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, oa)})
	if got, want := sentAs(t, OpenAI, oa, &turn), `[{"role":"system","content":"Be brief."},{"role":"user","content":"bye"}]`; turn.Unchanged || got != want {
		t.Errorf("openai: sent %s, want %s", got, want)
	}
}

// lastOp is the ID of session sid's latest operation.
func lastOp(f *toolstest.Fixture, sid string) string {
	f.T.Helper()
	list, err := f.Svc.Operations(sid)
	if err != nil || len(list) == 0 {
		f.T.Fatal(err, len(list))
	}
	return list[len(list)-1].ID
}

func TestProxyRecognisesEachConversation(t *testing.T) {
	f := toolstest.New(t)
	hi := `{"role":"user","content":"hi"}`
	a := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[`+hi+`,{"role":"assistant","content":"one"}]`)})
	// The same start, another answer: another conversation.
	b := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[`+hi+`,{"role":"assistant","content":"two"}]`)})
	if a.SessionID == b.SessionID || !b.Created {
		t.Fatalf("two conversations in one session: %+v %+v", a, b)
	}
	// Each goes on in its own.
	a2 := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[`+hi+`,{"role":"assistant","content":"one"},{"role":"user","content":"more"}]`)})
	b2 := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[`+hi+`,{"role":"assistant","content":"two"},{"role":"user","content":"more"}]`)})
	if a2.SessionID != a.SessionID || b2.SessionID != b.SessionID || a2.Appended != 1 || b2.Appended != 1 {
		t.Errorf("continued: %+v %+v", a2, b2)
	}
	// A session the proxy did not start is continued only when named;
	// a name not there yet starts a session of that title.
	sid := f.Session("imported", 2) // "message 1", "message 2"
	imported := `[{"role":"user","content":"message 1"},{"role":"assistant","content":"message 2"},{"role":"user","content":"more"}]`
	if got := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, imported)}); got.SessionID == sid {
		t.Error("a session the proxy did not start was continued unnamed")
	}
	if got := proxyTurn(f, Request{API: OpenAI, Session: "imported", Messages: proxyMsgs(t, imported)}); got.SessionID != sid || got.Appended != 1 {
		t.Errorf("named: %+v", got)
	}
	named := proxyTurn(f, Request{API: OpenAI, Session: "my work", Messages: proxyMsgs(t, `[{"role":"user","content":"start"}]`)})
	if info, _, _ := f.Svc.View(named.SessionID); !named.Created || info.Title != "my work" {
		t.Errorf("a new named session: %+v %q", named, info.Title)
	}
	// Named, but not continued by the messages: recognised as if unnamed.
	if got := proxyTurn(f, Request{API: OpenAI, Session: "my work", Messages: proxyMsgs(t, `[`+hi+`,{"role":"assistant","content":"one"},{"role":"user","content":"more"}]`)}); got.SessionID != a.SessionID {
		t.Errorf("a named session the messages do not continue: %+v", got)
	}

	// After a restart, the proxy's sessions are found in the file.
	f.Reopen()
	a3 := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[`+hi+`,{"role":"assistant","content":"one"},{"role":"user","content":"more"},{"role":"assistant","content":"ok"}]`)})
	if a3.SessionID != a.SessionID || a3.Appended != 1 {
		t.Errorf("after a restart: %+v", a3)
	}
}

func TestProxyProbeStoresNothing(t *testing.T) {
	f := toolstest.New(t)
	turn := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`)})
	f.Svc.SetDefaultSession(turn.SessionID)
	f.MustCall("snip_messages", `{"start_idx":0,"end_idx":0}`)
	before := f.FileHash()
	probe := proxyTurn(f, Request{API: OpenAI, Probe: true, Messages: proxyMsgs(t, `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"new"}]`)})
	if f.FileHash() != before || probe.Appended != 0 || probe.SessionID != turn.SessionID {
		t.Fatalf("a probe wrote, or missed its session: %+v", probe)
	}
	if got, want := sentAs(t, OpenAI, `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"new"}]`, &probe), `[{"role":"assistant","content":"hello"},{"role":"user","content":"new"}]`; got != want {
		t.Errorf("probe thread %s, want %s", got, want)
	}
	// A probe of a conversation weft has not seen is sent as it came.
	if p := proxyTurn(f, Request{API: OpenAI, Probe: true, Messages: proxyMsgs(t, `[{"role":"user","content":"unseen"}]`)}); !p.Unchanged || p.SessionID != "" || f.FileHash() != before {
		t.Errorf("unseen probe: %+v", p)
	}
}

func TestProxyAnswerFollowsItsRequest(t *testing.T) {
	f := toolstest.New(t)
	ctx := context.Background()
	turn := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[{"role":"user","content":"hi"}]`)})
	answer := Answer{API: OpenAI, SessionID: turn.SessionID, After: turn.Stored, Message: json.RawMessage(`{"role":"assistant","content":"hello"}`)}
	if _, err := EngineOf(f.Svc).RecordAnswer(ctx, answer); err != nil {
		t.Fatal(err)
	}
	// The same answer again follows a request no longer the last.
	before := f.FileHash()
	if _, err := EngineOf(f.Svc).RecordAnswer(ctx, answer); !errors.Is(err, ops.ErrConflict) || f.FileHash() != before {
		t.Errorf("a stale answer: %v", err)
	}
	// An answer that is not the assistant's is refused.
	answer.After = 2
	answer.Message = json.RawMessage(`{"role":"user","content":"me"}`)
	if _, err := EngineOf(f.Svc).RecordAnswer(ctx, answer); !errors.Is(err, ops.ErrInvalid) {
		t.Errorf("a user's answer: %v", err)
	}
}

func TestProxyRefusesWhatIsNoThread(t *testing.T) {
	f := toolstest.New(t)
	before := f.FileHash()
	for _, c := range []struct {
		api  API
		msgs string
		want string
	}{
		{Anthropic, `[]`, "messages is empty"},
		{Anthropic, `[{"role":"tool","content":"x"}]`, `role "tool" is not user, assistant or system`},
		{Anthropic, `[{"role":"user","content":{}}]`, "neither text nor a list of blocks"},
		{OpenAI, `[{"role":"robot","content":"x"}]`, `role "robot"`},
		{OpenAI, `[7]`, "not a message object"},
		{Anthropic, `[{"role":"user","content":[]}]`, "every message is empty"},
	} {
		_, err := EngineOf(f.Svc).Take(context.Background(), Request{API: c.api, Messages: proxyMsgs(t, c.msgs)})
		if !errors.Is(err, ops.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.api, c.msgs, err, c.want)
		}
	}
	if f.FileHash() != before {
		t.Error("a refused request changed the file")
	}
}

func TestListSessionsSaysWhichAreProxied(t *testing.T) {
	f := toolstest.New(t)
	plain := f.Session("plain", 2)
	turn := proxyTurn(f, Request{API: OpenAI, Messages: proxyMsgs(t, `[{"role":"user","content":"hi"}]`)})
	seen := 0
	for _, x := range listSessions(f) {
		switch x.SessionID {
		case plain:
			seen++
			if x.Proxy != nil || x.Source == Source {
				t.Errorf("a session never proxied: %+v", x)
			}
		case turn.SessionID:
			seen++
			if x.Source != Source || x.Proxy == nil || x.Proxy.Requests != 1 || x.Proxy.RawTokens != turn.RawTokens || x.Proxy.SentTokens != turn.SentTokens {
				t.Errorf("the proxied session: %+v %+v", x, x.Proxy)
			}
		}
	}
	if seen != 2 {
		t.Errorf("listed %d of the 2 sessions", seen)
	}
}

// An agent's system turns (Claude Code sends its environment as one)
// are stored as system messages and stay system turns in the thread
// sent; a digest in the middle of the thread is one too.
func TestProxyKeepsSystemTurns(t *testing.T) {
	f := toolstest.New(t)
	thread := `[{"role":"user","content":"Find the TODOs"},{"role":"system","content":[{"type":"text","text":"# Environment\nLinux"}]},` +
		`{"role":"assistant","content":"Looking."},{"role":"user","content":"More detail."},{"role":"assistant","content":"Here."},{"role":"user","content":"Thanks."}]`
	turn := proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, thread)})
	f.Svc.SetDefaultSession(turn.SessionID)
	f.MustCall("digest_messages", `{"start_idx":2,"end_idx":3,"summary":"Looked, and was asked for more."}`)
	turn = proxyTurn(f, Request{API: Anthropic, Messages: proxyMsgs(t, thread)})
	// The client's system turn goes as it came, and the summary after
	// it is a system turn of its own: merged, the client's would change.
	got := sentMessages(t, thread, &turn)
	want := `[{"role":"user","content":"Find the TODOs"},{"role":"system","content":[{"type":"text","text":"# Environment\nLinux"}]},` +
		`{"role":"system","content":[{"type":"text","text":"Looked, and was asked for more."}]},` +
		`{"role":"assistant","content":"Here."},{"role":"user","content":"Thanks."}]`
	if got != want {
		t.Errorf("sent\n%s\nwant\n%s", got, want)
	}
}
