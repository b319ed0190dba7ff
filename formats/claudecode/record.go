package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sjson "github.com/segmentio/encoding/json"

	"weft/formats"
	"weft/model"
)

// A record is decoded a level at a time into raw values, by
// github.com/segmentio/encoding/json (a session file of megabytes is
// read in tens of milliseconds: BenchmarkReadClaudeCode): the values the
// importer does not keep are only checked, the strings it keeps are
// decoded once (formats.DecodeString), and a content block is copied
// once as its part's Raw, the parts that point into it (a call's input,
// the images of a result) sharing that copy: in a file's records, which
// the reader's buffer holds a line at a time; a request's messages
// (ReadMessages) are read where they lie until their parts are encoded
// (formats.MessageParts).

// parseFlags: raw values point into what is parsed instead of being
// copied (a block is copied once, as its part's Raw), and keys match as
// Claude Code writes them, exactly.
const parseFlags = sjson.DontCopyRawMessage | sjson.DontMatchCaseInsensitiveStructFields

// parse decodes raw, one JSON value, into v; false when raw is not one
// (or not of v's shape).
func parse(raw []byte, v any) bool {
	rest, err := sjson.Parse(raw, v, parseFlags)
	return err == nil && len(rest) == 0
}

// ccHead is what the importer reads of a record's top level.
type ccHead struct {
	Type           json.RawMessage `json:"type"`
	Subtype        json.RawMessage `json:"subtype"`
	UUID           json.RawMessage `json:"uuid"`
	Parent         json.RawMessage `json:"parentUuid"`
	Logical        json.RawMessage `json:"logicalParentUuid"`
	Session        json.RawMessage `json:"sessionId"`
	Agent          json.RawMessage `json:"agentId"`
	Timestamp      json.RawMessage `json:"timestamp"`
	Cwd            json.RawMessage `json:"cwd"`
	Branch         json.RawMessage `json:"gitBranch"`
	Summary        json.RawMessage `json:"summary"`
	Leaf           json.RawMessage `json:"leafUuid"`
	CustomTitle    json.RawMessage `json:"customTitle"`
	Sidechain      json.RawMessage `json:"isSidechain"`
	Meta           json.RawMessage `json:"isMeta"`
	CompactSummary json.RawMessage `json:"isCompactSummary"`
	Message        json.RawMessage `json:"message"`
	WeftRole       json.RawMessage `json:"weftRole"`
}

// ccMessage is a record's message.
type ccMessage struct {
	ID      json.RawMessage `json:"id"`
	Model   json.RawMessage `json:"model"`
	Content json.RawMessage `json:"content"`
}

// ccBlock is a content block's fields.
type ccBlock struct {
	Type      json.RawMessage `json:"type"`
	Text      json.RawMessage `json:"text"`
	Thinking  json.RawMessage `json:"thinking"`
	ID        json.RawMessage `json:"id"`
	Name      json.RawMessage `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID json.RawMessage `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   json.RawMessage `json:"is_error"`
	Source    json.RawMessage `json:"source"`
}

// ccFields reads raw values, noting the first of the wrong type.
type ccFields struct{ bad string }

// str is a string field's value; absent and null are "".
func (f *ccFields) str(name string, v []byte) string {
	if formats.IsNull(v) {
		return ""
	}
	s, ok := formats.DecodeString(v)
	if !ok && f.bad == "" {
		f.bad = strconv.Quote(name) + " is not a string"
	}
	return s
}

func (f *ccFields) flag(name string, v []byte) bool {
	switch string(v) {
	case "", "null", "false":
		return false
	case "true":
		return true
	}
	if f.bad == "" {
		f.bad = strconv.Quote(name) + " is not true or false"
	}
	return false
}

// brokenLine notes a line that could not be read (see join).
func (rd *ccReader) brokenLine(n int) {
	rd.broken = append(rd.broken, int32(min(n, 1<<31-1)))
}

func (rd *ccReader) readLine(n int, line []byte) error {
	if n == 1 {
		if line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte(formats.BOM))); len(line) == 0 {
			return nil // a byte order mark alone
		}
	}
	rd.lines++
	var h ccHead
	if line[0] != '{' || !parse(line, &h) {
		if sjson.Valid(line) {
			rd.problems.Add(n, "not a Claude Code record: a JSON "+ccJSONKind(line[0])+", not an object")
		} else {
			rd.problems.Add(n, "not JSON"+ccNotJSON(line))
		}
		rd.brokenLine(n)
		return nil
	}
	var f ccFields
	typ := f.str("type", h.Type)
	switch typ {
	case "summary":
		s, leaf := strings.TrimSpace(f.str("summary", h.Summary)), f.str("leafUuid", h.Leaf)
		if s != "" && f.bad == "" {
			rd.summary = append(rd.summary, ccSummary{s, leaf})
		}
		return nil
	case "custom-title":
		if s := strings.TrimSpace(f.str("customTitle", h.CustomTitle)); s != "" && f.bad == "" {
			rd.title = s
		}
		return nil
	}
	uuid := f.str("uuid", h.UUID)
	if uuid == "" {
		if (typ == "user" || typ == "assistant") && !formats.IsNull(h.Message) {
			rd.problems.Add(n, typ+" record without a uuid: it has no place in the thread")
		}
		return nil // metadata: file-history-snapshot, queue-operation, ...
	}
	if _, dup := rd.index[uuid]; dup {
		return nil // written twice (a resumed session): the first one stands
	}
	parent := f.str("parentUuid", h.Parent)
	sessionID := rd.intern(f.str("sessionId", h.Session))
	timestamp := f.str("timestamp", h.Timestamp)
	sidechain := f.flag("isSidechain", h.Sidechain)
	var subtype, logical string
	if typ == "system" {
		subtype, logical = f.str("subtype", h.Subtype), f.str("logicalParentUuid", h.Logical)
	}
	if f.bad != "" {
		rd.problems.Add(n, fmt.Sprintf("%s record %s is unreadable: %s", ccOrUnknown(typ), uuid, f.bad))
		rd.brokenLine(n)
		return nil
	}
	i := int32(len(rd.nodes))
	nd := ccNode{
		uuid:      uuid,
		sessionID: sessionID,
		line:      int32(min(n, 1<<31-1)),
		parent:    -1,
		kind:      ccLink,
	}
	if sidechain {
		nd.flags |= ccSidechain
	}
	if t, err := time.Parse(time.RFC3339Nano, timestamp); err == nil {
		nd.at = t.UnixNano()
	}
	if parent != "" && parent != uuid {
		if p, ok := rd.index[parent]; ok {
			nd.parent = p
		} else {
			rd.pending[i] = parent
		}
	}
	switch typ {
	case "user", "assistant":
		rec, err := rd.readMessage(&h, typ)
		if err != nil {
			rd.problems.Add(n, fmt.Sprintf("%s record %s: %s", typ, uuid, err))
			break // kept as a link: what hangs off it stays in the tree
		}
		nd.rec = rec
		nd.kind = ccUser
		if typ == "assistant" {
			nd.kind = ccAssistant
		}
	case "system":
		nd.kind = ccSystem
		if subtype == "compact_boundary" {
			nd.flags |= ccBoundary
			if logical != "" && logical != uuid {
				rd.logical[i] = logical
			}
		}
	}
	rd.index[uuid] = i
	rd.nodes = append(rd.nodes, nd)
	return nil
}

func ccOrUnknown(s string) string {
	if s == "" {
		return "untyped"
	}
	return s
}

func ccJSONKind(c byte) string {
	switch c {
	case '[':
		return "list"
	case '"':
		return "string"
	}
	return "value"
}

// ccNotJSON says what is wrong with a line that is not JSON, as
// encoding/json says it.
func ccNotJSON(line []byte) string {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return ": " + formats.ShortError(err)
	}
	return ""
}

// readMessage reads a user or assistant record's message.
func (rd *ccReader) readMessage(h *ccHead, typ string) (*ccRecord, error) {
	raw := h.Message
	if formats.IsNull(raw) {
		return nil, errors.New("no message")
	}
	var msg ccMessage
	if raw[0] != '{' || !parse(raw, &msg) {
		return nil, errors.New("message is not an object")
	}
	var f ccFields
	rec := &ccRecord{
		cwd:            rd.intern(f.str("cwd", h.Cwd)),
		gitBranch:      rd.intern(f.str("gitBranch", h.Branch)),
		agentID:        rd.intern(f.str("agentId", h.Agent)),
		isMeta:         f.flag("isMeta", h.Meta),
		compactSummary: f.flag("isCompactSummary", h.CompactSummary),
		weftSystem:     typ == "user" && f.str("weftRole", h.WeftRole) == "system",
	}
	if typ == "assistant" {
		rec.msgID = f.str("message.id", msg.ID)
		rec.model = rd.intern(f.str("message.model", msg.Model))
	}
	if f.bad != "" {
		return nil, errors.New(f.bad)
	}
	content := msg.Content
	switch {
	case formats.IsNull(content):
		return rec, nil // nothing said: kept, emits nothing
	case content[0] == '"':
		s, _ := formats.DecodeString(content)
		if strings.TrimSpace(s) == "" {
			// Kept as its block, which is all there is of it.
			rec.parts = []model.Part{{Type: model.PartText, Text: s, Raw: json.RawMessage(bytes.Clone(content))}}
			return rec, nil
		}
		// Plain text: a part of no source block, whose message is its
		// text alone (storedParts), as a Chat Completions message of a
		// string is. Its text is decoded once, and nothing else is
		// copied: it may be megabytes.
		rec.parts = []model.Part{{Type: model.PartText, Text: s}}
		return rec, nil
	case content[0] != '[':
		return nil, errors.New("message content is neither text nor a list of blocks")
	}
	var blocks []json.RawMessage
	parse(content, &blocks)
	large, largeAt, largeK := []byte(nil), -1, 0 // a large text, decoded last
	for k, v := range blocks {
		if v[0] != '{' {
			return nil, fmt.Errorf("content block %d is not an object", k+1)
		}
		raw := json.RawMessage(v)
		if !rd.borrow {
			raw = bytes.Clone(raw)
		}
		var b ccBlock
		parse(raw, &b)
		var f ccFields
		if largeAt < 0 && len(b.Text) >= largeText && b.Text[0] == '"' && f.str("type", b.Type) == "text" {
			large, largeAt, largeK = b.Text, len(rec.parts), k
			rec.parts = append(rec.parts, model.Part{Type: model.PartText, Raw: raw})
			continue
		}
		p, rendered := ccPart(&b, raw, &f)
		if f.bad != "" {
			return nil, fmt.Errorf("content block %d: %s", k+1, f.bad)
		}
		if p.Type == model.PartToolResult && typ == "user" {
			if k == 0 {
				rec.resultsFirst = true
			}
			res := ccResult{parts: []model.Part{p}, content: rendered}
			if !formats.IsNull(b.Content) && b.Content[0] == '[' {
				if images := ccResultImages(b.Content); len(images) > 0 {
					res.parts, res.content = append(res.parts, images...), ""
				}
			}
			rec.results = append(rec.results, res)
			continue
		}
		rec.parts = append(rec.parts, p)
	}
	if largeAt >= 0 && !rec.decodeLarge(largeAt, large) {
		return nil, fmt.Errorf("content block %d: \"text\" is not a string", largeK+1)
	}
	return rec, nil
}

// largeText is the length from which a text block is decoded last, into
// the content its message renders as.
const largeText = 64 << 10

// decodeLarge decodes the large text lit of part i, after what the parts
// before it render as: when no part after it renders anything (a user's
// pasted text after the reminders before it), that is the message's
// content, and the part's text is its end, not a second copy of
// megabytes. False when lit is not a JSON string.
func (rec *ccRecord) decodeLarge(i int, lit []byte) bool {
	prefix := formats.RenderContent(rec.parts[:i])
	if prefix != "" {
		prefix += "\n\n"
	}
	s, ok := formats.DecodeStringAfter(prefix, lit)
	if !ok {
		return false
	}
	text := s[len(prefix):]
	rec.parts[i].Text = text
	if strings.TrimSpace(text) != "" && formats.RenderContent(rec.parts[i+1:]) == "" {
		rec.content = s
	}
	return true
}

// ccPart is the part of a content block; for a tool result, also the
// content a message of it alone renders as (formats.RenderContent),
// which its text is the end of.
func ccPart(b *ccBlock, raw json.RawMessage, f *ccFields) (p model.Part, rendered string) {
	p.Raw = raw
	switch f.str("type", b.Type) {
	case "text":
		p.Type, p.Text = model.PartText, f.str("text", b.Text)
	case "thinking":
		p.Type, p.Text = model.PartThinking, f.str("thinking", b.Thinking)
	case "redacted_thinking":
		p.Type = model.PartThinking
	case "tool_use":
		p.Type, p.ToolCallID, p.ToolName = model.PartToolCall, f.str("id", b.ID), f.str("name", b.Name)
		if !formats.IsNull(b.Input) {
			p.Input = b.Input
		}
	case "tool_result":
		p.Type, p.ToolCallID, p.IsError = model.PartToolResult, f.str("tool_use_id", b.ToolUseID), f.flag("is_error", b.IsError)
		prefix := formats.ResultPrefix(p.IsError)
		rendered = ccResultText(b.Content, prefix)
		p.Text = rendered[len(prefix):]
	case "image":
		p.Type, p.MediaType = model.PartImage, ccMediaType(b.Source)
	default:
		p.Type = model.PartOther
	}
	return p, rendered
}

// ccTyped is a block of a tool result's content.
type ccTyped struct {
	Type   json.RawMessage `json:"type"`
	Text   json.RawMessage `json:"text"`
	Source json.RawMessage `json:"source"`
	raw    json.RawMessage
}

// ccContentBlocks are the objects of a tool result's content list.
func ccContentBlocks(content []byte) []ccTyped {
	var list []json.RawMessage
	parse(content, &list)
	blocks := make([]ccTyped, 0, len(list))
	for _, v := range list {
		b := ccTyped{raw: v}
		if v[0] == '{' && parse(v, &b) {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

func (b *ccTyped) is(typ string) bool {
	s, _ := formats.DecodeString(b.Type)
	return s == typ
}

func ccMediaType(source []byte) string {
	var src struct {
		MediaType json.RawMessage `json:"media_type"`
	}
	if formats.IsNull(source) || source[0] != '{' || !parse(source, &src) {
		return ""
	}
	s, _ := formats.DecodeString(src.MediaType)
	return s
}

// ccResultText is prefix and the text of a tool result's content: a
// string, or the text blocks of a list, one a line. Content of another
// shape is kept as its JSON. (The text after prefix, made at once: the
// content of a message of the result alone, its text the end of it.)
func ccResultText(content []byte, prefix string) string {
	switch {
	case formats.IsNull(content):
		return prefix
	case content[0] == '"':
		if s, ok := formats.DecodeStringAfter(prefix, content); ok {
			return s
		}
		return prefix
	case content[0] != '[':
		return prefix + string(formats.Compact(content))
	}
	var texts []ccTyped
	size := len(prefix)
	for _, blk := range ccContentBlocks(content) {
		if blk.is("text") {
			texts = append(texts, blk)
			size += len(blk.Text) + 1
		}
	}
	// One text block, as an MCP tool's output comes: decoded once,
	// after the prefix, as the string and the part's text (its end).
	if len(texts) == 1 && len(texts[0].Text) > 0 && texts[0].Text[0] == '"' {
		if s, ok := formats.DecodeStringAfter(prefix, texts[0].Text); ok {
			return s
		}
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(prefix)
	for _, blk := range texts {
		var f ccFields
		if s := f.str("text", blk.Text); f.bad == "" {
			if b.Len() > len(prefix) {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// ccResultImages are the image blocks of a tool result's content list, as
// parts sharing the result's Raw.
func ccResultImages(content []byte) []model.Part {
	var images []model.Part
	for _, b := range ccContentBlocks(content) {
		if b.is("image") {
			images = append(images, model.Part{Type: model.PartImage, MediaType: ccMediaType(b.Source), Raw: b.raw})
		}
	}
	return images
}
