package codex

import (
	"encoding/json"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/model"
)

func rawItems(t *testing.T, s string) []json.RawMessage {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// Every item is one message, in its place: those a rollout's reader
// passes over too, verbatim.
func TestReadItemsOneMessageAnItem(t *testing.T) {
	items := rawItems(t, `[
		{"type":"message","role":"developer","content":[{"type":"input_text","text":"Be careful."}]},
		{"role":"user","content":"Find the TODOs"},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"Look in \"src\"","cache":true}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"one"},{"type":"input_text","text":"two"}]},
		{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"opaque"},
		{"type":"reasoning","id":"rs_2","summary":[{"type":"summary_text","text":"Grep it."}],"encrypted_content":"opaque"},
		{"type":"function_call","id":"fc_1","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"grep TODO\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"a.go:3: TODO"},
		{"type":"function_call_output","call_id":"call_0","output":"from an earlier request"},
		{"type":"item_reference","id":"msg_9"},
		{"type":"message","role":"assistant","content":[]}
	]`)
	msgs, parts, errs := ReadItems(items, 0)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(msgs) != len(items) || len(parts) != len(msgs) {
		t.Fatalf("%d messages and %d parts for %d items", len(msgs), len(parts), len(items))
	}
	// The parts each message was made of are those its Parts encode.
	for i := range msgs {
		if enc, kept := formats.MessageParts(parts[i]), model.MarshalParts(msgs[i].ReadParts); string(enc) != string(kept) || len(msgs[i].Parts) > 0 {
			t.Errorf("item %d: parts read %s, kept %s (and written %s)", i, enc, kept, msgs[i].Parts)
		}
	}
	want := []struct {
		role    model.Role
		content string
		part    model.PartType
	}{
		// Plain text (a string, or a lone block of its text alone): no
		// parts, as a Chat Completions message of a string has none.
		{model.RoleSystem, "Be careful.", ""},
		{model.RoleUser, "Find the TODOs", ""},
		// A block that says more, or more than one: each kept.
		{model.RoleUser, `Look in "src"`, model.PartText},
		{model.RoleUser, "one\n\ntwo", model.PartText},
		{model.RoleAssistant, "[reasoning]", model.PartThinking},
		{model.RoleAssistant, "", model.PartThinking},
		{model.RoleAssistant, `[tool call exec_command] {"cmd":"grep TODO"}`, model.PartToolCall},
		{model.RoleTool, "[tool result] a.go:3: TODO", model.PartToolResult},
		{model.RoleTool, "[tool result] from an earlier request", model.PartToolResult},
		{model.RoleAssistant, "[item_reference]", model.PartOther},
		{model.RoleAssistant, "[message]", model.PartOther},
	}
	for i, w := range want {
		m := msgs[i]
		parts := m.ReadParts
		if m.Role != w.role || m.Content != w.content || (w.part == "") != (len(parts) == 0) || len(parts) > 0 && parts[0].Type != w.part {
			t.Errorf("item %d: %s %q %+v, want %s %q %s", i, m.Role, m.Content, parts, w.role, w.content, w.part)
		}
	}
	if p := msgs[7].ReadParts[0]; p.ToolCallID != "call_1" || msgs[7].Name != "exec_command" {
		t.Errorf("the output is not linked to its call: %+v %q", p, msgs[7].Name)
	}
	if p := msgs[8].ReadParts[0]; p.ToolCallID != "call_0" {
		t.Errorf("an output whose call came before keeps no call_id: %+v", p)
	}
	if raw := string(msgs[9].ReadParts[0].Raw); raw != `{"type":"item_reference","id":"msg_9"}` {
		t.Errorf("a kind of item weft does not know is not kept verbatim: %s", raw)
	}
}

func TestReadItemsRefusesWhatIsNoItem(t *testing.T) {
	for _, c := range []struct{ items, want string }{
		{`[7]`, "a number, not an item object"},
		{`[{"call_id":"c"}]`, `no "type"`},
		{`[{"type":"message","role":"robot","content":"x"}]`, `role "robot"`},
		{`[{"type":"message","role":1,"content":"x"}]`, "not an item"},
		{`[{"role":"user","content":7}]`, "content"},
		{`[{"type":"function_call","call_id":"c","arguments":"{}"}]`, "without a tool name"},
	} {
		msgs, _, errs := ReadItems(rawItems(t, c.items), 0)
		if msgs != nil || len(errs) != 1 || errs[0].Index != 0 || !strings.Contains(errs[0].Reason, c.want) {
			t.Errorf("%s: %v %v, want an error saying %q", c.items, msgs, errs, c.want)
		}
	}
}

// What ReadItems returns is the caller's to keep after the items are
// written over (the proxy reads a request's body into a buffer that
// serves the next request): the parts' Raw and Input point into their
// encoding, not into the items, though the items are read where they
// are.
func TestReadItemsKeepNothingOfTheItems(t *testing.T) {
	items := rawItems(t, `[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"Look in \"src\"","cache":true}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"plain"}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"one","annotations":[]},{"type":"refusal","refusal":"no"}]},
		{"type":"function_call","call_id":"c1","name":"view","arguments":"{\"path\":\"a.png\"}"},
		{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"seen"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]},
		{"type":"message","role":"user","content":"   "}
	]`)
	msgs, parts, errs := ReadItems(items, 0)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	importtest.KeepsNothingOf(t, items, msgs, parts)
}

// A function_call_output of a list of one text block is read as one of
// a string: its text decoded once, the content it after the result's
// prefix; a list of more blocks joins their texts.
func TestReadItemsOutputOfOneTextBlock(t *testing.T) {
	call := `{"type":"function_call","call_id":"c1","name":"read","arguments":"{}"}`
	for _, c := range []struct{ output, text string }{
		{`"out \"q\" \u00e9\n<&>"`, "out \"q\" é\n<&>"},
		{`[{"type":"input_text","text":"out \"q\" \u00e9\n<&>"}]`, "out \"q\" é\n<&>"},
		{`[{"type":"output_text","text":"a","annotations":[]}]`, "a"},
		{`[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]`, "a\nb"},
	} {
		out := `{"type":"function_call_output","call_id":"c1","output":` + c.output + `}`
		msgs, parts, errs := ReadItems([]json.RawMessage{json.RawMessage(call), json.RawMessage(out)}, 0)
		if errs != nil {
			t.Fatalf("%s: %v", c.output, errs)
		}
		p := parts[1]
		if len(p) != 1 || p[0].Type != model.PartToolResult || p[0].Text != c.text || p[0].ToolCallID != "c1" {
			t.Errorf("%s: parts %+v, want a result of %q", c.output, p, c.text)
		}
		if msgs[1].Content != "[tool result] "+c.text {
			t.Errorf("%s: content %q", c.output, msgs[1].Content)
		}
	}
}
