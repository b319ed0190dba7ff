package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"weft/formats/internal/importtest"
	"weft/model"
)

// ReadMessages reads a list as Read reads the same messages as a JSON
// array: the same messages, parts and links.
func TestReadMessagesAsRead(t *testing.T) {
	for _, list := range []string{
		`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"type":"function","function":{"name":"g","arguments":"x"}}]},{"role":"tool","tool_call_id":"c1","content":"one"},{"role":"tool","content":"two"},{"role":"developer","content":"be brief"}]`,
		`[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},{"role":"assistant","content":"a\u00e9\n","name":"bo","refusal":"no"},{"role":"function","name":"f","content":"r"}]`,
		// A tool's output as a list of one text block (or one string),
		// read the quick way, as Read reads it the long way; and those
		// the quick way passes over.
		`[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"out \"q\" \u00e9\n<&>"}]},{"role":"tool","tool_call_id":"c1","content":["as a string"]},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"  "}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"input_text","text":"a","cache_control":{"type":"ephemeral"}}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":{"value":"assistants"}}]},{"role":"tool","tool_call_id":"c1","content":"  "}]`,
	} {
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(list), &raw); err != nil {
			t.Fatal(err)
		}
		got, parts, errs := ReadMessages(raw, 0)
		if errs != nil {
			t.Fatalf("errors %v", errs)
		}
		// The parts each message was made of are those it keeps as read
		// (none for text alone), and none of them is written out.
		for i := range got {
			if enc, kept := model.MarshalParts(parts[i]), model.MarshalParts(got[i].ReadParts); string(enc) != string(kept) || len(got[i].Parts) > 0 {
				t.Errorf("message %d: parts read %s, kept %s (and written %s)", i, enc, kept, got[i].Parts)
			}
		}
		// Read where they lie, they keep nothing of the messages.
		importtest.KeepsNothingOf(t, raw, got, parts)
		rec, problems := importtest.RunOK(t, Read, list)
		if len(problems) > 0 || len(rec.Threads) != 1 || len(rec.Threads[0].Messages) != len(got) {
			t.Fatalf("Read: problems %v, %d threads", problems, len(rec.Threads))
		}
		for i, m := range rec.Threads[0].Messages {
			// Read writes the parts out; ReadMessages keeps them as read.
			got[i].Parts, got[i].ReadParts = model.MarshalParts(got[i].ReadParts), nil
			if !reflect.DeepEqual(m.NewMessage, got[i]) {
				t.Errorf("message %d: ReadMessages %+v, Read %+v", i, got[i], m.NewMessage)
			}
		}
	}
}

// Every message that cannot be read is an error with its index.
func TestReadMessagesErrors(t *testing.T) {
	raw := []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"fine"}`),
		json.RawMessage(`{"role":"robot","content":"beep"}`),
		json.RawMessage(`{"role":"user","content":""}`),
		json.RawMessage(`"hi"`),
		json.RawMessage(`{"messages":[]}`),
		json.RawMessage(`{"role":5,"content":"x"}`),
	}
	msgs, _, errs := ReadMessages(raw, 0)
	if msgs != nil || len(errs) != 5 {
		t.Fatalf("messages %v, errors %v", msgs, errs)
	}
	for k, want := range []struct {
		index  int
		reason string
	}{{1, `role "robot" is not one of`}, {2, "it is empty"}, {3, "a string, not a message"}, {4, `a record with "messages", not a message`}, {5, `"role" is a number, not a string`}} {
		if errs[k].Index != want.index || !strings.Contains(errs[k].Reason, want.reason) {
			t.Errorf("error %d: %+v, want index %d, %q", k, errs[k], want.index, want.reason)
		}
	}
	if got := errs[0].Error(); got != `message 1: role "robot" is not one of system, developer, user, assistant, tool, function` {
		t.Errorf("Error() = %q", got)
	}
}

// A tool's output, a string or a list of one text block, is its part's
// text, and the content is it after the result's prefix; a list of more
// blocks joins their texts, and a blank output keeps its parts as they
// were read.
func TestToolOutputOfOneTextBlock(t *testing.T) {
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	for _, c := range []struct {
		content, text string
	}{
		{`"out \"q\" \u00e9\n<&>"`, "out \"q\" é\n<&>"},
		{`[{"type":"text","text":"out \"q\" \u00e9\n<&>"}]`, "out \"q\" é\n<&>"},
		{`["as a string"]`, "as a string"},
		{`[{"type":"input_text","text":"a","cache_control":{"type":"ephemeral"}}]`, "a"},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\n\nb"},
		{`[{"type":"text","text":{"value":"assistants"}}]`, "assistants"},
	} {
		tool := `{"role":"tool","tool_call_id":"c1","content":` + c.content + `}`
		msgs, parts, errs := ReadMessages([]json.RawMessage{json.RawMessage(call), json.RawMessage(tool)}, 0)
		if errs != nil {
			t.Fatalf("%s: %v", c.content, errs)
		}
		p := parts[1]
		if len(p) != 1 || p[0].Type != model.PartToolResult || p[0].Text != c.text || p[0].ToolCallID != "c1" || string(p[0].Raw) != tool {
			t.Errorf("%s: parts %+v, want a result of %q", c.content, p, c.text)
		}
		if msgs[1].Content != "[tool result] "+c.text {
			t.Errorf("%s: content %q", c.content, msgs[1].Content)
		}
	}
}
