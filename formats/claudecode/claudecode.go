// Package claudecode reads Claude Code session files
// (~/.claude/projects/*/*.jsonl) as threads.
package claudecode

import (
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"weft/formats"
	"weft/model"
)

// Claude Code session JSONL: one file is one session, one line one
// record. Records with a uuid form a tree through parentUuid; the thread
// is one branch of it. What this importer does with each kind:
//
//   - user / assistant: messages. One API response is written as several
//     records (one content block each) sharing message.id; they are merged
//     back into one assistant message, keyed by the first record's uuid,
//     also when the tool results of its first calls were written between
//     its records. Each tool_result block becomes a message of role tool.
//   - progress and any other record with a uuid but no message (hook
//     callbacks, attachments): kept in the tree, since a message can hang
//     off them, but they emit nothing.
//   - system: kept in the tree, never emitted. They are Claude Code's own
//     annotations (local command echoes, hook summaries, turn durations),
//     not part of what the model was sent; a local command's output that
//     the model does see is also written as a user record, which is kept.
//   - system/compact_boundary: the walk goes on through logicalParentUuid
//     to the pre-compaction messages, which are kept; the isCompactSummary
//     user record that follows is not a message but becomes a digest over
//     the messages since the previous boundary (Emitter.Digest), emitted
//     after the thread's messages.
//   - summary, custom-title: the thread's title.
//   - file-history-snapshot, queue-operation and anything else without a
//     uuid: metadata, skipped.
//
// The active branch is the path from the newest leaf (by timestamp, then
// file order) to its root; a /rewind leaves abandoned siblings that are
// not imported. Only records that carry conversation count as leaves: a
// progress chain hanging off a tool call is not a branch. Parallel tool
// calls leave false forks (a later call of the same response, or the
// result of an earlier one, as a sibling of the branch that goes on);
// such side branches, made only of records of the branch's own responses
// and results for its own calls, are taken into the thread where they
// hang, so no call loses its result. Subagent (isSidechain) records only
// make the thread when the file has nothing else, as an agent-*.jsonl
// file does; such a thread is keyed "<sessionId>/agent-<agentId>", since
// its records carry the parent session's ID.
//
// A compact boundary whose logicalParentUuid is not in the file (Claude
// Code does write such) goes on from the newest leaf written before it,
// which is where the conversation stood when it was compacted. A compact
// summary with nothing before it to collapse stays as a user message: it
// is all there is of the earlier conversation.
//
// Keys: a message's key is its record's uuid. The tool results of a user
// record are "<uuid>#1", "<uuid>#2", ... in block order, except that the
// first takes the bare uuid when the record has nothing else; a record's
// tool messages come before its user message when its first block is a
// result, as providers want results right after their calls. A record
// without a timestamp takes the time of the message before it.

// ccDefaultSummary stands for a compaction whose summary is missing.
const ccDefaultSummary = "Conversation compacted (the summary is missing from the session file)"

type ccKind uint8

const (
	ccLink      ccKind = iota // progress and other records without a message
	ccUser                    // a readable user record
	ccAssistant               // a readable assistant record
	ccSystem                  // a system record
)

const (
	ccSidechain uint8 = 1 << iota
	ccBoundary
)

// ccNode is what is kept of every record with a uuid. Nodes are stored in
// file order; parent is the index of the node the walk goes on to (the
// logical parent for a compact boundary), or -1.
type ccNode struct {
	uuid      string
	sessionID string // interned
	rec       *ccRecord
	at        int64 // Unix nanoseconds; 0 when the record has no time
	line      int32
	parent    int32
	kind      ccKind
	flags     uint8
}

// ccRecord is the readable content of a user or assistant record.
type ccRecord struct {
	msgID, model   string
	cwd, gitBranch string // interned
	agentID        string
	// parts: an assistant's blocks; a user's blocks other than tool results.
	parts []model.Part
	// results: a user's tool results, one message each.
	results []ccResult
	// resultsFirst: the record's first block is a tool result, so its tool
	// messages come before its user message.
	resultsFirst   bool
	isMeta         bool
	compactSummary bool
}

type ccResult struct {
	parts []model.Part // the tool_result part, then any images it holds
}

type ccSummary struct{ text, leaf string }

type ccReader struct {
	nodes    []ccNode
	index    map[string]int32
	pending  map[int32]string // parents not yet seen (named before they appear)
	logical  map[int32]string // compact boundaries' logical parents
	summary  []ccSummary
	title    string // the last custom-title
	problems formats.Problems
	lines    int
	strs     map[string]string
	// broken: the lines that could not be read, in file order; a record
	// there may be the parent others name (see join).
	broken []int32
}

// Read reads a Claude Code session (~/.claude/projects/*/*.jsonl) as one
// thread: the active branch, with compactions kept as digests.
func Read(r io.Reader, emit formats.Emitter) ([]formats.Problem, error) {
	rd := &ccReader{
		index:   map[string]int32{},
		pending: map[int32]string{},
		logical: map[int32]string{},
		strs:    map[string]string{},
	}
	err := formats.EachLine(r, rd.readLine, func(n int) {
		rd.lines++
		rd.problems.Add(n, "line longer than 64 MB")
		rd.broken = append(rd.broken, int32(min(n, 1<<31-1)))
	})
	if err != nil {
		return rd.problems.Result(), err
	}
	if rd.lines == 0 {
		return rd.problems.Result(), fmt.Errorf("empty file")
	}
	th := rd.build()
	problems := rd.problems.Result()
	if len(th.msgs) == 0 {
		return problems, fmt.Errorf("no Claude Code messages found: is this a Claude Code session .jsonl?")
	}
	return problems, th.emit(emit)
}

func (rd *ccReader) intern(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := rd.strs[s]; ok {
		return v
	}
	if len(rd.strs) < 1024 {
		rd.strs[s] = s
	}
	return s
}

// A record is read without decoding it into a tree: the line is checked
// once (ccValid), then walked. Values the importer does not keep are
// skipped, the strings it keeps are unquoted once, and a content block is
// copied once as the part's Raw, the parts that point into it (a call's
// input, the images of a result) sharing that copy. Only JSON that
// ccValid passed is walked, so the walk has no errors of its own.

// ccHead is what the importer reads of a record's top level: raw JSON
// values, still quoted.
type ccHead struct {
	typ, subtype, uuid, parent, logical, session, agent, timestamp []byte
	cwd, branch, summary, leaf, customTitle                        []byte
	sidechain, meta, compactSummary, message                       []byte
}

func (h *ccHead) set(k, v []byte) {
	switch string(k) {
	case "type":
		h.typ = v
	case "subtype":
		h.subtype = v
	case "uuid":
		h.uuid = v
	case "parentUuid":
		h.parent = v
	case "logicalParentUuid":
		h.logical = v
	case "sessionId":
		h.session = v
	case "agentId":
		h.agent = v
	case "timestamp":
		h.timestamp = v
	case "cwd":
		h.cwd = v
	case "gitBranch":
		h.branch = v
	case "summary":
		h.summary = v
	case "leafUuid":
		h.leaf = v
	case "customTitle":
		h.customTitle = v
	case "isSidechain":
		h.sidechain = v
	case "isMeta":
		h.meta = v
	case "isCompactSummary":
		h.compactSummary = v
	case "message":
		h.message = v
	}
}

// ccBlock is a content block's fields, raw.
type ccBlock struct {
	typ, text, thinking, id, name, input, toolUseID, content, isError, source []byte
}

func (b *ccBlock) set(k, v []byte) {
	switch string(k) {
	case "type":
		b.typ = v
	case "text":
		b.text = v
	case "thinking":
		b.thinking = v
	case "id":
		b.id = v
	case "name":
		b.name = v
	case "input":
		b.input = v
	case "tool_use_id":
		b.toolUseID = v
	case "content":
		b.content = v
	case "is_error":
		b.isError = v
	case "source":
		b.source = v
	}
}

// ccFields reads raw values, noting the first of the wrong type.
type ccFields struct{ bad string }

func (f *ccFields) str(name string, v []byte) string {
	s, ok := ccString(v)
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

func ccNull(v []byte) bool { return len(v) == 0 || string(v) == "null" }

func (rd *ccReader) readLine(n int, line []byte) error {
	if n == 1 {
		if line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))); len(line) == 0 {
			return nil // a byte order mark alone
		}
	}
	rd.lines++
	if !ccValid(line) {
		rd.problems.Add(n, "not JSON"+ccNotJSON(line))
		rd.broken = append(rd.broken, int32(min(n, 1<<31-1)))
		return nil
	}
	if line[0] != '{' {
		rd.problems.Add(n, "not a Claude Code record: a JSON "+ccJSONKind(line[0])+", not an object")
		rd.broken = append(rd.broken, int32(min(n, 1<<31-1)))
		return nil
	}
	var h ccHead
	ccMembers(line, h.set)
	var f ccFields
	typ := f.str("type", h.typ)
	switch typ {
	case "summary":
		s, leaf := strings.TrimSpace(f.str("summary", h.summary)), f.str("leafUuid", h.leaf)
		if s != "" && f.bad == "" {
			rd.summary = append(rd.summary, ccSummary{s, leaf})
		}
		return nil
	case "custom-title":
		if s := strings.TrimSpace(f.str("customTitle", h.customTitle)); s != "" && f.bad == "" {
			rd.title = s
		}
		return nil
	}
	uuid := f.str("uuid", h.uuid)
	if uuid == "" {
		if (typ == "user" || typ == "assistant") && !ccNull(h.message) {
			rd.problems.Add(n, typ+" record without a uuid: it has no place in the thread")
		}
		return nil // metadata: file-history-snapshot, queue-operation, ...
	}
	if _, dup := rd.index[uuid]; dup {
		return nil // written twice (a resumed session): the first one stands
	}
	parent := f.str("parentUuid", h.parent)
	sessionID := rd.intern(f.str("sessionId", h.session))
	timestamp := f.str("timestamp", h.timestamp)
	sidechain := f.flag("isSidechain", h.sidechain)
	var subtype, logical string
	if typ == "system" {
		subtype, logical = f.str("subtype", h.subtype), f.str("logicalParentUuid", h.logical)
	}
	if f.bad != "" {
		rd.problems.Add(n, fmt.Sprintf("%s record %s is unreadable: %s", ccOrUnknown(typ), uuid, f.bad))
		rd.broken = append(rd.broken, int32(min(n, 1<<31-1)))
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

func ccNotJSON(line []byte) string {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return ": " + formats.ShortError(err)
	}
	return ""
}

// readMessage reads a user or assistant record's message.
func (rd *ccReader) readMessage(h *ccHead, typ string) (*ccRecord, error) {
	msg := h.message
	if ccNull(msg) {
		return nil, errors.New("no message")
	}
	if msg[0] != '{' {
		return nil, errors.New("message is not an object")
	}
	var id, mdl, content []byte
	ccMembers(msg, func(k, v []byte) {
		switch string(k) {
		case "id":
			id = v
		case "model":
			mdl = v
		case "content":
			content = v
		}
	})
	var f ccFields
	rec := &ccRecord{
		cwd:            rd.intern(f.str("cwd", h.cwd)),
		gitBranch:      rd.intern(f.str("gitBranch", h.branch)),
		agentID:        rd.intern(f.str("agentId", h.agent)),
		isMeta:         f.flag("isMeta", h.meta),
		compactSummary: f.flag("isCompactSummary", h.compactSummary),
	}
	if typ == "assistant" {
		rec.msgID = f.str("message.id", id)
		rec.model = rd.intern(f.str("message.model", mdl))
	}
	if f.bad != "" {
		return nil, errors.New(f.bad)
	}
	switch {
	case ccNull(content):
		return rec, nil // nothing said: kept, emits nothing
	case content[0] == '"':
		raw := json.RawMessage(bytes.Clone(content))
		s, _ := ccString(raw)
		rec.parts = []model.Part{{Type: model.PartText, Text: s, Raw: raw}}
		return rec, nil
	case content[0] != '[':
		return nil, errors.New("message content is neither text nor a list of blocks")
	}
	var err error
	k := 0
	ccElements(content, func(v []byte) {
		k++
		if err != nil {
			return
		}
		if v[0] != '{' {
			err = fmt.Errorf("content block %d is not an object", k)
			return
		}
		raw := json.RawMessage(bytes.Clone(v))
		var b ccBlock
		ccMembers(raw, b.set)
		var f ccFields
		p := ccPart(&b, raw, &f)
		if f.bad != "" {
			err = fmt.Errorf("content block %d: %s", k, f.bad)
			return
		}
		if p.Type == model.PartToolResult && typ == "user" {
			if k == 1 {
				rec.resultsFirst = true
			}
			parts := []model.Part{p}
			if !ccNull(b.content) && b.content[0] == '[' {
				parts = append(parts, ccResultImages(b.content)...)
			}
			rec.results = append(rec.results, ccResult{parts: parts})
			return
		}
		rec.parts = append(rec.parts, p)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

func ccPart(b *ccBlock, raw json.RawMessage, f *ccFields) model.Part {
	p := model.Part{Raw: raw}
	switch f.str("type", b.typ) {
	case "text":
		p.Type, p.Text = model.PartText, f.str("text", b.text)
	case "thinking":
		p.Type, p.Text = model.PartThinking, f.str("thinking", b.thinking)
	case "redacted_thinking":
		p.Type = model.PartThinking
	case "tool_use":
		p.Type, p.ToolCallID, p.ToolName = model.PartToolCall, f.str("id", b.id), f.str("name", b.name)
		if !ccNull(b.input) {
			p.Input = json.RawMessage(b.input)
		}
	case "tool_result":
		p.Type, p.ToolCallID, p.IsError = model.PartToolResult, f.str("tool_use_id", b.toolUseID), f.flag("is_error", b.isError)
		p.Text = ccResultText(b.content)
	case "image":
		p.Type, p.MediaType = model.PartImage, ccMediaType(b.source)
	default:
		p.Type = model.PartOther
	}
	return p
}

func ccMediaType(source []byte) string {
	var mt []byte
	if !ccNull(source) && source[0] == '{' {
		ccMembers(source, func(k, v []byte) {
			if string(k) == "media_type" {
				mt = v
			}
		})
	}
	s, _ := ccString(mt)
	return s
}

// ccResultText is the text of a tool result's content: a string, or the
// text blocks of a list, one a line. Content of another shape is kept as
// its JSON.
func ccResultText(content []byte) string {
	switch {
	case ccNull(content):
		return ""
	case content[0] == '"':
		s, _ := ccString(content)
		return s
	case content[0] != '[':
		return string(formats.Compact(content))
	}
	var b strings.Builder
	ccElements(content, func(v []byte) {
		var typ, text []byte
		if v[0] != '{' {
			return
		}
		ccMembers(v, func(k, v []byte) {
			switch string(k) {
			case "type":
				typ = v
			case "text":
				text = v
			}
		})
		if string(typ) != `"text"` {
			return
		}
		if s, ok := ccString(text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
	})
	return b.String()
}

// ccResultImages are the image blocks of a tool result's content list, as
// parts sharing the result's Raw.
func ccResultImages(content []byte) []model.Part {
	var images []model.Part
	ccElements(content, func(v []byte) {
		var typ, source []byte
		if v[0] != '{' {
			return
		}
		ccMembers(v, func(k, v []byte) {
			switch string(k) {
			case "type":
				typ = v
			case "source":
				source = v
			}
		})
		if string(typ) == `"image"` {
			images = append(images, model.Part{Type: model.PartImage, MediaType: ccMediaType(source), Raw: json.RawMessage(v)})
		}
	})
	return images
}

// --- walking valid JSON ---

// ccValid reports whether b is one JSON value, as json.Valid does (the
// same nesting limit; invalid UTF-8 in strings allowed), in one pass.
func ccValid(b []byte) bool {
	i, ok := ccValue(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

// ccMaxDepth is encoding/json's nesting limit.
const ccMaxDepth = 10000

func ccValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	var ok bool
	switch c := b[i]; c {
	case '"':
		return ccValidString(b, i)
	case '{', '[':
		if depth >= ccMaxDepth {
			return i, false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == end {
			return i + 1, true
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, false
				}
				if i, ok = ccValidString(b, i); !ok {
					return i, false
				}
				i = skipSpace(b, i)
				if i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = skipSpace(b, i+1)
			}
			if i, ok = ccValue(b, i, depth+1); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == end {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
	case 't':
		return ccLiteral(b, i, "true")
	case 'f':
		return ccLiteral(b, i, "false")
	case 'n':
		return ccLiteral(b, i, "null")
	}
	return ccNumber(b, i)
}

func ccLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func ccNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// ccPlain marks the bytes a JSON string holds as they are.
var ccPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// ccPlain8 reports whether none of 8 bytes is a control character, a
// quote or a backslash.
func ccPlain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return (x-0x20*ones)&^x&highs|zero(x^'"'*ones)|zero(x^'\\'*ones) == 0
}

func ccValidString(b []byte, i int) (int, bool) {
	i++
	for i < len(b) {
		for i+8 <= len(b) && ccPlain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && ccPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if ccHex4(b[i+2:]) < 0 {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

// ccStringEnd returns the index just past the string starting at b[i].
func ccStringEnd(b []byte, i int) int {
	i++
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return len(b)
		}
		i += k
		n := 0
		for j := i - 1; b[j] == '\\'; j-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// ccEnd returns the index just past the value starting at b[i].
func ccEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return ccStringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = ccStringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// ccMembers calls fn with each member of the object obj: its key, raw
// (escaped keys are not unescaped), and its value.
func ccMembers(obj []byte, fn func(k, v []byte)) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return
		}
		ke := ccStringEnd(obj, i)
		key := obj[i+1 : ke-1]
		i = skipSpace(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		i = skipSpace(obj, i+1)
		if i >= len(obj) {
			return
		}
		ve := ccEnd(obj, i)
		fn(key, obj[i:ve])
		i = skipSpace(obj, ve)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i++
	}
}

// ccElements calls fn with each element of the list arr.
func ccElements(arr []byte, fn func(v []byte)) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i++
	for {
		i = skipSpace(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		ve := ccEnd(arr, i)
		fn(arr[i:ve])
		i = skipSpace(arr, ve)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i++
	}
}

// ccString decodes a JSON string as encoding/json does (invalid UTF-8 and
// lone surrogates become U+FFFD). Absent and null are "", true; a value
// of another type is "", false.
func ccString(v []byte) (string, bool) {
	if ccNull(v) {
		return "", true
	}
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), true
	}
	out := make([]byte, 0, len(s))
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			k = len(s)
		}
		if chunk := s[:k]; utf8.Valid(chunk) {
			out = append(out, chunk...)
		} else {
			for len(chunk) > 0 {
				r, size := utf8.DecodeRune(chunk)
				out = utf8.AppendRune(out, r)
				chunk = chunk[size:]
			}
		}
		s = s[k:]
		if len(s) < 2 {
			break
		}
		c := s[1]
		s = s[2:]
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := ccHex4(s)
			if r < 0 {
				return string(out), true
			}
			s = s[4:]
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2 = ccHex4(s[2:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					s = s[6:]
					r = d
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default: // " \ /
			out = append(out, c)
		}
	}
	return string(out), true
}

func ccHex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// --- writing parts ---

// ccEncodeParts is model.EncodeParts written out by hand: Raw and Input
// verbatim (they are spans of a line ccValid passed), strings escaped as
// encoding/json does without HTML escaping. TestClaudeCodeEncodeParts
// holds it to encoding/json's output.
func ccEncodeParts(parts []model.Part) json.RawMessage {
	if len(parts) == 0 {
		return nil
	}
	n := 2
	for _, p := range parts {
		n += 64 + len(p.Text) + len(p.Raw) + len(p.Input) + len(p.ToolCallID) + len(p.ToolName)
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for k, p := range parts {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = ccAppendString(b, string(p.Type))
		if p.Text != "" {
			b = append(b, `,"text":`...)
			b = ccAppendString(b, p.Text)
		}
		if p.ToolCallID != "" {
			b = append(b, `,"tool_call_id":`...)
			b = ccAppendString(b, p.ToolCallID)
		}
		if p.ToolName != "" {
			b = append(b, `,"tool_name":`...)
			b = ccAppendString(b, p.ToolName)
		}
		if len(p.Input) > 0 {
			b = append(b, `,"input":`...)
			b = append(b, p.Input...)
		}
		if p.IsError {
			b = append(b, `,"is_error":true`...)
		}
		if p.MediaType != "" {
			b = append(b, `,"media_type":`...)
			b = ccAppendString(b, p.MediaType)
		}
		if len(p.Raw) > 0 {
			b = append(b, `,"raw":`...)
			b = append(b, p.Raw...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// ccAppendString appends s as a JSON string, as encoding/json writes it
// with HTML escaping off.
func ccAppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// --- the tree ---

func (rd *ccReader) isEntry(i int32) bool { return rd.nodes[i].kind != ccLink }

// newer reports whether node a is newer than node b: by time, then by
// place in the file.
func (rd *ccReader) newer(a, b int32) bool {
	na, nb := &rd.nodes[a], &rd.nodes[b]
	if na.at != nb.at {
		return na.at > nb.at
	}
	return na.line > nb.line
}

// ccThread is the thread as it will be emitted.
type ccThread struct {
	info    formats.ThreadInfo
	msgs    []ccOut
	digests []recordedDigestCC
}

type recordedDigestCC struct{ from, to, summary string }

type ccOut struct {
	key    string
	role   model.Role
	name   string
	parts  []model.Part
	at     int64
	meta   map[string]string
	msgID  string // an assistant message's API message ID
	isMeta bool
	toolID map[string]bool
}

func (rd *ccReader) build() *ccThread {
	n := int32(len(rd.nodes))
	nodes := rd.nodes
	var joins []ccJoin
	for i, id := range rd.pending {
		if p, ok := rd.index[id]; ok && p != i {
			nodes[i].parent = p
		} else if !ok {
			if j, ok := rd.join(i); ok {
				joins = append(joins, j)
			}
		}
	}
	rd.pending = nil
	var unlinked []int32 // compact boundaries whose logical parent is not in the file
	for i := int32(0); i < n; i++ {
		if nodes[i].flags&ccBoundary == 0 {
			continue
		}
		if id, ok := rd.logical[i]; ok {
			if p, ok := rd.index[id]; ok && p != i {
				nodes[i].parent = p
				continue
			}
		}
		if nodes[i].parent < 0 {
			unlinked = append(unlinked, i)
		}
	}

	// hasChild: an entry with another entry below it (through links) is
	// not a leaf.
	hasChild := make([]bool, n)
	memo := make([]int32, n)
	for i := range memo {
		memo[i] = -2
	}
	var stack []int32
	// above returns the nearest entry at or above i, or -1.
	above := func(i int32) int32 {
		stack = stack[:0]
		cur := i
		for cur >= 0 && memo[cur] == -2 && !rd.isEntry(cur) {
			memo[cur] = -3
			stack = append(stack, cur)
			cur = nodes[cur].parent
		}
		res := int32(-1)
		switch {
		case cur < 0:
		case rd.isEntry(cur):
			res = cur
		case memo[cur] >= 0 || memo[cur] == -1:
			res = memo[cur]
		}
		for _, s := range stack {
			memo[s] = res
		}
		return res
	}
	for i := int32(0); i < n; i++ {
		if rd.isEntry(i) && nodes[i].parent >= 0 {
			if a := above(nodes[i].parent); a >= 0 && a != i {
				hasChild[a] = true
			}
		}
	}

	// A boundary whose logical parent is missing goes on from the newest
	// leaf written before it.
	if len(unlinked) > 0 {
		var h ccHeap
		h.rd = rd
		next := 0
		for _, b := range unlinked {
			for ; int32(next) < b; next++ {
				j := int32(next)
				if rd.isEntry(j) && !hasChild[j] && nodes[j].flags&ccSidechain == nodes[b].flags&ccSidechain {
					heap.Push(&h, j)
				}
			}
			for h.Len() > 0 {
				c := heap.Pop(&h).(int32)
				if !hasChild[c] {
					nodes[b].parent = c
					hasChild[c] = true
					break
				}
			}
		}
	}

	// The active leaf.
	leaf := int32(-1)
	for pass := 0; pass < 3 && leaf < 0; pass++ {
		for i := int32(0); i < n; i++ {
			if !rd.isEntry(i) {
				continue
			}
			switch pass {
			case 0:
				if hasChild[i] || nodes[i].flags&ccSidechain != 0 {
					continue
				}
			case 1:
				if hasChild[i] {
					continue
				}
			}
			if leaf < 0 || rd.newer(i, leaf) {
				leaf = i
			}
		}
	}
	th := &ccThread{}
	if leaf < 0 {
		return th
	}

	// The path from the root to the leaf.
	onPath := make([]bool, n)
	var path []int32
	for cur := leaf; cur >= 0 && !onPath[cur]; cur = nodes[cur].parent {
		onPath[cur] = true
		path = append(path, cur)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}

	for _, j := range joins {
		if onPath[j.node] {
			rd.joined(j.line)
		}
	}

	order := rd.absorb(path, onPath)
	rd.assemble(th, order, path, leaf)
	return th
}

// ccJoin is a record whose parent was not found, joined across the
// broken line before it.
type ccJoin struct {
	node int32
	line int32 // the broken line
}

// join links record i, whose parent is in no record read, across the
// nearest line before it that could not be read: Claude Code appends
// records in order, so the parent was most likely on that line, and its
// own parent the record before it. Record i hangs off the nearest record
// before that line (of its own kind: a subagent's or the main thread's),
// so a broken line does not cut off everything before it. Without a
// broken line before it, i stays a root.
func (rd *ccReader) join(i int32) (ccJoin, bool) {
	nodes := rd.nodes
	line := nodes[i].line
	b, _ := slices.BinarySearch(rd.broken, line)
	if b == 0 {
		return ccJoin{}, false
	}
	bad := rd.broken[b-1]
	// the nodes are in file order: the last one before the broken line
	j, _ := slices.BinarySearchFunc(nodes, bad, func(nd ccNode, l int32) int { return cmp.Compare(nd.line, l) })
	side := nodes[i].flags & ccSidechain
	for j--; j >= 0 && nodes[j].flags&ccSidechain != side; j-- {
	}
	if j < 0 {
		return ccJoin{}, false
	}
	// no loop: i must not be above j
	for cur, steps := int32(j), 0; cur >= 0 && steps <= len(nodes); cur, steps = nodes[cur].parent, steps+1 {
		if cur == i {
			return ccJoin{}, false
		}
	}
	nodes[i].parent = int32(j)
	return ccJoin{node: i, line: bad}, true
}

// joined says in the broken line's problem that the thread goes on
// across it.
func (rd *ccReader) joined(line int32) {
	const says = "; the thread is joined across it"
	listed := rd.problems.Listed()
	for k := range listed {
		if p := &listed[k]; p.Line == int(line) && !strings.HasSuffix(p.Err, says) {
			p.Err += says
			return
		}
	}
}

// absorb returns the path with the false forks of parallel tool calls
// taken in where they hang off it.
func (rd *ccReader) absorb(path []int32, onPath []bool) []int32 {
	nodes := rd.nodes
	n := int32(len(nodes))
	// children, in file order
	start := make([]int32, n+1)
	for i := int32(0); i < n; i++ {
		if p := nodes[i].parent; p >= 0 {
			start[p+1]++
		}
	}
	for i := int32(0); i < n; i++ {
		start[i+1] += start[i]
	}
	kids := make([]int32, start[n])
	fill := append([]int32(nil), start[:n]...)
	for i := int32(0); i < n; i++ {
		if p := nodes[i].parent; p >= 0 {
			kids[fill[p]] = i
			fill[p]++
		}
	}

	msgIDs := map[string]bool{}
	calls := map[string]bool{}
	answered := map[string]bool{}
	forked := false
	for _, i := range path {
		rec := nodes[i].rec
		if start[i+1]-start[i] > 1 {
			forked = true
		}
		if rec == nil {
			continue
		}
		if nodes[i].kind == ccAssistant {
			if rec.msgID != "" {
				msgIDs[rec.msgID] = true
			}
			for _, p := range rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					calls[p.ToolCallID] = true
				}
			}
		}
		for _, res := range rec.results {
			answered[res.parts[0].ToolCallID] = true
		}
	}
	if !forked {
		return path
	}

	seen := make([]bool, n)
	order := make([]int32, 0, len(path))
	var sub, dfs []int32
	for _, x := range path {
		order = append(order, x)
		for _, c := range kids[start[x]:start[x+1]] {
			if onPath[c] || seen[c] {
				continue
			}
			// the side subtree, in preorder with children in file order
			sub, dfs = sub[:0], append(dfs[:0], c)
			for len(dfs) > 0 {
				s := dfs[len(dfs)-1]
				dfs = dfs[:len(dfs)-1]
				if seen[s] || onPath[s] {
					continue
				}
				seen[s] = true
				sub = append(sub, s)
				ks := kids[start[s]:start[s+1]]
				for k := len(ks) - 1; k >= 0; k-- {
					dfs = append(dfs, ks[k])
				}
			}
			if rd.parallelFork(sub, msgIDs, calls, answered) {
				order = append(order, sub...)
			}
		}
	}
	return order
}

// parallelFork reports whether a side subtree is a false fork left by
// parallel tool calls: made only of more records of the branch's own API
// responses and of results for calls not yet answered on the branch.
func (rd *ccReader) parallelFork(sub []int32, msgIDs, calls, answered map[string]bool) bool {
	var own map[string]bool // calls made in the subtree
	useful := false
	for _, s := range sub {
		nd := &rd.nodes[s]
		switch nd.kind {
		case ccSystem:
			if nd.flags&ccBoundary != 0 {
				return false
			}
		case ccAssistant:
			if nd.rec.msgID == "" || !msgIDs[nd.rec.msgID] {
				return false
			}
			for _, p := range nd.rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					if own == nil {
						own = map[string]bool{}
					}
					own[p.ToolCallID] = true
				}
			}
			useful = true
		}
	}
	for _, s := range sub {
		nd := &rd.nodes[s]
		if nd.kind != ccUser {
			continue
		}
		rec := nd.rec
		if rec.compactSummary || len(rec.results) == 0 || len(rec.parts) > 0 {
			return false
		}
		for _, res := range rec.results {
			id := res.parts[0].ToolCallID
			if id == "" || answered[id] || !(calls[id] || own[id]) {
				return false
			}
		}
		useful = true
	}
	if !useful {
		return false
	}
	for _, s := range sub {
		if rec := rd.nodes[s].rec; rec != nil {
			for _, res := range rec.results {
				answered[res.parts[0].ToolCallID] = true
			}
		}
	}
	return true
}

// assemble turns the ordered records into the thread's messages and
// digests.
func (rd *ccReader) assemble(th *ccThread, order, path []int32, leaf int32) {
	nodes := rd.nodes
	var (
		segStart  = 0  // first message since the last boundary
		lastAsst  = -1 // latest assistant message of this segment
		lastOther = -1 // latest message that is not a tool result
		pending   = -1 // digest waiting for its summary
		toolNames = map[string]string{}
	)
	for _, i := range order {
		nd := &nodes[i]
		if nd.flags&ccBoundary != 0 {
			pending = -1
			if len(th.msgs) > segStart {
				th.digests = append(th.digests, recordedDigestCC{
					from: th.msgs[segStart].key, to: th.msgs[len(th.msgs)-1].key,
				})
				pending = len(th.digests) - 1
			}
			segStart, lastAsst, lastOther = len(th.msgs), -1, -1
			continue
		}
		rec := nd.rec
		if rec == nil {
			continue
		}
		switch nd.kind {
		case ccAssistant:
			if len(rec.parts) == 0 {
				continue
			}
			for _, p := range rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					toolNames[p.ToolCallID] = p.ToolName
				}
			}
			// more of the latest response, with at most its first calls'
			// results in between
			if lastAsst >= 0 && lastOther == lastAsst && rec.msgID != "" && th.msgs[lastAsst].msgID == rec.msgID {
				m := &th.msgs[lastAsst]
				for _, p := range rec.parts {
					if p.Type == model.PartToolCall && p.ToolCallID != "" {
						if m.toolID[p.ToolCallID] {
							continue // written twice
						}
						if m.toolID == nil {
							m.toolID = map[string]bool{}
						}
						m.toolID[p.ToolCallID] = true
					}
					m.parts = append(m.parts, p)
				}
				continue
			}
			m := ccOut{key: nd.uuid, role: model.RoleAssistant, parts: rec.parts, at: nd.at, msgID: rec.msgID,
				meta: map[string]string{"uuid": nd.uuid}}
			if rec.model != "" {
				m.meta["model"] = rec.model
			}
			for _, p := range rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					if m.toolID == nil {
						m.toolID = map[string]bool{}
					}
					m.toolID[p.ToolCallID] = true
				}
			}
			// the slice is shared with the record: copy before appending
			m.parts = m.parts[:len(m.parts):len(m.parts)]
			th.msgs = append(th.msgs, m)
			lastAsst, lastOther = len(th.msgs)-1, len(th.msgs)-1
		case ccUser:
			if rec.compactSummary {
				if pending >= 0 {
					th.digests[pending].summary = strings.TrimSpace(formats.RenderContent(rec.parts))
					pending = -1
					continue
				}
				// nothing before the boundary to collapse: the summary is
				// all there is of the earlier conversation, so it stays
			}
			user := func() {
				if len(rec.parts) == 0 {
					return
				}
				m := ccOut{key: nd.uuid, role: model.RoleUser, parts: rec.parts, at: nd.at, isMeta: rec.isMeta,
					meta: map[string]string{"uuid": nd.uuid}}
				if rec.isMeta {
					m.meta["isMeta"] = "true"
				}
				if rec.compactSummary {
					m.meta["isCompactSummary"] = "true"
				}
				th.msgs = append(th.msgs, m)
				lastOther = len(th.msgs) - 1
			}
			tools := func() {
				for k, res := range rec.results {
					key := nd.uuid + "#" + strconv.Itoa(k+1)
					if k == 0 && len(rec.parts) == 0 {
						key = nd.uuid
					}
					id := res.parts[0].ToolCallID
					th.msgs = append(th.msgs, ccOut{key: key, role: model.RoleTool, name: toolNames[id],
						parts: res.parts, at: nd.at, meta: map[string]string{"uuid": nd.uuid}})
				}
			}
			if rec.resultsFirst {
				tools()
				user()
			} else {
				user()
				tools()
			}
		}
	}
	for k := range th.digests {
		if th.digests[k].summary == "" {
			th.digests[k].summary = ccDefaultSummary
		}
	}
	if len(th.msgs) == 0 {
		return
	}

	// Times: a record without one takes its predecessor's.
	var last int64
	for k := range th.msgs {
		if th.msgs[k].at != 0 {
			last = th.msgs[k].at
			break
		}
	}
	for k := range th.msgs {
		if th.msgs[k].at == 0 {
			th.msgs[k].at = last
		}
		last = th.msgs[k].at
	}

	// cwd and branch on the first message
	for _, i := range path {
		if rec := nodes[i].rec; rec != nil && (rec.cwd != "" || rec.gitBranch != "") {
			if rec.cwd != "" {
				th.msgs[0].meta["cwd"] = rec.cwd
			}
			if rec.gitBranch != "" {
				th.msgs[0].meta["gitBranch"] = rec.gitBranch
			}
			break
		}
	}

	th.info = formats.ThreadInfo{Key: rd.threadKey(path, leaf), Title: rd.threadTitle(th, ccPathSet(path)), Source: formats.ClaudeCode}
	if at := th.msgs[0].at; at != 0 {
		th.info.CreatedAt = time.Unix(0, at).UTC()
	}
}

func ccPathSet(path []int32) map[int32]bool {
	m := make(map[int32]bool, len(path))
	for _, i := range path {
		m[i] = true
	}
	return m
}

// threadKey is the session ID (the leaf's, as the file is named after
// it); an agent transcript, which carries its parent session's ID, adds
// its agent ID. A file without session IDs is known by its root's uuid.
func (rd *ccReader) threadKey(path []int32, leaf int32) string {
	nodes := rd.nodes
	sid := nodes[leaf].sessionID
	for k := len(path) - 1; sid == "" && k >= 0; k-- {
		sid = nodes[path[k]].sessionID
	}
	if nodes[leaf].flags&ccSidechain != 0 {
		for _, i := range path {
			if rec := nodes[i].rec; rec != nil && rec.agentID != "" {
				return sid + "/agent-" + rec.agentID
			}
		}
	}
	if sid == "" {
		return "uuid:" + nodes[path[0]].uuid
	}
	return sid
}

// threadTitle: the last custom title; else a summary of this branch (or
// of any record in the file, or the first one); else the first line of
// the first thing the user typed.
func (rd *ccReader) threadTitle(th *ccThread, onPath map[int32]bool) string {
	if rd.title != "" {
		return formats.CutTitle(rd.title)
	}
	best, rank := "", 0
	for _, s := range rd.summary {
		r := 1
		if i, ok := rd.index[s.leaf]; ok {
			r = 2
			if onPath[i] {
				r = 3
			}
		}
		if r > rank || (r == rank && r > 1) {
			best, rank = s.text, r
		}
	}
	if best != "" {
		return formats.CutTitle(best)
	}
	command := ""
	for _, m := range th.msgs {
		if m.role != model.RoleUser || m.isMeta {
			continue
		}
		text := strings.TrimSpace(formats.RenderContent(m.parts))
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "<") {
			if command == "" {
				command = ccCommand(text)
			}
			continue
		}
		return formats.CutTitle(text)
	}
	return formats.CutTitle(command)
}

// ccCommand reads "/name args" from a slash command's user record.
func ccCommand(text string) string {
	tag := func(name string) string {
		open, end := "<"+name+">", "</"+name+">"
		i := strings.Index(text, open)
		if i < 0 {
			return ""
		}
		rest := text[i+len(open):]
		j := strings.Index(rest, end)
		if j < 0 {
			return ""
		}
		return strings.TrimSpace(rest[:j])
	}
	name := tag("command-name")
	if name == "" {
		return ""
	}
	if args := tag("command-args"); args != "" {
		return name + " " + args
	}
	return name
}

func (th *ccThread) emit(emit formats.Emitter) error {
	if err := emit.Begin(th.info); err != nil {
		return err
	}
	for _, m := range th.msgs {
		nm := model.NewMessage{
			Role:    m.role,
			Content: formats.RenderContent(m.parts),
			Name:    m.name,
			Parts:   ccEncodeParts(m.parts),
			Meta:    m.meta,
		}
		if m.at != 0 {
			nm.CreatedAt = time.Unix(0, m.at).UTC()
		}
		if err := emit.Message(formats.Message{Key: m.key, NewMessage: nm}); err != nil {
			return err
		}
	}
	for _, d := range th.digests {
		if err := emit.Digest(d.from, d.to, d.summary); err != nil {
			return err
		}
	}
	return emit.End()
}

// ccHeap orders leaf candidates newest first.
type ccHeap struct {
	rd *ccReader
	s  []int32
}

func (h *ccHeap) Len() int           { return len(h.s) }
func (h *ccHeap) Less(i, j int) bool { return h.rd.newer(h.s[i], h.s[j]) }
func (h *ccHeap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *ccHeap) Push(x any)         { h.s = append(h.s, x.(int32)) }
func (h *ccHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
