package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"weft/ops"
	"weft/ops/tools/toolstest"
)

// A Codex conversation's items: a developer message, the user's turn,
// reasoning, two calls made at once and their outputs, the answer.
const (
	rsCodex = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are Codex."}]}`
	rsUser  = `{"type":"message","id":"msg_u","role":"user","content":[{"type":"input_text","text":"Find the TODOs"}]}`
	rsThink = `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"opaque"}`
	rsCallA = `{"type":"function_call","call_id":"call_a","name":"exec_command","arguments":"{\"cmd\":\"grep TODO a.go\"}"}`
	rsCallB = `{"type":"function_call","call_id":"call_b","name":"exec_command","arguments":"{\"cmd\":\"grep TODO b.go\"}"}`
	rsOutA  = `{"type":"function_call_output","call_id":"call_a","output":"a.go:3: TODO"}`
	rsOutB  = `{"type":"function_call_output","call_id":"call_b","output":"none"}`
	rsDone  = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"One, in a.go."}]}`
	rsWeb   = `{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"TODO conventions"}}`
	rsNext  = `{"role":"user","content":"Fix it."}`
)

// sentItems says what each item sent is: the request's item by its
// place ("#3"), or a message weft wrote ("developer: text").
func sentItems(items []ResponsesItem) []string {
	var out []string
	for _, it := range items {
		if it.Request >= 0 {
			out = append(out, "#"+string(rune('0'+it.Request)))
			continue
		}
		out = append(out, it.Message.Role+": "+it.Message.Content[0].Text)
	}
	return out
}

func TestProxyResponsesTurns(t *testing.T) {
	f := toolstest.New(t)
	ctx := context.Background()
	first := proxyTurn(f, Request{API: Responses, Messages: proxyMsgs(t, "["+rsCodex+","+rsUser+"]")})
	if !first.Created || first.Appended != 2 || !first.Unchanged {
		t.Fatalf("first request: %+v", first)
	}
	// The answer is the response's output, a list of items.
	output := "[" + rsThink + "," + rsCallA + "," + rsCallB + "]"
	if _, err := EngineOf(f.Svc).RecordAnswer(ctx, Answer{API: Responses, SessionID: first.SessionID, After: first.Stored, Message: json.RawMessage(output), Model: "m1"}); err != nil {
		t.Fatal(err)
	}
	thread := "[" + strings.Join([]string{rsCodex, rsUser, rsThink, rsCallA, rsCallB, rsOutA, rsOutB, rsDone, rsNext, rsWeb}, ",") + "]"
	turn := proxyTurn(f, Request{API: Responses, Messages: proxyMsgs(t, thread)})
	if turn.SessionID != first.SessionID || turn.Recognized != 5 || turn.Appended != 5 || !turn.Unchanged {
		t.Fatalf("second request: %+v", turn)
	}
	f.Svc.SetDefaultSession(turn.SessionID)

	// A digest of the call and its output, and the items operations
	// made, are written; the rest are the request's own. A hosted tool's
	// call (a web search) has no output to pair: it goes as it came.
	f.MustCall("digest_messages", `{"start_idx":1,"end_idx":6,"summary":"Found one TODO, in a.go."}`)
	turn = proxyTurn(f, Request{API: Responses, Messages: proxyMsgs(t, thread)})
	if got, want := strings.Join(sentItems(turn.Responses), " | "), "#0 | developer: Found one TODO, in a.go. | #7 | #8 | #9"; got != want {
		t.Errorf("sent %s\nwant %s", got, want)
	}
	if turn.SentTokens >= turn.RawTokens || len(turn.Adjustments) != 0 {
		t.Errorf("tokens %d → %d, adjustments %v", turn.RawTokens, turn.SentTokens, turn.Adjustments)
	}

	// Calls made at once stay paired with their outputs after them; a
	// snipped output leaves its call as text, and the reasoning before
	// the calls goes with it, as the API takes no reasoning without the
	// item it led to.
	f.MustCall("toggle_operation", `{"operation_id":"`+lastOp(f, turn.SessionID)+`","active":false}`)
	f.MustCall("snip_messages", `{"ids":["m6"]}`)
	turn = proxyTurn(f, Request{API: Responses, Messages: proxyMsgs(t, thread)})
	want := `#0 | #1 | assistant: [tool call exec_command] {"cmd":"grep TODO a.go"} | #4 | #6 | #7 | #8 | #9`
	if got := strings.Join(sentItems(turn.Responses), " | "); got != want {
		t.Errorf("sent %s\nwant %s", got, want)
	}
	if len(turn.Adjustments) != 2 || !strings.Contains(turn.Adjustments[0], "reasoning") || !strings.Contains(turn.Adjustments[1], "call_a (exec_command) has no output") {
		t.Errorf("adjustments %q", turn.Adjustments)
	}
}

// A session's title is what the user wrote, not the context Codex adds.
func TestProxyResponsesTitle(t *testing.T) {
	f := toolstest.New(t)
	items := `[{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>\nRun go test.\n</INSTRUCTIONS>"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/work</cwd>\n</environment_context>"}]},` + rsUser + `]`
	turn := proxyTurn(f, Request{API: Responses, Messages: proxyMsgs(t, items)})
	if info, _, _ := f.Svc.View(turn.SessionID); info.Title != "Find the TODOs" {
		t.Errorf("title %q", info.Title)
	}
}

func TestProxyResponsesRefusesWhatIsNoItem(t *testing.T) {
	f := toolstest.New(t)
	before := f.FileHash()
	for _, c := range []struct{ items, want string }{
		{`[]`, "input is empty"},
		{`[` + rsUser + `,7]`, "input[1]: a number"},
		{`[` + rsUser + `,{"type":"message","role":"robot","content":"x"}]`, `input[1]: message with role "robot"`},
	} {
		_, err := EngineOf(f.Svc).Take(context.Background(), Request{API: Responses, Messages: proxyMsgs(t, c.items)})
		if !errors.Is(err, ops.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.items, err, c.want)
		}
	}
	if _, err := EngineOf(f.Svc).RecordAnswer(context.Background(), Answer{API: Responses, SessionID: "s", Message: json.RawMessage(`{"type":"message"}`)}); !errors.Is(err, ops.ErrInvalid) || !strings.Contains(err.Error(), "not a list of items") {
		t.Errorf("an output that is no list: %v", err)
	}
	if f.FileHash() != before {
		t.Error("a refused request changed the file")
	}
}
