package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"weft/formats/export"
	"weft/internal/tokens"
	"weft/model"
	"weft/ops"
	"weft/ops/tools/toolstest"
)

// toolThread stores a user message, an assistant message that is only a
// tool call (empty content, the call in its parts), the tool's result and
// an answer, as importers store them.
func toolThread(t *testing.T, f *toolstest.Fixture) string {
	t.Helper()
	sid := f.MustCall("create_session", `{"title":"tools"}`).(ops.CreateSessionResult).SessionID
	call := model.Part{Type: model.PartToolCall, ToolCallID: "toolu_01", ToolName: "Bash", Input: json.RawMessage(`{"command": "ls -la",  "timeout":30}`)}
	result := model.Part{Type: model.PartToolResult, ToolCallID: "toolu_01", Text: "total 0\ndrwxr-xr-x  2 me me 40 ."}
	msgs := []model.NewMessage{
		{Role: model.RoleUser, Content: "What is in this folder?"},
		{Role: model.RoleAssistant, Content: "", Parts: model.EncodeParts([]model.Part{call})},
		{Role: model.RoleTool, Content: result.Text, Parts: model.EncodeParts([]model.Part{result})},
		{Role: model.RoleAssistant, Content: "It is empty."},
	}
	if _, err := f.Svc.AppendMessages(context.Background(), ops.AppendMessagesArgs{SessionID: sid, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	return sid
}

// A thread that left weft through its own OpenAI export comes back
// through the pre-request hook recognised, message by message.
func TestTheHookRecognisesWeftsOwnExport(t *testing.T) {
	f := toolstest.New(t)
	sid := toolThread(t, f)
	_, items, err := f.Svc.ExportItems(sid, false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := export.WriteOpenAI(&buf, items); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	res, err := f.Svc.ApplyContextOperations(context.Background(), ops.ApplyOpsArgs{SessionID: sid, Messages: doc.Messages})
	if err != nil {
		t.Fatalf("weft's own export refused: %v\n%s", err, buf.Bytes())
	}
	if res.Recognized != 4 || res.Appended != 0 {
		t.Errorf("recognised %d, appended %d; want 4, 0", res.Recognized, res.Appended)
	}
}

// A message's tokens count its parts: a tool call with no text is not
// free.
func TestTokensCountParts(t *testing.T) {
	f := toolstest.New(t)
	sid := toolThread(t, f)
	stored, err := f.Svc.Messages(sid, []uint64{f.View(sid).Items[1].Seq})
	if err != nil {
		t.Fatal(err)
	}
	m := stored[0]
	if want := tokens.Count("Bash") + tokens.Count(`{"command":"ls -la","timeout":30}`); m.Tokens != want { // parts are stored compact
		t.Errorf("a tool call of %d tokens counts %d", want, m.Tokens)
	}
}
