package export

import (
	"encoding/json"
	"testing"

	"weft/formats"
	"weft/model"
)

// With system turns, a system message after the thread began (a digest's
// summary, an agent's mid-conversation system turn) stays a message of
// role system, as the Messages API now takes them; the leading ones are
// still the system prompt, and a call is answered across a system turn.
func TestAnthropicSystemTurns(t *testing.T) {
	call := model.Part{Type: model.PartToolCall, ToolCallID: "toolu_1", ToolName: "Grep", Input: json.RawMessage(`{"q":"x"}`)}
	res := model.Part{Type: model.PartToolResult, ToolCallID: "toolu_1", Text: "a.go:3"}
	items := []formats.Item{
		{ID: "s1", Role: model.RoleSystem, Content: "Be brief."},
		{ID: "m1", Role: model.RoleUser, Content: "Find x"},
		{ID: "m2", Role: model.RoleSystem, Content: "# Environment"},
		{ID: "m3", Role: model.RoleAssistant, Parts: []model.Part{call}},
		{ID: "op/0", Role: model.RoleSystem, Content: "Summary of the search.", Synthetic: true, OpType: model.OpDigest},
		{ID: "m4", Role: model.RoleTool, Parts: []model.Part{res}},
		{ID: "m5", Role: model.RoleAssistant, Content: "Found."},
	}
	body, rep := AnthropicWith(items, AnthropicOptions{SystemTurns: true})
	got, _ := json.Marshal(body)
	want := `{"system":"Be brief.","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Find x"}]},` +
		`{"role":"system","content":[{"type":"text","text":"# Environment"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"x"}}]},` +
		`{"role":"system","content":[{"type":"text","text":"Summary of the search."}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go:3"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Found."}]}]}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(rep.Folded) != 0 {
		t.Errorf("folded %v", rep.Folded)
	}
	// Without them, as before: user text "[system] ...".
	plain, _ := Anthropic(items)
	if b, _ := json.Marshal(plain); string(b) == want {
		t.Error("the default changed")
	}
}
