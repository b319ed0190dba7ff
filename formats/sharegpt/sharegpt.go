// Package sharegpt reads ShareGPT conversations (the shape FastChat and
// LLaMA-Factory train on) as threads.
package sharegpt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"weft/formats"
	"weft/formats/internal/records"
	"weft/model"
)

// ShareGPT: a JSON array, JSON lines, or a single object, of records
// {"conversations": [{"from", "value"}, ...], "system"?, "tools"?, "id"?}
// (the shape FastChat and LLaMA-Factory train on). One record is one
// thread, read whole, one record at a time.
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
// for OpenAI records (see package openai). Message keys are
// "<ordinal>:<first 12 hex of the digest>", ordinal the turn's 1-based
// place in "conversations".

type sgRecord struct {
	Conversations json.RawMessage `json:"conversations"`
	System        json.RawMessage `json:"system"`
	ID            json.RawMessage `json:"id"`
	records.MediaLists
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
	emit    formats.Emitter
	probs   formats.Problems
	found   bool // a record with conversations was seen
	threads int
	seen    map[string]bool
}

const sgShape = `a JSON array (or JSON lines) of records {"conversations": [{"from", "value"}, ...]}`

// Read reads ShareGPT conversations, one thread per record.
func Read(r io.Reader, emit formats.Emitter) ([]formats.Problem, error) {
	sg := &sgReader{emit: emit, seen: map[string]bool{}}
	_, err := records.Each(r, &sg.probs, sg.value)
	if err == records.ErrEmpty {
		return nil, err
	}
	problems := sg.probs.Result()
	if err != nil {
		if _, ok := err.(*records.NotJSONError); ok {
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

func (sg *sgReader) value(v *records.Value) error {
	raw := v.Object(&sg.probs, "a record")
	if raw == nil {
		return nil
	}
	var rec sgRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		v.Problem(&sg.probs, formats.DescribeError(err)+"; skipped")
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
		v.Problem(&sg.probs, formats.DescribeJSON(raw)+`: a record without "conversations"; skipped`)
		return nil
	}
	sg.found = true
	turns := v.List(&sg.probs, "conversations", rec.Conversations)
	if len(turns) == 0 {
		return nil
	}

	th := &records.Thread{Emit: sg.emit, Source: formats.ShareGPT, Ordinal: v.Index,
		Meta: records.ExtraMeta(raw, "conversations", "system", "id", "images", "videos", "audios")}
	if key := sgID(rec.ID); key != "" {
		if sg.seen[key] {
			alt := key + "@" + strconv.Itoa(v.Index)
			v.Note(&sg.probs, fmt.Sprintf("id %q was used by an earlier record: this one is keyed %q", key, alt))
			key = alt
		}
		sg.seen[key] = true
		th.Key = key
	}
	media := rec.Media()

	if !formats.IsNull(rec.System) {
		if s, ok := formats.DecodeString(rec.System); !ok {
			v.Problem(&sg.probs, `its "system" is `+formats.DescribeJSON(rec.System)+", not a string; not imported")
		} else if strings.TrimSpace(s) != "" {
			if err := th.Add(0, model.NewMessage{Role: model.RoleSystem, Content: s}); err != nil {
				return err
			}
		}
	}
	err := v.EachObject(&sg.probs, turns, "turn", func(k int, where string, traw []byte) error {
		var t sgTurn
		if err := json.Unmarshal(traw, &t); err != nil {
			v.Problem(&sg.probs, where+formats.DescribeError(err)+"; skipped")
			return nil
		}
		nm, msg, ok := sg.convert(&t, traw, th, media)
		switch {
		case msg == "":
		case ok:
			v.Note(&sg.probs, where+msg) // kept, as text
		default:
			v.Skipped(&sg.probs, where, msg)
			return nil
		}
		return th.Add(k, nm)
	})
	if err != nil {
		return err
	}
	any, err := th.FinishRecord(v, &sg.probs, media)
	if any {
		sg.threads++
	}
	return err
}

// sgID is a record's id as a key: a string, or a number as written.
func sgID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if formats.IsNull(raw) {
		return ""
	}
	if s, ok := formats.DecodeString(raw); ok {
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
func (sg *sgReader) convert(t *sgTurn, traw json.RawMessage, th *records.Thread, media *records.Media) (nm model.NewMessage, msg string, ok bool) {
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
	if s, isString := formats.DecodeString(value); isString {
		text = s
	} else if !formats.IsNull(value) {
		text = string(formats.Compact(value))
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
			id := th.NewID()
			th.Called(id, c.call.Name)
			parts = append(parts, model.Part{Type: model.PartToolCall, ToolCallID: id,
				ToolName: c.call.Name, Input: formats.ToolInput(c.call.Arguments), Raw: c.raw})
		}
	case sgResultTurn:
		id, name := th.Answered("")
		parts = []model.Part{{Type: model.PartToolResult, ToolCallID: id, Text: text,
			Raw: append(json.RawMessage(nil), traw...)}}
		nm.Name = name
	}
	if parts == nil {
		if !media.Has(text) {
			if strings.TrimSpace(text) == "" {
				return model.NewMessage{}, records.Empty, false
			}
			nm.Content = text
			return nm, msg, true
		}
		parts = media.Split(text)
	}
	nm.Content = formats.RenderContent(parts)
	nm.Parts = model.MarshalParts(parts)
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
		out = append(out, sgCallRaw{c, formats.Compact(raw)})
	}
	return out
}
