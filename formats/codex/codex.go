// Package codex reads Codex CLI rollout files
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl) as threads.
package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	sjson "github.com/segmentio/encoding/json"

	"weft/formats"
	"weft/model"
)

// Codex CLI rollout JSONL (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl):
// one file is one session, one line one record
// {"timestamp", "type", "payload"}. What this importer does with each
// type:
//
//   - session_meta: the thread's key (payload.id) and time
//     (payload.timestamp); its cwd, originator and cli_version go in the
//     meta of the first message. The first one counts (a resumed or forked
//     session repeats it).
//   - turn_context: the model named there goes in the meta of the
//     assistant messages after it.
//   - response_item: what was sent to and received from the model, one
//     message per record (never merged, so a key names the same message
//     however far the file had grown when it was read):
//     message (user, assistant; developer and system are system) with
//     input_text/output_text text parts and input_image image parts;
//     reasoning, an assistant message with a thinking part holding the
//     summary (the reasoning text when there is no summary; the encrypted
//     content stays in Raw only, and a reasoning with no text is skipped);
//     function_call, custom_tool_call, local_shell_call and
//     web_search_call, an assistant message with a tool call (arguments
//     kept as the input when they are JSON, else the string JSON-encoded;
//     a call without arguments gets {}); function_call_output and
//     custom_tool_call_output, a tool message linked by call_id to the
//     most recent call before it with that id that no output answered
//     yet (Name = the call's tool): a rollout may use an id again, and a
//     call left open when another with its id follows was abandoned. A
//     result with no such call keeps its call_id in meta only. Output written as
//     {"output", "metadata": {"exit_code"}} is unwrapped, and a non-zero
//     exit code, or success false, makes it an error result. Other
//     response items (ghost snapshots, ...) are skipped.
//   - event_msg: what the CLI showed. user_message, agent_message and
//     agent_reasoning repeat response items; each is matched, by role and
//     text, against the response items of the file, and only one that
//     matches none (an older or partial rollout) is imported, as a message
//     of its own. Other events (token counts, task start and end, command
//     output) are skipped. (Codex writes an event and its response item a
//     millisecond apart; a file read between the two keeps the event, and
//     a re-import of the grown file then adds the response item too.)
//   - compacted: a digest, with its summary, over the messages since the
//     previous compaction (the start of the file for the first one); with
//     no message before it, the summary is imported as a system message.
//   - any other type: ignored.
//
// Rollouts written before records had a type wrapper (a first line with
// the session's id and timestamp, then response items as they are) are
// read the same way, without times.
//
// Keys are "L<line>", the line of the record; rollout files only grow.
// Without a session_meta id, the thread is keyed by a digest of the first
// line (a Problem says so). A line that is not JSON, or a record of a
// known type that cannot be read, is a Problem; a file that starts with a
// JSON list (a JSON document, not JSON lines) is refused at once.
// The thread's title is the first user message that is not context Codex
// adds itself (environment, instructions).

// cxDefaultSummary stands for a compaction whose summary is missing.
const cxDefaultSummary = "Conversation compacted (the summary is missing from the rollout)"

type cxLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// legacy session line
	ID         string `json:"id"`
	RecordType string `json:"record_type"`
}

// cxPayload is a response item.
type cxPayload struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Summary   json.RawMessage `json:"summary"`
	Action    json.RawMessage `json:"action"`
	ID        string          `json:"id"`
}

// cxBlock is a content block's fields; its text and refusal are
// decoded only when they are read (a block may hold megabytes), and
// point into the block meanwhile.
type cxBlock struct {
	Type     json.RawMessage `json:"type"`
	Text     json.RawMessage `json:"text"`
	Refusal  json.RawMessage `json:"refusal"`
	ImageURL json.RawMessage `json:"image_url"`
}

// str is a block's string field: "" when absent or null, false when it
// is not a string (the block is then not read as one).
func (b *cxBlock) str(v json.RawMessage) (string, bool) {
	if formats.IsNull(v) {
		return "", true
	}
	return formats.DecodeString(v)
}

type cxKind uint8

const (
	cxMessage    cxKind = iota // a response item
	cxEvent                    // an event_msg that may repeat a response item
	cxCompaction               // a compacted record
)

// cxEntry is a record that may become a message, kept until the whole
// file is read.
type cxEntry struct {
	kind   cxKind
	line   int
	at     time.Time
	role   model.Role
	parts  []model.Part
	meta   map[string]string
	callID string // of a tool result, linked when emitted
	// match is what an event and the response item it repeats share.
	match string
	// content is the content its parts render, when it was made with
	// them ("": made from them in build): a tool's output, decoded once
	// after the content's prefix, is its part's text.
	content string
}

type cxReader struct {
	// items: reading a request's items (ReadItems), where an output
	// keeps its call_id even when its call is not among them (it was in
	// an earlier request).
	items bool
	// lend is ReadItems' (formats.KeepParts).
	lend int
	// built are the parts each message build made was made of.
	built    [][]model.Part
	problems formats.Problems
	entries  []cxEntry
	lines    int
	key      string
	keyLine  []byte // the first line, for a key when there is no session id
	created  time.Time
	session  map[string]string
	model    string
}

// Read reads a Codex CLI rollout file as one thread.
func Read(r io.Reader, emit formats.Emitter) ([]formats.Problem, error) {
	cx := &cxReader{}
	err := formats.EachLine(r, cx.readLine, func(n int) {
		cx.lines++
		cx.problems.Add(n, "line longer than 64 MB")
	})
	if err != nil {
		return cx.problems.Result(), err
	}
	if cx.lines == 0 {
		return cx.problems.Result(), errors.New("empty file")
	}
	msgs, digests := cx.build()
	if len(msgs) == 0 {
		return cx.problems.Result(), errors.New("no Codex messages found: is this a Codex CLI rollout (~/.codex/sessions/…/rollout-*.jsonl)?")
	}
	key := cx.key
	if key == "" {
		sum := sha256.Sum256(cx.keyLine)
		key = "derived-" + hex.EncodeToString(sum[:8])
		cx.problems.Note(0, "no session_meta record with an id: the session is keyed by a digest of the first line, "+key)
	}
	problems := cx.problems.Result()
	created := cx.created
	if created.IsZero() {
		created = msgs[0].CreatedAt
	}
	if err := emit.Begin(formats.ThreadInfo{Key: key, Title: cxTitle(msgs, cx.built), Source: formats.Codex, CreatedAt: created}); err != nil {
		return problems, err
	}
	next := 0
	for _, d := range digests {
		for ; next <= d.last; next++ {
			if err := emit.Message(msgs[next]); err != nil {
				return problems, err
			}
		}
		if err := emit.Digest(msgs[d.first].Key, msgs[d.last].Key, d.summary); err != nil {
			return problems, err
		}
	}
	for ; next < len(msgs); next++ {
		if err := emit.Message(msgs[next]); err != nil {
			return problems, err
		}
	}
	return problems, emit.End()
}

func (cx *cxReader) readLine(n int, line []byte) error {
	cx.lines++
	if cx.lines == 1 {
		line = bytes.TrimPrefix(line, []byte(formats.BOM))
		cx.keyLine = append([]byte(nil), line...)
	}
	if cx.lines == 1 && len(line) > 0 && line[0] == '[' {
		return errors.New("not a Codex rollout: it starts with a JSON list, and a rollout is JSON lines, one record object each")
	}
	if len(line) == 0 || line[0] != '{' {
		if json.Valid(line) {
			cx.problems.Add(n, "not a Codex record: "+formats.DescribeJSON(line)+", not an object")
		} else {
			cx.problems.Add(n, "not JSON")
		}
		return nil
	}
	var l cxLine
	if err := json.Unmarshal(line, &l); err != nil {
		if json.Valid(line) {
			cx.problems.Add(n, "not a Codex record: "+formats.DescribeError(err))
		} else {
			cx.problems.Add(n, "not JSON: "+formats.ShortError(err))
		}
		return nil
	}
	typ, payload := l.Type, l.Payload
	if len(bytes.TrimSpace(payload)) == 0 || string(bytes.TrimSpace(payload)) == "null" {
		// a rollout from before the type wrapper: the line is the payload
		switch {
		case cxWrapperTypes[l.Type]:
			cx.problems.Add(n, l.Type+" record without a payload")
			return nil
		case l.RecordType != "":
			return nil
		case cx.lines == 1 && l.Type == "" && l.ID != "" && l.Timestamp != "":
			typ, payload = "session_meta", line
		case cxResponseTypes[l.Type]:
			typ, payload, l.Timestamp = "response_item", line, ""
		default:
			return nil
		}
	}
	if !cxWrapperTypes[typ] {
		return nil // a record this importer does not know: not conversation
	}
	at := cxTime(l.Timestamp)
	if typ == "response_item" {
		var p cxPayload
		if err := json.Unmarshal(payload, &p); err != nil {
			cx.problems.Add(n, "response_item record with an unreadable payload: "+formats.DescribeError(err))
			return nil
		}
		cx.responseItem(n, at, &p, payload)
		return nil
	}
	// the other kinds are read field by field: a field of a shape this
	// importer does not expect is left out, not the record
	var f map[string]json.RawMessage
	if err := json.Unmarshal(payload, &f); err != nil {
		cx.problems.Add(n, fmt.Sprintf("%s record with an unreadable payload: %s", typ, formats.DescribeError(err)))
		return nil
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(f[k], &s)
		return s
	}
	switch typ {
	case "session_meta":
		if id := str("id"); cx.key == "" && id != "" {
			cx.key = id
			cx.created = cxTime(str("timestamp"))
			if cx.created.IsZero() {
				cx.created = at
			}
			cx.session = map[string]string{}
			for _, k := range []string{"cwd", "originator", "cli_version"} {
				if v := str(k); v != "" {
					cx.session[k] = v
				}
			}
		}
	case "turn_context":
		if m := str("model"); m != "" {
			cx.model = m
		}
	case "event_msg":
		cx.event(n, at, str("type"), str("message"), str("text"), payload)
	case "compacted":
		summary := strings.TrimSpace(str("message"))
		if summary == "" {
			summary = cxDefaultSummary
		}
		cx.entries = append(cx.entries, cxEntry{kind: cxCompaction, line: n, at: at, role: model.RoleSystem,
			parts: []model.Part{{Type: model.PartText, Text: summary, Raw: formats.Compact(payload)}},
			meta:  map[string]string{"compacted": "true"}})
	}
	return nil
}

var cxWrapperTypes = map[string]bool{
	"session_meta": true, "turn_context": true, "response_item": true, "event_msg": true, "compacted": true,
}

var cxResponseTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true, "web_search_call": true,
}

func (cx *cxReader) add(e cxEntry) {
	if e.role == model.RoleAssistant && cx.model != "" {
		e.meta["model"] = cx.model
	}
	cx.entries = append(cx.entries, e)
}

func (cx *cxReader) responseItem(n int, at time.Time, p *cxPayload, item json.RawMessage) {
	// The item as a part's Raw, for the kinds kept so (a message keeps
	// its blocks), compacted where it lies (formats.MessageParts points
	// the parts into their encoding once they are made).
	var raw json.RawMessage
	if p.Type != "message" {
		raw = formats.CompactOwned(item)
	}
	meta := map[string]string{}
	if p.ID != "" {
		meta["source_id"] = p.ID
	}
	e := cxEntry{line: n, at: at, meta: meta}
	switch p.Type {
	case "message":
		switch p.Role {
		case "user", "assistant":
			e.role = model.Role(p.Role)
		case "developer", "system":
			e.role = model.RoleSystem
			meta["source_role"] = p.Role
		default:
			cx.problems.Add(n, fmt.Sprintf("message with role %q, which is none of user, assistant, developer, system", p.Role))
			return
		}
		parts, err := cxContent(p.Content)
		if err != nil {
			cx.problems.Add(n, "message content: "+err.Error())
			return
		}
		if formats.Blank(parts) {
			return
		}
		e.parts = parts
		if !cx.items {
			// Events that repeat it come only in a rollout.
			e.match = string(e.role) + "\x00" + cxMatchText(parts)
		}
	case "reasoning":
		text := cxSummary(p.Summary)
		if text == "" {
			text = cxSummary(p.Content)
		}
		if text == "" {
			return // encrypted only: nothing to read
		}
		e.role = model.RoleAssistant
		e.parts = []model.Part{{Type: model.PartThinking, Text: text, Raw: raw}}
		e.match = "thinking\x00" + text
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		e.role = model.RoleAssistant
		call := model.Part{Type: model.PartToolCall, ToolCallID: p.CallID, ToolName: p.Name, Raw: raw}
		switch p.Type {
		case "function_call":
			call.Input = formats.ToolInput(p.Arguments)
		case "custom_tool_call":
			call.Input = formats.ToolInput(p.Input)
		default:
			call.Input = formats.ToolInput(p.Action)
			if call.ToolName == "" {
				call.ToolName = strings.TrimSuffix(p.Type, "_call")
			}
		}
		if call.ToolName == "" {
			cx.problems.Add(n, p.Type+" without a tool name")
			return
		}
		if p.CallID != "" {
			meta["call_id"] = p.CallID
		}
		e.parts = []model.Part{call}
	case "function_call_output", "custom_tool_call_output":
		e.role = model.RoleTool
		text, isErr, images, rendered := cxOutput(p.Output)
		e.parts = append([]model.Part{{Type: model.PartToolResult, Text: text, IsError: isErr, Raw: raw}}, images...)
		if len(images) == 0 {
			e.content = rendered
		}
		e.callID = p.CallID
		if p.CallID != "" {
			meta["call_id"] = p.CallID
		}
	default:
		return
	}
	cx.add(e)
}

func (cx *cxReader) event(n int, at time.Time, typ, message, text string, raw json.RawMessage) {
	e := cxEntry{kind: cxEvent, line: n, at: at, meta: map[string]string{"event": typ}}
	switch typ {
	case "user_message", "agent_message":
		if strings.TrimSpace(message) == "" {
			return
		}
		e.role = model.RoleUser
		if typ == "agent_message" {
			e.role = model.RoleAssistant
		}
		e.parts = []model.Part{{Type: model.PartText, Text: message, Raw: formats.Compact(raw)}}
		e.match = string(e.role) + "\x00" + strings.TrimSpace(message)
	case "agent_reasoning":
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		e.role = model.RoleAssistant
		e.parts = []model.Part{{Type: model.PartThinking, Text: text, Raw: formats.Compact(raw)}}
		e.match = "thinking\x00" + text
	default:
		return
	}
	cx.add(e)
}

// cxContent reads a message's content: a list of input_text, output_text,
// input_image (or refusal) blocks, or a string. The parts' Raw point
// into raw (formats.MessageParts points them into their encoding).
//
// Plain text, a string or a lone block holding its text alone
// ({"type":"input_text","text":"..."}, as the Responses API writes a
// message of a string), is a text part of no block, whose message is
// its text alone (formats.MessageParts), as a Chat Completions message
// of a string is: its text is decoded once, and nothing else copied.
func cxContent(raw json.RawMessage) ([]model.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		s, ok := formats.DecodeString(raw)
		if !ok {
			var v string
			return nil, errors.New(formats.ShortError(json.Unmarshal(raw, &v)))
		}
		if strings.TrimSpace(s) != "" {
			return []model.Part{{Type: model.PartText, Text: s}}, nil // plain text
		}
		return []model.Part{{Type: model.PartText, Text: s, Raw: formats.CompactOwned(raw)}}, nil
	}
	var blocks []json.RawMessage
	if rest, err := sjson.Parse(raw, &blocks, sjson.DontCopyRawMessage); err != nil || len(bytes.TrimSpace(rest)) > 0 || raw[0] != '[' {
		return nil, fmt.Errorf("%s, not a list of blocks", formats.DescribeJSON(raw))
	}
	parts := make([]model.Part, 0, len(blocks))
	for _, b := range blocks {
		b = formats.CompactOwned(b)
		var blk cxBlock
		typ, text, refusal := "", "", ""
		ok := len(b) > 0 && b[0] == '{'
		if ok {
			rest, err := sjson.Parse(b, &blk, sjson.DontCopyRawMessage)
			ok = err == nil && len(rest) == 0
		}
		if ok {
			typ, ok = blk.str(blk.Type)
		}
		switch {
		case !ok:
		case typ == "refusal":
			refusal, ok = blk.str(blk.Refusal)
		case typ == "input_text" || typ == "output_text" || typ == "text" || typ == "summary_text":
			text, ok = blk.str(blk.Text)
		}
		if !ok {
			parts = append(parts, model.Part{Type: model.PartOther, Raw: b})
			continue
		}
		switch typ {
		case "input_text", "output_text", "text", "summary_text":
			if len(blocks) == 1 && plainBlock(b) && strings.TrimSpace(text) != "" {
				return []model.Part{{Type: model.PartText, Text: text}}, nil // plain text
			}
			parts = append(parts, model.Part{Type: model.PartText, Text: text, Raw: b})
		case "refusal":
			parts = append(parts, model.Part{Type: model.PartText, Text: refusal, Raw: b})
		case "input_image":
			var url string
			_ = json.Unmarshal(blk.ImageURL, &url)
			parts = append(parts, model.Part{Type: model.PartImage, MediaType: formats.MediaType(url), Raw: b})
		default:
			parts = append(parts, model.Part{Type: model.PartOther, Raw: b})
		}
	}
	return parts, nil
}

// plainBlock reports whether raw (compacted) is exactly a text block's
// type and its text: {"type":"input_text","text":"..."} with no other
// field. It reads the text's bytes without decoding them.
func plainBlock(raw json.RawMessage) bool {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"type":"`))
	if !ok {
		return false
	}
	typ, rest, ok := bytes.Cut(rest, []byte(`","text":"`))
	switch {
	case !ok:
		return false
	case string(typ) != "input_text" && string(typ) != "output_text" && string(typ) != "text":
		return false
	}
	// the text: up to its closing quote, then the block's end
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			i++
		case '"':
			return i == len(rest)-2 && rest[i+1] == '}'
		}
	}
	return false
}

// cxMatchText is the text an event repeating a message would carry.
func cxMatchText(parts []model.Part) string {
	var texts []string
	for _, p := range parts {
		if p.Type == model.PartText && strings.TrimSpace(p.Text) != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.TrimSpace(strings.Join(texts, "\n"))
}

// cxSummary joins the texts of a reasoning summary (or content) list.
func cxSummary(raw json.RawMessage) string {
	var items []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var texts []string
	for _, it := range items {
		if t := strings.TrimSpace(it.Text); t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "\n\n")
}

// cxOutput reads a tool's output: a string (an exec result written as
// {"output", "metadata": {"exit_code"}} is unwrapped), a list of content
// blocks, or an object with content and success. For an output of one
// text (a string, or a list of one text block) it also returns the
// content it renders (formats.RenderContent), of which the text is the
// end: the output decoded once, after its prefix ("" otherwise).
func cxOutput(raw json.RawMessage) (text string, isErr bool, images []model.Part, rendered string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil, ""
	}
	switch raw[0] {
	case '"':
		prefix := formats.ResultPrefix(false)
		rendered, ok := formats.DecodeStringAfter(prefix, raw)
		if !ok {
			return "", false, nil, ""
		}
		s := rendered[len(prefix):]
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
			var exec struct {
				Output   *string `json:"output"`
				Metadata *struct {
					ExitCode *int `json:"exit_code"`
				} `json:"metadata"`
			}
			var keys map[string]json.RawMessage
			if json.Unmarshal([]byte(t), &keys) == nil && len(keys) == 2 &&
				json.Unmarshal([]byte(t), &exec) == nil && exec.Output != nil && exec.Metadata != nil {
				return *exec.Output, exec.Metadata.ExitCode != nil && *exec.Metadata.ExitCode != 0, nil, ""
			}
		}
		return s, false, nil, rendered
	case '[':
		// One text block, decoded once after the prefix.
		if lit := formats.LoneText(raw); lit != nil {
			prefix := formats.ResultPrefix(false)
			if rendered, ok := formats.DecodeStringAfter(prefix, lit); ok && strings.TrimSpace(rendered[len(prefix):]) != "" {
				return rendered[len(prefix):], false, nil, rendered
			}
		}
		parts, err := cxContent(raw)
		if err != nil {
			return string(raw), false, nil, ""
		}
		var texts []string
		for _, p := range parts {
			switch p.Type {
			case model.PartText:
				texts = append(texts, p.Text)
			case model.PartImage:
				images = append(images, p)
			}
		}
		return strings.Join(texts, "\n"), false, images, ""
	case '{':
		var o struct {
			Content json.RawMessage `json:"content"`
			Success *bool           `json:"success"`
		}
		if json.Unmarshal(raw, &o) == nil && len(o.Content) > 0 {
			text, _, images, _ = cxOutput(o.Content)
			return text, o.Success != nil && !*o.Success, images, ""
		}
	}
	return string(formats.Compact(raw)), false, nil, ""
}

func cxTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t // no zone: Codex writes UTC
	}
	return time.Time{}
}

type cxDigest struct {
	first, last int // indices into the messages
	summary     string
}

// build drops the events that repeat response items, links tool results
// to their calls, and places the compactions.
func (cx *cxReader) build() ([]formats.Message, []cxDigest) {
	have := map[string]int{}
	for i := range cx.entries {
		if e := &cx.entries[i]; e.kind == cxMessage && e.match != "" {
			have[e.match]++
		}
	}
	var msgs []formats.Message
	var digests []cxDigest
	// The calls not answered yet, by call id: their tools, oldest first.
	// An output answers the most recent of them: an earlier call left
	// open with the same id was abandoned (an interrupted turn), and an
	// id used again after its output names a new call.
	open := map[string][]string{}
	since := 0 // the first message after the last compaction
	for i := range cx.entries {
		e := &cx.entries[i]
		if e.kind == cxEvent {
			if have[e.match] > 0 {
				have[e.match]--
				continue
			}
		}
		if e.kind == cxCompaction && since < len(msgs) {
			digests = append(digests, cxDigest{first: since, last: len(msgs) - 1, summary: e.parts[0].Text})
			since = len(msgs)
			continue
		}
		name := ""
		answers := e.role == model.RoleTool && e.callID != "" && len(open[e.callID]) > 0
		if answers {
			calls := open[e.callID]
			e.parts[0].ToolCallID, name = e.callID, calls[len(calls)-1]
		} else if cx.items && e.role == model.RoleTool && e.callID != "" {
			e.parts[0].ToolCallID = e.callID
		}
		meta := e.meta
		if len(msgs) == 0 {
			for k, v := range cx.session {
				meta[k] = v
			}
		}
		nm := model.NewMessage{
			Role:      e.role,
			Content:   e.content,
			Name:      name,
			CreatedAt: e.at,
			Meta:      meta,
		}
		if nm.Content == "" {
			nm.Content = formats.RenderContent(e.parts)
		}
		if cx.items {
			// A request's items: the parts go to the store as read.
			nm.ReadParts = formats.KeepParts(e.parts, cx.lend)
		} else {
			nm.Parts = formats.MessageParts(e.parts)
		}
		if err := nm.Validate(); err != nil {
			cx.problems.Add(e.line, err.Error())
			continue
		}
		// Only what is imported opens or answers a call.
		if answers {
			open[e.callID] = open[e.callID][:len(open[e.callID])-1]
		}
		for _, p := range e.parts {
			if p.Type == model.PartToolCall && p.ToolCallID != "" {
				open[p.ToolCallID] = append(open[p.ToolCallID], p.ToolName)
			}
		}
		msgs = append(msgs, formats.Message{Key: "L" + strconv.Itoa(e.line), NewMessage: nm})
		cx.built = append(cx.built, e.parts)
		if e.kind == cxCompaction {
			since = len(msgs)
		}
	}
	return msgs, digests
}

// cxInjected are the starts of the user messages Codex writes itself.
var cxInjected = []string{
	"<environment_context>", "<user_instructions>", "<permissions instructions>",
	"# AGENTS.md instructions", "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>",
}

// Injected reports whether a user message's text is context Codex CLI
// writes itself (its environment, the project's AGENTS.md), not what
// the user wrote.
func Injected(text string) bool {
	text = strings.TrimSpace(text)
	for _, p := range cxInjected {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// cxTitle is the first user message the user wrote, cut to a line;
// parts are those each message was made of.
func cxTitle(msgs []formats.Message, parts [][]model.Part) string {
	for i, m := range msgs {
		if m.Role != model.RoleUser {
			continue
		}
		text := cxMatchText(parts[i])
		if text == "" {
			continue
		}
		if Injected(text) {
			continue
		}
		return formats.CutTitle(text)
	}
	return ""
}
