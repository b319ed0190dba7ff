package claudecode

import (
	"encoding/json"
	"strings"
	"testing"

	"weft/formats"
	"weft/formats/internal/importtest"
	"weft/model"
)

func rawList(t *testing.T, s string) []json.RawMessage {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		t.Fatal(err)
	}
	return list
}

func TestReadMessagesReadsAMessagesAPIThread(t *testing.T) {
	t.Parallel()
	msgs := rawList(t, `[
		{"role":"user","content":"Find the TODOs."},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"grep it","signature":"sig"},
			{"type":"text","text":"Looking."},
			{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"TODO"}},
			{"type":"tool_use","id":"toolu_2","name":"Read","input":{"path":"a.go"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go:3: TODO"},
			{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"package a"}],"is_error":true},
			{"type":"text","text":"And fix them.","cache_control":{"type":"ephemeral"}}]},
		{"role":"assistant","content":[]},
		{"role":"user","content":[{"type":"text","text":"first"},{"type":"tool_result","tool_use_id":"toolu_1","content":"again"}]},
		{"role":"system","content":[{"type":"text","text":"# Environment"}]}
	]`)
	got, parts, from, errs := ReadMessages(msgs, 0)
	if errs != nil {
		t.Fatalf("errors: %v", errs)
	}
	// The parts each message was made of are those it keeps, as read
	// (ReadParts), and none for plain text.
	for i := range got {
		if enc, kept := formats.MessageParts(parts[i]), model.MarshalParts(got[i].ReadParts); string(enc) != string(kept) || len(got[i].Parts) > 0 {
			t.Errorf("message %d: parts read %s, kept %s (and written %s)", i, enc, kept, got[i].Parts)
		}
	}
	want := []struct {
		role model.Role
		name string
		from int
		text string
	}{
		{model.RoleUser, "", 0, "Find the TODOs."},
		{model.RoleAssistant, "", 1, "Looking.\n\n[tool call Grep] {\"q\":\"TODO\"}\n\n[tool call Read] {\"path\":\"a.go\"}"},
		{model.RoleTool, "Grep", 2, "[tool result] a.go:3: TODO"},
		{model.RoleTool, "Read", 2, "[tool error] package a"},
		{model.RoleUser, "", 2, "And fix them."},
		// the empty assistant message gives none; text before a result
		// keeps its place
		{model.RoleUser, "", 4, "first"},
		{model.RoleTool, "Grep", 4, "[tool result] again"},
		// a system turn is a system message
		{model.RoleSystem, "", 5, "# Environment"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k].Role != w.role || got[k].Name != w.name || from[k] != w.from || got[k].Content != w.text {
			t.Errorf("message %d: %s %q from %d %q, want %s %q from %d %q", k, got[k].Role, got[k].Name, from[k], got[k].Content, w.role, w.name, w.from, w.text)
		}
	}
	thinking := got[1].ReadParts
	if len(thinking) != 4 || thinking[0].Type != model.PartThinking || !strings.Contains(string(thinking[0].Raw), `"signature":"sig"`) {
		t.Errorf("the thinking block is not kept verbatim: %+v", thinking)
	}
	if p := got[4].ReadParts; len(p) != 1 || !strings.Contains(string(p[0].Raw), "cache_control") {
		t.Errorf("a block's Raw is not the block as sent: %+v", p)
	}

	// An answer read alone is the message it is in a later request.
	alone, _, _, errs := ReadMessages(msgs[1:2], 0)
	if errs != nil || len(alone) != 1 {
		t.Fatalf("answer: %v %v", alone, errs)
	}
	idOf := func(m model.NewMessage) model.Ident {
		return model.Identity(m.Role, m.Content, model.DecodeParts(m.Parts))
	}
	if idOf(alone[0]) != idOf(got[1]) {
		t.Error("the answer read alone has another identity than in the thread")
	}
}

func TestReadMessagesRefusesWhatIsNotAMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, msgs, reason string
	}{
		{"a string", `["hi"]`, "not a message object"},
		{"no role", `[{"content":"hi"}]`, `no "role"`},
		{"a tool message", `[{"role":"tool","content":"hi"}]`, `role "tool" is not user, assistant or system`},
		{"role of the wrong type", `[{"role":7,"content":"hi"}]`, `"role" is not a string`},
		{"content a number", `[{"role":"user","content":7}]`, "neither text nor a list of blocks"},
		{"a block that is no object", `[{"role":"user","content":["hi"]}]`, "content block 1 is not an object"},
		{"a text that is no string", `[{"role":"user","content":[{"type":"text","text":1}]}]`, `"text" is not a string`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs := rawList(t, `[{"role":"user","content":"fine"},`+strings.TrimPrefix(c.msgs, "["))
			got, _, from, errs := ReadMessages(msgs, 0)
			if got != nil || from != nil || len(errs) != 1 || errs[0].Index != 1 || !strings.Contains(errs[0].Reason, c.reason) {
				t.Fatalf("got %v %v %v, want one error at 1 saying %q", got, from, errs, c.reason)
			}
		})
	}
}

// What ReadMessages returns is the caller's to keep after the messages
// are written over (the proxy reads a request's body into a buffer that
// serves the next request): the parts' Raw and Input are copies of
// their own, though the blocks are read where they lie.
func TestReadMessagesKeepNothingOfTheMessages(t *testing.T) {
	t.Parallel()
	msgs := rawList(t, `[
		{"role":"user","content":[{"type":"text","text":"Find the TODOs.","cache_control":{"type":"ephemeral"}}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"grep it","signature":"sig"},
			{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"q":"TODO"}},
			{"type":"tool_use","id":"toolu_2","name":"Read","input":{"path":"a.png"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go:3: TODO\n\"quoted\" café"},
			{"type":"tool_result","tool_use_id":"toolu_1","content":"no such file","is_error":true},
			{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"an image"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]},
			{"type":"text","text":"And?"}]},
		{"role":"user","content":"   "}
	]`)
	got, parts, _, errs := ReadMessages(msgs, 0)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	importtest.KeepsNothingOf(t, msgs, got, parts)
	// And the parts are those kept, and the content is theirs rendered
	// (a tool's output made with its content, at once).
	for i := range got {
		if enc, kept := formats.MessageParts(parts[i]), model.MarshalParts(got[i].ReadParts); string(enc) != string(kept) {
			t.Errorf("message %d: parts %s, kept %s", i, enc, kept)
		}
		if len(parts[i]) > 0 && formats.RenderContent(parts[i]) != got[i].Content {
			t.Errorf("message %d: content %q, its parts rendered %q", i, got[i].Content, formats.RenderContent(parts[i]))
		}
	}
	if got[2].Content != "[tool result] a.go:3: TODO\n\"quoted\" café" || got[3].Content != "[tool error] no such file" {
		t.Errorf("tool results: %q, %q", got[2].Content, got[3].Content)
	}
}

// A large text block is decoded last, after what the blocks before it
// render as: the content is the same as the parts rendered, and its
// text the same as decoded on its own, whatever comes before or after
// it; a literal that is not a string is refused.
func TestReadMessagesDecodesALargeTextOnce(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("pasted \"text\" é <&>\n", 4000) // 88 KB
	q, _ := json.Marshal(big)
	cases := map[string]string{
		"after a reminder": `{"role":"user","content":[{"type":"text","text":"<system-reminder>Be brief.</system-reminder>"},{"type":"text","text":` + string(q) + `,"cache_control":{"type":"ephemeral"}}]}`,
		"alone":            `{"role":"user","content":[{"type":"text","text":` + string(q) + `}]}`,
		"before a call":    `{"role":"assistant","content":[{"type":"text","text":` + string(q) + `},{"type":"tool_use","id":"t1","name":"Read","input":{}}]}`,
		"before a blank":   `{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":` + string(q) + `},{"type":"text","text":"  "}]}`,
		"two large":        `{"role":"user","content":[{"type":"text","text":` + string(q) + `},{"type":"text","text":` + string(q) + `}]}`,
		"after a result":   `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":` + string(q) + `}]}`,
		"after a thinking": `{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":` + string(q) + `}]}`,
	}
	for name, msg := range cases {
		msgs, parts, _, errs := ReadMessages([]json.RawMessage{json.RawMessage(msg)}, 0)
		if errs != nil {
			t.Fatalf("%s: %v", name, errs)
		}
		m := msgs[len(msgs)-1]
		ps := parts[len(parts)-1]
		if got := formats.RenderContent(ps); m.Content != got {
			t.Errorf("%s: content %.60q…, the parts render %.60q…", name, m.Content, got)
		}
		found := false
		for _, p := range ps {
			found = found || p.Type == model.PartText && p.Text == big
		}
		if !found {
			t.Errorf("%s: no part holds the large text", name)
		}
	}
	// A literal that is not a JSON string is refused, and its part is
	// left as it was (the message is checked as JSON before, so only
	// decodeLarge itself meets one).
	rec := &ccRecord{parts: []model.Part{{Type: model.PartText, Raw: json.RawMessage(`{}`)}}}
	if rec.decodeLarge(0, []byte(`"`+strings.Repeat("x", 70000)+`\q"`)) || rec.parts[0].Text != "" || rec.content != "" {
		t.Errorf("a large text that is not a string was decoded: %+v", rec)
	}
}
