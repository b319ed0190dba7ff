package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"weft/formats/export"
	"weft/model"
	"weft/ops"
	"weft/ops/tools/toolstest"
)

// headThread is an agent's conversation of n messages in the Messages
// API's shape: a question, then rounds of text and a tool call, each
// answered by its result.
func headThread(n int) []string {
	msgs := []string{`{"role":"user","content":"Why does the limiter let bursts through?"}`}
	for k := 0; len(msgs) < n; k++ {
		if len(msgs)%2 == 1 {
			msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Step %d: reading the bucket."},{"type":"tool_use","id":"toolu_%03d","name":"Read","input":{"file":"bucket_%d.go"}}]}`, k, k, k))
			continue
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%03d","content":"func refill%d() {}"}]}`, k-1, k))
	}
	return msgs
}

// headSent is the "messages" a turn sends for the Messages API: the
// head's, encoded when it was made, then the rest, encoded now.
func headSent(t *testing.T, turn *Turn) string {
	t.Helper()
	out := []byte{'['}
	if turn.AnthropicHead != nil {
		out = append(out, turn.AnthropicHead.JSON()...)
	}
	for k := range turn.Anthropic.Messages {
		if len(out) > 1 {
			out = append(out, ',')
		}
		var err error
		if out, err = export.AppendJSON(out, &turn.Anthropic.Messages[k]); err != nil {
			t.Fatal(err)
		}
	}
	return string(append(out, ']'))
}

// headWhole is the "messages" of the thread of raw exported whole, as
// before there were heads, and the report of it.
func headWhole(t *testing.T, f *toolstest.Fixture, turn *Turn, raw []json.RawMessage) (string, export.Report) {
	t.Helper()
	msgs, _, _, err := f.Svc.ReadThread(anthropicMessages, raw)
	if err != nil {
		t.Fatal(err)
	}
	// The request's new messages are stored now: the view has them.
	info, v, err := f.Svc.View(turn.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if info.MessageCount != len(msgs) {
		t.Fatalf("%d messages stored, the request has %d", info.MessageCount, len(msgs))
	}
	items, err := EngineOf(f.Svc).effectiveItems(v, len(msgs), msgs)
	if err != nil {
		t.Fatal(err)
	}
	whole, rep := export.AnthropicWith(items, export.AnthropicOptions{SystemTurns: true, PromptApart: true})
	if whole.System != turn.Anthropic.System {
		t.Errorf("system %q, whole %q", turn.Anthropic.System, whole.System)
	}
	out, err := export.AppendJSON(nil, whole.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), rep
}

// A proxied session keeps the head of the thread it sent: the session's
// next request exports and encodes only what follows it, and sends byte
// for byte what the whole thread's export sends. An edit that changes
// the head's items (a new operation, a toggle, a revert, a summary
// written again), the thread re-sent in another shape by another
// client, or another client's message in the session (the agent's next
// request then continues no session) is not sent from the head kept.
func TestProxyHeadIsTheWholeThread(t *testing.T) {
	f := toolstest.New(t)
	ctx := context.Background()
	thread := headThread(60)
	var sid string
	var kept *proxyHead
	// request sends thread; fits says whether the session's kept head
	// (as it was before the request) fits its thread.
	request := func(what string, msgs []string, wantFits bool) Turn {
		t.Helper()
		raw := proxyMsgs(t, "["+strings.Join(msgs, ",")+"]")
		if sid != "" {
			kept = EngineOf(f.Svc).heads.get(sid)
			if kept != nil {
				_, v, err := f.Svc.View(sid)
				if err != nil {
					t.Fatal(err)
				}
				_, _, places, err := f.Svc.ReadThread(anthropicMessages, raw)
				if err != nil {
					t.Fatal(err)
				}
				if got := kept.fits(v, places); got != wantFits {
					t.Errorf("%s: the head kept fits the thread: %v, want %v", what, got, wantFits)
				}
			} else if wantFits {
				t.Errorf("%s: no head kept", what)
			}
		}
		turn := proxyTurn(f, Request{API: Anthropic, Messages: raw})
		if turn.Unchanged {
			return turn
		}
		whole, rep := headWhole(t, f, &turn, raw)
		if sent := headSent(t, &turn); sent != whole {
			t.Fatalf("%s: sent\n%s\nthe whole thread\n%s", what, sent, whole)
		}
		if !slices.Equal(turn.Adjustments, rep.Folded) {
			t.Errorf("%s: adjustments %q, the whole thread's %q", what, turn.Adjustments, rep.Folded)
		}
		return turn
	}
	sid = request("the first request", thread, false).SessionID
	f.Svc.SetDefaultSession(sid)
	f.MustCall("digest_messages", `{"start_idx":0,"end_idx":19,"summary":"Read the first ten files."}`)

	answer := `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`
	next := func(i int) {
		thread = append(thread, answer, fmt.Sprintf(`{"role":"user","content":"next %d"}`, i))
	}
	// The thread goes on: the head is kept, and grows.
	first := request("after the digest", thread, false)
	if first.AnthropicHead == nil {
		t.Fatal("no head made")
	}
	for i := range 40 {
		next(i)
		turn := request(fmt.Sprintf("request %d", i), thread, true)
		if turn.AnthropicHead == nil || turn.AnthropicHead.Items() < first.AnthropicHead.Items() {
			t.Fatalf("request %d: head %v", i, turn.AnthropicHead)
		}
		if len(turn.Anthropic.Messages) > headMargin+headStep+2 {
			t.Errorf("request %d: %d messages encoded after the head", i, len(turn.Anthropic.Messages))
		}
	}
	latest := func() string { return lastOp(f, sid) }

	// A new operation in the head's items.
	f.MustCall("snip_messages", `{"ids":["m30"]}`)
	next(100)
	request("after a snip", thread, false)
	next(101)
	request("the thread after the snip", thread, true)
	// A toggle, off and on.
	snip := latest()
	f.MustCall("toggle_operation", `{"operation_id":"`+snip+`","active":false}`)
	next(102)
	request("after a toggle off", thread, false)
	f.MustCall("toggle_operation", `{"operation_id":"`+snip+`","active":true}`)
	next(103)
	request("after a toggle on", thread, false)
	// A revert of the digest, and the same range digested again with
	// another summary: the view's items are as they were, the summary
	// is not.
	list, err := f.Svc.Operations(sid)
	if err != nil {
		t.Fatal(err)
	}
	f.MustCall("revert_operation", `{"operation_id":"`+list[0].ID+`"}`)
	next(104)
	request("after a revert", thread, false)
	f.MustCall("revert_operation", `{"operation_id":"`+snip+`"}`)
	f.MustCall("digest_messages", `{"start_idx":0,"end_idx":19,"summary":"Read the first ten files."}`)
	next(105)
	request("digested again", thread, false)
	f.MustCall("revert_operation", `{"operation_id":"`+latest()+`"}`)
	f.MustCall("digest_messages", `{"start_idx":0,"end_idx":19,"summary":"Read ten files, found nothing."}`)
	next(106)
	request("digested again, another summary", thread, false)
	next(107)
	request("the thread after it", thread, true)

	// The same thread in another shape (another client): the same
	// session, messages read from other bytes.
	reshaped := append([]string{`{"role":"user","content":[{"type":"text","text":"Why does the limiter let bursts through?"}]}`}, thread[1:]...)
	if turn := request("another shape", reshaped, false); turn.SessionID != sid {
		t.Fatalf("another shape went to session %s", turn.SessionID)
	}

	// Another client's message in the session: the agent's next request
	// continues no session, and is sent whole.
	if _, err := f.Svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "A note from the operator."}}}); err != nil {
		t.Fatal(err)
	}
	next(108)
	turn := request("after another client's message", thread, false)
	if turn.SessionID == sid {
		t.Fatal("the agent's request continued a session it does not have all of")
	}
}
