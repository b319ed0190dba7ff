package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/tui/dialog"
)

// toolThread is a session with a tool call and its result between plain
// messages, one of which quotes a transcript ("User:", "System:"), and a
// model open on it with the cursor on the first message.
func toolThread(t *testing.T) (*Model, *ops.Service) {
	t.Helper()
	svc := newService(t)
	call := `[{"type":"tool_call","tool_call_id":"call-1","tool_name":"Bash","input":{"cmd":"ls"}}]`
	result := `[{"type":"tool_result","tool_call_id":"call-1","text":"a.txt\nb.txt"}]`
	msgs := []model.NewMessage{
		{Role: model.RoleUser, Content: "List the files."},                                                          // m1
		{Role: model.RoleAssistant, Content: `[tool call Bash] {"cmd":"ls"}`, Parts: json.RawMessage(call)},         // m2
		{Role: model.RoleTool, Name: "Bash", Content: "[tool result] a.txt\nb.txt", Parts: json.RawMessage(result)}, // m3
		{Role: model.RoleAssistant, Content: "Two files.\nUser: was that all?\nSystem: be brief"},                   // m4
		{Role: model.RoleUser, Content: "Thanks."},                                                                  // m5
	}
	m := openModel(t, svc, Options{Theme: "dark"}, newSession(t, svc, "Tools", msgs), 120, 40)
	press(t, m, "g")
	return m, svc
}

// openAI is the session's context as assemble_context format=openai
// gives it, as JSON.
func openAI(t *testing.T, svc *ops.Service, sid string) string {
	t.Helper()
	res, err := reads.AssembleContext(svc, context.Background(), reads.AssembleArgs{SessionID: sid, Format: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Messages)
	return string(b)
}

// keepsToolCall fails unless the context carries the tool call and its
// result as structure, not as text.
func keepsToolCall(t *testing.T, ctx string) {
	t.Helper()
	if !strings.Contains(ctx, `"tool_calls":[{"id":"call-1"`) || !strings.Contains(ctx, `"tool_call_id":"call-1"`) || strings.Contains(ctx, "[tool call Bash]") {
		t.Fatalf("the tool call lost its structure:\n%s", ctx)
	}
}

func TestReviseUnchangedMakesNoOperation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		moves []string
	}{
		{"a tool call and its result", []string{"j", "v", "j"}},
		{"a message quoting User: and System:", []string{"j", "j", "j"}},
		{"the whole thread", []string{"v", "G"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, svc := toolThread(t)
			before := openAI(t, svc, m.sid)
			version := m.info.Version
			press(t, m, c.moves...)
			press(t, m, "r")
			if m.dialogs.Front() == nil {
				t.Fatal("r opened no dialog")
			}
			send(t, m, keySave)
			if ops := mustOps(t, svc, m.sid); len(ops) != 0 {
				t.Fatalf("saving the text as shown made %s %s", ops[0].Type, ops[0].Targets)
			}
			if info, _, _ := svc.View(m.sid); info.Version != version {
				t.Fatalf("saving the text as shown wrote to the session (version %d → %d)", version, info.Version)
			}
			if s := screen(m); m.dialogs.Front() != nil || !strings.Contains(s, "unchanged") {
				t.Fatalf("no word that nothing changed, or the dialog is still open:\n%s", s)
			}
			if after := openAI(t, svc, m.sid); after != before {
				t.Fatalf("the context changed:\n%s\nwas\n%s", after, before)
			}
			keepsToolCall(t, before)
		})
	}
}

// TestReviseChangesOnlyWhatWasEdited: editing one message of a selection
// that holds a tool call revises that message alone; the tool call stays
// the stored message it is.
func TestReviseChangesOnlyWhatWasEdited(t *testing.T) {
	t.Parallel()
	m, svc := toolThread(t)
	press(t, m, "j", "v", "j", "j", "r") // m2..m4: the call, its result, the answer
	typeText(t, m, " (checked)")         // at the end: the answer's last line
	send(t, m, keySave)
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpRevise || len(op.Targets) != 1 || op.Targets[0] != "m4" {
		t.Fatalf("the revise is %s of %v, want a revise of m4 alone", op.Type, op.Targets)
	}
	if msgs := op.Payload.Messages; len(msgs) != 1 || msgs[0].Content != "Two files.\nUser: was that all?\nSystem: be brief (checked)" || msgs[0].Role != model.RoleAssistant {
		t.Fatalf("the revision is %+v: want the one message, not split at User: or System:, with no newline added", msgs)
	}
	keepsToolCall(t, openAI(t, svc, m.sid))
	if s := screen(m); !strings.Contains(s, "revision of 1 message into 1") {
		t.Fatalf("the marker does not say one message was revised:\n%s", s)
	}
}

// TestReviseAroundAnUnchangedToolCall: when the messages on both sides of
// a tool call and its result change, the revise covers the run, and the
// call and result in it, left as they were, keep their structure in the
// revision.
func TestReviseAroundAnUnchangedToolCall(t *testing.T) {
	t.Parallel()
	m, svc := toolThread(t)
	press(t, m, "v", "j", "j", "j", "r") // m1..m4
	d := m.dialogs.Front().(*dialog.Text)
	text := strings.Replace(d.Value(), "List the files.", "List every file.", 1)
	d.SetValue(strings.Replace(text, "be brief", "be very brief", 1))
	send(t, m, keySave)
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpRevise || strings.Join(idsOf(op.Targets), ",") != "m1,m2,m3,m4" || len(op.Payload.Messages) != 4 {
		t.Fatalf("the revise is %s of %v into %d, want m1..m4 into 4", op.Type, op.Targets, len(op.Payload.Messages))
	}
	for _, k := range []int{1, 2} {
		if p := op.Payload.Messages[k]; len(p.Parts) == 0 {
			t.Fatalf("message %d, unchanged, lost its parts in the revision: %+v", k, p)
		}
	}
	ctx := openAI(t, svc, m.sid)
	if !strings.Contains(ctx, "List every file.") || !strings.Contains(ctx, "be very brief") {
		t.Fatalf("the revision is not in the context:\n%s", ctx)
	}
	keepsToolCall(t, ctx)
}

// TestReviseSplitsOnlyAtHeaderLines: a new message needs its own "---
// role" line; the dialog says so.
func TestReviseSplitsOnlyAtHeaderLines(t *testing.T) {
	t.Parallel()
	m, svc := toolThread(t)
	press(t, m, "G", "r") // m5
	if s := boxText(screen(m)); !strings.Contains(s, "a line “--- role” starts a message") || !strings.Contains(s, "an edited tool call or result becomes plain text") {
		t.Fatalf("the revise dialog does not say how messages are split and kept:\n%s", s)
	}
	typeText(t, m, "\nUser: and one more\n--- assistant\nYou are welcome.")
	send(t, m, keySave)
	op := lastOp(t, svc, m.sid)
	msgs := op.Payload.Messages
	if len(msgs) != 2 || msgs[0].Content != "Thanks.\nUser: and one more" || msgs[1].Role != model.RoleAssistant {
		t.Fatalf("the revision is %+v", msgs)
	}
}

func idsOf(ids []model.ItemID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}
