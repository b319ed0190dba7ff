package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"weft/model"
)

// ShareGPT: a JSON array, JSON lines, or a single object, of records
// {"conversations": [{"from", "value"}, ...], "system"?, "tools"?, "id"?}
// (the shape FastChat and LLaMA-Factory train on). One record is one
// thread, read whole, one record at a time (see oiEachValue).
//
//   - from human, user: user; gpt, assistant, chatgpt, bing, bard, model:
//     assistant; system: system (case does not matter).
//   - function_call (tool_call): an assistant message with a tool call;
//     the value is a JSON string {"name", "arguments"} (or a list of
//     them). Each call gets the ID "call_<k>", k counting the calls of
//     the record. A value that is not such JSON is kept as text (a
//     Problem says so).
//   - observation, tool, function (function_response, tool_response): a
//     tool message with a tool_result part, linked to the oldest call of
//     the record still waiting for its result (its ID, and Name = its
//     tool).
//   - a turn with role/content instead of from/value is read the same way.
//   - a value that is not a string is kept as compact JSON text.
//
// A record-level "system" string is a leading system message (ordinal 0);
// "id" is the thread's key (a second record with an id already seen is
// keyed "<id>@<place in the file>", and a Problem says so); without an id
// the key is derived from the content as for OpenAI messages. Media
// placeholders (<image> with "images", ...) and other record keys are as
// for OpenAI records (see openai.go). Message keys are
// "<ordinal>:<first 12 hex of the digest>", ordinal the turn's 1-based
// place in "conversations".

type sgRecord struct {
	Conversations json.RawMessage `json:"conversations"`
	System        json.RawMessage `json:"system"`
	ID            json.RawMessage `json:"id"`
	Images        json.RawMessage `json:"images"`
	Videos        json.RawMessage `json:"videos"`
	Audios        json.RawMessage `json:"audios"`
	// other formats
	Messages    json.RawMessage `json:"messages"`
	Role        json.RawMessage `json:"role"`
	Mapping     json.RawMessage `json:"mapping"`
	CurrentNode json.RawMessage `json:"current_node"`
}

type sgTurn struct {
	From    string          `json:"from"`
	Value   json.RawMessage `json:"value"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type sgCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type sgReader struct {
	emit    Emitter
	probs   problemList
	found   bool // a record with conversations was seen
	threads int
	seen    map[string]bool
}

const sgShape = `a JSON array (or JSON lines) of records {"conversations": [{"from", "value"}, ...]}`

// ReadShareGPT reads ShareGPT conversations, one thread per record.
func ReadShareGPT(r io.Reader, emit Emitter) ([]Problem, error) {
	sg := &sgReader{emit: emit, seen: map[string]bool{}}
	_, err := oiEachValue(r, &sg.probs, sg.value)
	if err == errOIEmpty {
		return nil, err
	}
	problems := sg.probs.result()
	if err != nil {
		if _, ok := err.(*oiNotJSON); ok {
			err = fmt.Errorf("not a ShareGPT file: %w; it should be %s", err, sgShape)
		}
		return problems, err
	}
	if sg.threads == 0 {
		what := "no conversation could be imported"
		if !sg.found {
			what = `no record with "conversations" was found`
		}
		return problems, fmt.Errorf("not a ShareGPT file: %s; it should be %s", what, sgShape)
	}
	return problems, nil
}

func (sg *sgReader) value(v *oiValue) error {
	raw := v.raw
	if len(raw) == 0 || raw[0] != '{' {
		if json.Valid(raw) {
			v.problem(&sg.probs, describeJSON(raw)+", not a record; skipped")
		} else {
			v.problem(&sg.probs, "not valid JSON; skipped")
		}
		return nil
	}
	var rec sgRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		v.problem(&sg.probs, oiJSONErr(err)+"; skipped")
		return nil
	}
	if rec.Conversations == nil {
		if !sg.found {
			switch {
			case rec.Mapping != nil || rec.CurrentNode != nil:
				return errors.New(`this is a ChatGPT export (conversations with a "mapping"), not ShareGPT: import it with --format chatgpt`)
			case rec.Messages != nil || rec.Role != nil:
				return errors.New(`this is a file of OpenAI-style messages ("messages", "role", "content"), not ShareGPT: import it with --format openai`)
			}
		}
		v.problem(&sg.probs, describeJSON(raw)+`: a record without "conversations"; skipped`)
		return nil
	}
	sg.found = true
	conv := bytes.TrimSpace(rec.Conversations)
	if len(conv) == 0 || conv[0] != '[' {
		v.problem(&sg.probs, `its "conversations" is `+describeJSON(conv)+", not a list; skipped")
		return nil
	}
	var turns []json.RawMessage
	if err := json.Unmarshal(conv, &turns); err != nil {
		v.problem(&sg.probs, `its "conversations": `+oiJSONErr(err)+"; skipped")
		return nil
	}
	if len(turns) == 0 {
		v.note(&sg.probs, `its "conversations" list is empty; skipped`)
		return nil
	}

	th := &oiThread{emit: sg.emit, source: ShareGPT, ordinal: v.index,
		meta: oiExtraMeta(raw, "conversations", "system", "id", "images", "videos", "audios")}
	if key := sgID(rec.ID); key != "" {
		if sg.seen[key] {
			alt := key + "@" + strconv.Itoa(v.index)
			v.note(&sg.probs, fmt.Sprintf("id %q was used by an earlier record: this one is keyed %q", key, alt))
			key = alt
		}
		sg.seen[key] = true
		th.key = key
	}
	media := oiReadMedia(rec.Images, rec.Videos, rec.Audios)

	if !oiNull(rec.System) {
		if s, ok := oiString(bytes.TrimSpace(rec.System)); !ok {
			v.problem(&sg.probs, `its "system" is `+describeJSON(rec.System)+", not a string; not imported")
		} else if strings.TrimSpace(s) != "" {
			if err := th.add(0, model.NewMessage{Role: model.RoleSystem, Content: s}); err != nil {
				return err
			}
		}
	}
	for i, traw := range turns {
		where := "turn " + strconv.Itoa(i+1) + ": "
		traw = bytes.TrimSpace(traw)
		if len(traw) == 0 || traw[0] != '{' {
			v.problem(&sg.probs, where+describeJSON(traw)+", not a turn; skipped")
			continue
		}
		var t sgTurn
		if err := json.Unmarshal(traw, &t); err != nil {
			v.problem(&sg.probs, where+oiJSONErr(err)+"; skipped")
			continue
		}
		nm, msg, ok := sg.convert(&t, traw, th, media)
		switch {
		case msg == "":
		case ok:
			v.note(&sg.probs, where+msg) // kept, as text
		case msg == oiEmpty:
			v.note(&sg.probs, where+msg+"; skipped") // nothing lost
			continue
		default:
			v.problem(&sg.probs, where+msg+"; skipped")
			continue
		}
		if err := th.add(i+1, nm); err != nil {
			return err
		}
	}
	if left := media.left(); left != "" {
		v.problem(&sg.probs, left)
	}
	any, err := th.finish()
	if any {
		sg.threads++
	} else if err == nil {
		v.note(&sg.probs, "no message to import; skipped")
	}
	return err
}

// sgID is a record's id as a key: a string, or a number as written.
func sgID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if oiNull(raw) {
		return ""
	}
	if s, ok := oiString(raw); ok {
		return strings.TrimSpace(s)
	}
	if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		return string(raw)
	}
	return ""
}

type sgKind uint8

const (
	sgText sgKind = iota
	sgCallTurn
	sgResultTurn
)

// sgRole maps a speaker to a role and the kind of message it makes.
func sgRole(from string) (model.Role, sgKind, bool) {
	switch strings.ToLower(strings.TrimSpace(from)) {
	case "human", "user":
		return model.RoleUser, sgText, true
	case "gpt", "assistant", "chatgpt", "bing", "bard", "model":
		return model.RoleAssistant, sgText, true
	case "system":
		return model.RoleSystem, sgText, true
	case "function_call", "tool_call":
		return model.RoleAssistant, sgCallTurn, true
	case "observation", "tool", "function", "function_response", "tool_response":
		return model.RoleTool, sgResultTurn, true
	}
	return "", 0, false
}

// convert makes a message of a turn. msg says what went wrong: with ok
// the message is still imported (msg is a note), else it is skipped.
func (sg *sgReader) convert(t *sgTurn, traw json.RawMessage, th *oiThread, media *oiMedia) (nm model.NewMessage, msg string, ok bool) {
	from, value := t.From, t.Value
	if from == "" {
		from = t.Role
	}
	if value == nil {
		value = t.Content
	}
	role, kind, known := sgRole(from)
	if !known {
		if from == "" {
			return nm, `it has no "from"`, false
		}
		return nm, fmt.Sprintf("from %q is not one of human, gpt, system, function_call, observation (or user, assistant, tool)", from), false
	}
	value = bytes.TrimSpace(value)
	var text string
	if s, isString := oiString(value); isString {
		text = s
	} else if !oiNull(value) {
		text = string(oiCompact(value))
	}
	nm.Role = role
	var parts []model.Part
	switch kind {
	case sgCallTurn:
		calls := sgCalls(text)
		if calls == nil {
			msg = "function_call value is not JSON {\"name\", \"arguments\"}; kept as text"
			break
		}
		for _, c := range calls {
			id := th.newCallID()
			th.called(id, c.call.Name)
			parts = append(parts, model.Part{Type: model.PartToolCall, ToolCallID: id,
				ToolName: c.call.Name, Input: oiInput(c.call.Arguments), Raw: c.raw})
		}
	case sgResultTurn:
		id, name := th.answered("")
		parts = []model.Part{{Type: model.PartToolResult, ToolCallID: id, Text: text,
			Raw: append(json.RawMessage(nil), traw...)}}
		nm.Name = name
	}
	if parts == nil {
		if !media.has(text) {
			if strings.TrimSpace(text) == "" {
				return model.NewMessage{}, oiEmpty, false
			}
			nm.Content = text
			return nm, msg, true
		}
		parts = media.split(text)
	}
	nm.Content = RenderContent(parts)
	nm.Parts = oiEncodeParts(parts)
	return nm, msg, true
}

type sgCallRaw struct {
	call sgCall
	raw  json.RawMessage
}

// sgCalls reads a function_call value: one call or a list of calls,
// each with a name; nil when it is not that.
func sgCalls(text string) []sgCallRaw {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	var raws []json.RawMessage
	switch t[0] {
	case '{':
		raws = []json.RawMessage{json.RawMessage(t)}
	case '[':
		if json.Unmarshal([]byte(t), &raws) != nil || len(raws) == 0 {
			return nil
		}
	default:
		return nil
	}
	out := make([]sgCallRaw, 0, len(raws))
	for _, raw := range raws {
		var c sgCall
		if json.Unmarshal(raw, &c) != nil || strings.TrimSpace(c.Name) == "" {
			return nil
		}
		out = append(out, sgCallRaw{c, oiCompact(raw)})
	}
	return out
}
