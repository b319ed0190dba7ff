package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/assemble/assembletest"
	"weft/ops/opstest"
	"weft/ops/tools/toolstest"
	"weft/store"
)

// hookThread is a caller's thread of n plain turns, alternating user and
// assistant, with content "turn <k>".
func hookThread(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out[i] = map[string]any{"role": role, "content": fmt.Sprintf("turn %d", i+1)}
	}
	return out
}

// storedMessages are session sid's stored messages from seq from to seq
// to, as the store has them.
func storedMessages(t *testing.T, f *toolstest.Fixture, sid string, from, to uint64) []model.Message {
	t.Helper()
	var out []model.Message
	err := f.St.View(func(tx store.Tx) error {
		return tx.Messages(sid, from, to, func(m model.Message) error {
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hookArgs(t *testing.T, sid string, msgs []map[string]any, extra string) string {
	t.Helper()
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"session_id":%q,"messages":%s%s}`, sid, raw, extra)
}

func TestApplyContextOperationsSyncs(t *testing.T) {
	f := toolstest.New(t)
	sid := f.MustCall("create_session", `{"title":"hook"}`).(ops.CreateSessionResult).SessionID
	withTools := append(hookThread(4),
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			map[string]any{"id": "call_9", "type": "function", "function": map[string]any{"name": "grep", "arguments": `{"q":"TODO"}`}},
		}},
		map[string]any{"role": "tool", "tool_call_id": "call_9", "content": "main.go:12: TODO"},
		map[string]any{"role": "assistant", "content": "One TODO, in main.go."},
	)
	steps := []struct {
		name       string
		msgs       []map[string]any
		before     func()
		recognized int
		appended   int
		written    bool     // whether the file must change
		contents   []string // the returned thread's contents
	}{
		{name: "first sight stores all", msgs: hookThread(3), appended: 3, written: true, contents: []string{"turn 1", "turn 2", "turn 3"}},
		{name: "the same thread again", msgs: hookThread(3), recognized: 3, contents: []string{"turn 1", "turn 2", "turn 3"}},
		{name: "a longer thread adds its end", msgs: hookThread(4), recognized: 3, appended: 1, written: true,
			contents: []string{"turn 1", "turn 2", "turn 3", "turn 4"}},
		{name: "operations apply to what comes back", msgs: hookThread(4), recognized: 4,
			before: func() {
				f.MustCall("digest_messages", `{"start_idx":0,"end_idx":1,"summary":"Greetings."}`)
				f.MustCall("snip_messages", `{"ids":["m4"]}`)
			},
			contents: []string{"Greetings.", "turn 3"}},
		{name: "tool calls and results", msgs: withTools, recognized: 4, appended: 3, written: true,
			contents: []string{"Greetings.", "turn 3", "", "main.go:12: TODO", "One TODO, in main.go."}},
		{name: "tool calls are recognised again", msgs: withTools, recognized: 7,
			contents: []string{"Greetings.", "turn 3", "", "main.go:12: TODO", "One TODO, in main.go."}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.before != nil {
				st.before()
			}
			before := f.FileHash()
			info, _, _ := f.Svc.View(sid)
			r := f.MustCall("apply_context_operations", hookArgs(t, sid, st.msgs, "")).(ops.ApplyOpsResult)
			if r.Recognized != st.recognized || r.Appended != st.appended || len(r.AppendedIDs) != st.appended {
				t.Errorf("recognized %d, appended %d %v; want %d, %d", r.Recognized, r.Appended, r.AppendedIDs, st.recognized, st.appended)
			}
			if changed := f.FileHash() != before; changed != st.written {
				t.Errorf("file changed: %v, want %v", changed, st.written)
			}
			wantVersion := info.Version
			if st.written {
				wantVersion++
			}
			if r.Version != wantVersion {
				t.Errorf("version %d, want %d", r.Version, wantVersion)
			}
			var got []string
			for _, m := range r.Messages {
				got = append(got, m.Content)
			}
			if strings.Join(got, "|") != strings.Join(st.contents, "|") {
				t.Errorf("thread %q, want %q", got, st.contents)
			}
			assembletest.CheckOpenAI(t, r.Messages)
		})
	}
	// The tool call was stored as a part, as an import stores it.
	raw := storedMessages(t, f, sid, 5, 6)
	parts := model.DecodeParts(raw[0].Parts)
	if len(parts) != 1 || parts[0].Type != model.PartToolCall || parts[0].ToolName != "grep" || parts[0].ToolCallID != "call_9" {
		t.Errorf("stored call %+v", raw[0])
	}
	if raw[1].Role != model.RoleTool || raw[1].Content != "[tool result] main.go:12: TODO" {
		t.Errorf("stored result %+v", raw[1])
	}
}

func TestApplyContextOperationsRecognisesPlainAppends(t *testing.T) {
	f := toolstest.New(t)
	// Stored with append_messages as plain role/content: a tool message
	// the importer would have read into a result part.
	sid := f.Messages("plain", []model.NewMessage{
		{Role: model.RoleUser, Content: "list files"},
		{Role: model.RoleTool, Content: "a.go b.go"},
	})
	msgs := []map[string]any{{"role": "user", "content": "list files"}, {"role": "tool", "content": "a.go b.go"}, {"role": "user", "content": "thanks"}}
	r := f.MustCall("apply_context_operations", hookArgs(t, sid, msgs, "")).(ops.ApplyOpsResult)
	if r.Recognized != 2 || r.Appended != 1 || r.AppendedIDs[0] != "m3" {
		t.Fatalf("recognized %d, appended %v", r.Recognized, r.AppendedIDs)
	}
}

func TestApplyContextOperationsRefusals(t *testing.T) {
	f := toolstest.New(t)
	sid := f.Messages("refusals", []model.NewMessage{
		{Role: model.RoleUser, Content: "turn 1"}, {Role: model.RoleAssistant, Content: "turn 2"}, {Role: model.RoleUser, Content: "turn 3"},
	})
	f.MustCall("tag_messages", `{"start_idx":0,"end_idx":0,"tags":["x"]}`)
	diverged := hookThread(4)
	diverged[1]["content"] = "turn two, edited by the client"
	tests := []struct {
		name string
		args string
		kind error
		says []string
	}{
		{"diverges in the middle", hookArgs(t, sid, diverged, ""), ops.ErrConflict,
			[]string{`messages[1] is not the message session`, `the caller has assistant "turn two, edited by the client"`, `stored message m2 is assistant "turn 2"`, "The first message matches", "only new messages at the end"}},
		{"shorter than stored", hookArgs(t, sid, hookThread(2), ""), ops.ErrConflict,
			[]string{"the caller sent 2 messages, which match the start of session", "it stores 3", "the whole thread"}},
		{"stale version", hookArgs(t, sid, hookThread(4), `,"expected_version":1`), ops.ErrConflict,
			[]string{"is at version 3, not 1", "tag x on 0 by operator"}},
		{"empty", fmt.Sprintf(`{"session_id":%q,"messages":[]}`, sid), ops.ErrInvalid, []string{"messages is empty"}},
		{"unknown role", hookArgs(t, sid, []map[string]any{{"role": "robot", "content": "beep"}}, ""), ops.ErrInvalid,
			[]string{`messages[0]: role "robot" is not one of system, developer, user, assistant, tool, function`}},
		{"no content", hookArgs(t, sid, []map[string]any{{"role": "user"}}, ""), ops.ErrInvalid, []string{"messages[0]: it is empty"}},
		{"not objects", fmt.Sprintf(`{"session_id":%q,"messages":["hi"]}`, sid), ops.ErrInvalid, []string{"messages[0] is not a message object"}},
		{"unknown session", hookArgs(t, "nosuchsession", hookThread(1), ""), ops.ErrNotFound, []string{`session "nosuchsession" not found`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.FileHash()
			_, err := f.Call("apply_context_operations", tt.args)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error %v, want %v", err, tt.kind)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if f.FileHash() != before {
				t.Errorf("the database file changed")
			}
		})
	}
	if info, _, _ := f.Svc.View(sid); info.MessageCount != 3 || info.Version != 3 {
		t.Errorf("after refusals: %d messages, version %d", info.MessageCount, info.Version)
	}
}

// BenchmarkApplyContextOperations10k is the pre-request hook on a
// 10k-message session sent back whole: every message recognised by
// digest, none appended, the effective thread converted for the reply.
func BenchmarkApplyContextOperations10k(b *testing.B) {
	path, sid := opstest.BenchFile(b, 10_000, 650, 100)
	svc := opstest.BenchService(b, path)
	ctx := context.Background()
	var msgs []json.RawMessage
	st := svc.Store()
	err := st.View(func(tx store.Tx) error {
		return tx.Messages(sid, 1, 10_000, func(m model.Message) error {
			raw, err := json.Marshal(map[string]any{"role": string(m.Role), "content": m.Content})
			msgs = append(msgs, raw)
			return err
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := svc.ApplyContextOperations(ctx, ops.ApplyOpsArgs{SessionID: sid, Messages: msgs})
		if err != nil || r.Recognized != 10_000 || r.Appended != 0 {
			b.Fatal(err, r.Recognized)
		}
	}
}
