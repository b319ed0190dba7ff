// Package chatgpt reads a ChatGPT data export's conversations.json as
// threads.
package chatgpt

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"weft/formats"
)

// ChatGPT's data export (conversations.json): a JSON array of
// conversations, each a tree of nodes in "mapping" (node id -> {parent,
// children, message}) with "current_node" naming the leaf the user last
// saw. The array is streamed one conversation at a time, so an export of
// hundreds of megabytes is never in memory whole. A file holding one
// conversation object, or several one after another (JSON lines), is read
// the same way.
//
// One conversation is one thread, keyed by its "id" (or
// "conversation_id"). A conversation with neither is keyed by a digest of
// its title and create_time, and a Problem says so: re-importing it finds
// the same session only while both stay the same.
//
// The thread is the path from current_node up to the root; answers that
// were regenerated, and edits that were abandoned, are branches off that
// path and are not imported. Without a usable current_node the newest
// leaf (by its message's create_time, then by place in the file) is taken.
//
// What becomes of each message on the path (keyed by its node id):
//
//   - message null (the root), a message without content, and messages
//     hidden from the conversation (metadata.
//     is_visually_hidden_from_conversation: the system prompt, custom
//     instructions, memory context): skipped.
//   - text and multimodal_text: text parts; image_asset_pointer objects are
//     image parts (with the media type of the attachment they point to,
//     when the message lists it), audio transcriptions are text, other
//     objects are kept as "other" parts.
//   - an assistant message addressed to a tool (recipient other than
//     "all"): a tool call. For content_type code the input is
//     {"code": text}; for text it is the text when that is JSON, else
//     {"text": text}. The call's ID is its node id. A code message without
//     a recipient is a call to the tool that answers it (the tool message
//     right after it on the path), else to "python".
//   - role tool, and execution_output content: a tool message with one
//     tool_result part (system_error content is an error result) plus the
//     images it shows, Name = author.name. It is linked to the latest
//     unanswered call before it on the path when that call went to the same
//     tool (or either name is unknown); a second result for one call, or a
//     result after a user message, is left unlinked.
//   - thoughts: one thinking part per thought (summary, then content);
//     reasoning_recap: a thinking part.
//   - any other content type, or a known one whose fields have shapes
//     this importer does not expect: one "other" part keeping the content.
//   - a message left with nothing to show (an empty system message, an
//     empty text answer) is skipped; a tool result never is.
//
// Meta: source_id (the message id), model (metadata.model_slug),
// content_type (when not text), recipient (of a tool call), attachments
// (their file names).
//
// Conversations without a mapping, conversations that are not objects and
// messages that cannot be read are Problems (Line 0, naming the
// conversation by its 1-based place in the file and its id or title); the
// rest of the file imports. A conversation whose path has no message to
// import is a Problem too, and emits nothing, as is a second
// conversation with the id of an earlier one. Bad JSON ends the reading
// at the conversation it breaks, which is a Problem; what came before it
// is imported. A file whose first element is no conversation (another
// format's records) is refused at once.

type cgConversation struct {
	ID             string          `json:"id"`
	ConversationID string          `json:"conversation_id"`
	Title          string          `json:"title"`
	CreateTime     json.RawMessage `json:"create_time"`
	CurrentNode    string          `json:"current_node"`
	Mapping        json.RawMessage `json:"mapping"`
}

type cgNode struct {
	Parent  string          `json:"parent"`
	Message json.RawMessage `json:"message"`
}

type cgMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"author"`
	CreateTime json.RawMessage `json:"create_time"`
	Content    json.RawMessage `json:"content"`
	Recipient  string          `json:"recipient"`
	Metadata   json.RawMessage `json:"metadata"`
}

type cgContent struct {
	ContentType string            `json:"content_type"`
	Parts       []json.RawMessage `json:"parts"`
	Text        string            `json:"text"`
	Thoughts    []json.RawMessage `json:"thoughts"`
	Content     json.RawMessage   `json:"content"`
	Result      string            `json:"result"`
}

// cgMeta is what is read of a message's metadata, leniently: a field of
// an unexpected type is left out rather than losing the message.
type cgMeta struct {
	hidden      bool
	model       string
	attachments []cgAttachment
}

type cgAttachment struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
}

// cgPathMsg is a message on the active path, decoded.
type cgPathMsg struct {
	node    string
	msg     cgMessage
	content cgContent
	meta    cgMeta
	loose   bool // content read for its type only
}

type cgReader struct {
	emit     formats.Emitter
	problems formats.Problems
	seen     map[string]bool // thread keys emitted
	threads  int
}

// Read reads a ChatGPT export's conversations.json: one thread per
// conversation, the branch the user last saw.
func Read(r io.Reader, emit formats.Emitter) ([]formats.Problem, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := formats.FirstByte(br)
	if err == io.EOF {
		return nil, errors.New("empty file")
	}
	if err != nil {
		return nil, err
	}
	cg := &cgReader{emit: emit, seen: map[string]bool{}}
	dec := json.NewDecoder(br)
	var fatal string // why reading stopped early, if it did
	switch first {
	case '[':
		fatal, err = cg.readArray(dec)
	case '{':
		fatal, err = cg.readObjects(dec)
	default:
		head, _ := br.Peek(16)
		return nil, fmt.Errorf("not a ChatGPT export: conversations.json is a JSON array of conversations, and this file starts with %q", head)
	}
	problems := cg.problems.Result()
	if err != nil {
		return problems, err
	}
	if cg.threads > 0 {
		return problems, nil
	}
	if fatal != "" {
		return problems, fmt.Errorf("no ChatGPT conversation could be read: %s", fatal)
	}
	return problems, errors.New("no ChatGPT conversation with messages found: is this a ChatGPT export's conversations.json?")
}

// cgDecodeErr tells a broken or cut-off document (a problem: what came
// before is imported) from a failing reader (an error).
func cgDecodeErr(err error, what string) (string, error) {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Sprintf("the file ends inside %s (is it cut off?)", what), nil
	case errors.As(err, &syn):
		return fmt.Sprintf("%s is not valid JSON (byte %d): %s", what, syn.Offset, formats.ShortError(err)), nil
	}
	return "", fmt.Errorf("reading %s: %w", what, err)
}

func (cg *cgReader) readArray(dec *json.Decoder) (string, error) {
	if _, err := dec.Token(); err != nil { // the '['
		return cgDecodeErr(err, "the conversation list")
	}
	n := 0
	found := false // a conversation object was seen
	first := ""    // what the first element is
	for dec.More() {
		n++
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			fatal, err := cgDecodeErr(err, fmt.Sprintf("conversation %d", n))
			if fatal != "" {
				cg.problems.Add(0, fatal+"; the rest of the file is not read")
			}
			return fatal, err
		}
		if n == 1 {
			first = formats.DescribeJSON(raw)
		}
		if !found {
			if err := cg.leading(n, raw, "element"); err != nil {
				return "", err
			}
			found = cgIsObject(raw)
		}
		if err := cg.conversation(n, raw); err != nil {
			return "", err
		}
	}
	if _, err := dec.Token(); err != nil { // the ']'
		what := "the conversation list"
		if n > 0 {
			what += fmt.Sprintf(" after conversation %d", n)
		}
		fatal, err := cgDecodeErr(err, what)
		if fatal != "" {
			cg.problems.Add(0, fatal)
		}
		return fatal, err
	}
	if _, err := dec.Token(); err != io.EOF {
		cg.problems.Add(0, "data after the end of the conversation list is ignored")
	}
	if n > 0 && !found {
		return "", fmt.Errorf("not a ChatGPT export: none of its %d elements is a conversation object (the first is %s)", n, first)
	}
	if n == 0 {
		return "the export's conversation list is empty", nil
	}
	return "", nil
}

// readObjects reads conversations written as objects one after another
// (a single conversation, or JSON lines of them).
func (cg *cgReader) readObjects(dec *json.Decoder) (string, error) {
	n := 0
	found := false // a conversation object was seen
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return "", nil
		}
		n++
		if err != nil {
			fatal, err := cgDecodeErr(err, fmt.Sprintf("conversation %d", n))
			if fatal != "" {
				cg.problems.Add(0, fatal+"; the rest of the file is not read")
			}
			return fatal, err
		}
		if !found {
			if err := cg.leading(n, raw, "value"); err != nil {
				return "", err
			}
			found = cgIsObject(raw)
		}
		if err := cg.conversation(n, raw); err != nil {
			return "", err
		}
	}
}

// leading checks a value that comes before the file's first object: the
// first object must look like a conversation, else this is not a ChatGPT
// export; a few values that are no object at all (a null) are skipped
// (conversation reports each), as format detection skips them.
func (cg *cgReader) leading(n int, raw json.RawMessage, what string) error {
	switch {
	case cgIsObject(raw):
		if !cgLooksLikeConversation(raw) {
			return fmt.Errorf("not a ChatGPT export: its first object (%s %d) is %s, not a conversation (with mapping, current_node, title)", what, n, formats.DescribeJSON(raw))
		}
	case n >= formats.DetectRecords:
		return fmt.Errorf("not a ChatGPT export: its first %d %ss are no conversations (the first is %s)", n, what, formats.DescribeJSON(raw))
	}
	return nil
}

func cgIsObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

var cgConversationKeys = []string{"mapping", "current_node", "conversation_id", "create_time", "update_time", "title"}

func cgLooksLikeConversation(raw json.RawMessage) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return false
	}
	for _, k := range cgConversationKeys {
		if _, ok := keys[k]; ok {
			return true
		}
	}
	return false
}

func cgLabel(n int, c *cgConversation) string {
	switch {
	case c.ID != "":
		return fmt.Sprintf("conversation %d (%s)", n, c.ID)
	case c.ConversationID != "":
		return fmt.Sprintf("conversation %d (%s)", n, c.ConversationID)
	case c.Title != "":
		return fmt.Sprintf("conversation %d %q", n, c.Title)
	}
	return fmt.Sprintf("conversation %d", n)
}

// conversation reads one conversation and emits it as a thread. Only an
// emitter error is returned; everything else is a problem.
func (cg *cgReader) conversation(n int, raw json.RawMessage) error {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
		cg.problems.Add(0, fmt.Sprintf("conversation %d is %s, not a conversation object; skipped", n, formats.DescribeJSON(raw)))
		return nil
	}
	var c cgConversation
	if err := json.Unmarshal(raw, &c); err != nil {
		cg.problems.Add(0, fmt.Sprintf("conversation %d is not a ChatGPT conversation: %s; skipped", n, formats.DescribeError(err)))
		return nil
	}
	label := cgLabel(n, &c)
	if m := bytes.TrimSpace(c.Mapping); len(m) == 0 || string(m) == "null" {
		cg.problems.Add(0, label+" has no mapping (the tree of its messages); skipped")
		return nil
	}
	order, nodes, err := cgReadMapping(c.Mapping)
	if err != nil {
		cg.problems.Add(0, fmt.Sprintf("%s: its mapping is not readable: %s; skipped", label, err))
		return nil
	}

	key, derived := c.ID, false
	if key == "" {
		key = c.ConversationID
	}
	if key == "" {
		h := sha256.New()
		h.Write([]byte(c.Title))
		h.Write([]byte{0})
		h.Write(bytes.TrimSpace(c.CreateTime))
		key, derived = "derived-"+hex.EncodeToString(h.Sum(nil))[:16], true
	}
	if cg.seen[key] {
		cg.problems.Add(0, fmt.Sprintf("%s has the id of an earlier conversation in this file; skipped", label))
		return nil
	}

	path := cgPath(c.CurrentNode, order, nodes)
	var msgs []cgPathMsg
	for _, id := range path {
		nraw := bytes.TrimSpace(nodes[id].Message)
		if len(nraw) == 0 || string(nraw) == "null" {
			continue
		}
		var pm cgPathMsg
		pm.node = id
		if err := json.Unmarshal(nraw, &pm.msg); err != nil {
			cg.problems.Add(0, fmt.Sprintf("%s: message %s is not readable: %s; skipped", label, id, formats.DescribeError(err)))
			continue
		}
		pm.meta = cgReadMeta(pm.msg.Metadata)
		c := bytes.TrimSpace(pm.msg.Content)
		if pm.meta.hidden || len(c) == 0 || string(c) == "null" {
			continue // not shown, or nothing said
		}
		if err := json.Unmarshal(c, &pm.content); err != nil {
			// a content type with fields of shapes this importer does not
			// know: kept whole, as long as it says what it is
			var ct struct {
				ContentType string `json:"content_type"`
			}
			if json.Unmarshal(c, &ct) != nil || ct.ContentType == "" {
				cg.problems.Add(0, fmt.Sprintf("%s: message %s has unreadable content: %s; skipped", label, id, formats.DescribeError(err)))
				continue
			}
			pm.content, pm.loose = cgContent{ContentType: ct.ContentType}, true
		}
		msgs = append(msgs, pm)
	}

	out := cg.build(label, msgs)
	if len(out) == 0 {
		cg.problems.Note(0, label+" has no message to import; skipped")
		return nil
	}
	if derived {
		cg.problems.Note(0, fmt.Sprintf("%s has no id: its key %s is made from its title and create time", label, key))
	}
	cg.seen[key] = true
	cg.threads++
	if err := cg.emit.Begin(formats.ThreadInfo{Key: key, Title: c.Title, Source: formats.ChatGPT, CreatedAt: cgTime(c.CreateTime)}); err != nil {
		return err
	}
	for _, m := range out {
		if err := cg.emit.Message(m); err != nil {
			return err
		}
	}
	return cg.emit.End()
}

// cgReadMapping reads the mapping object in file order. A node that is
// not readable is left out (the path stops at it).
func cgReadMapping(raw json.RawMessage) ([]string, map[string]*cgNode, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, errors.New(formats.ShortError(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("it is %s, not an object", formats.DescribeJSON(raw))
	}
	var order []string
	nodes := map[string]*cgNode{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, errors.New(formats.ShortError(err))
		}
		id, _ := tok.(string)
		var nraw json.RawMessage
		if err := dec.Decode(&nraw); err != nil {
			return nil, nil, errors.New(formats.ShortError(err))
		}
		nd := &cgNode{}
		if json.Unmarshal(nraw, nd) != nil {
			continue
		}
		if _, ok := nodes[id]; !ok {
			order = append(order, id)
		}
		nodes[id] = nd
	}
	return order, nodes, nil
}

// cgPath is the node ids from the root down to current (or, if current
// names no node, to the newest leaf).
func cgPath(current string, order []string, nodes map[string]*cgNode) []string {
	if _, ok := nodes[current]; !ok {
		current = cgNewestLeaf(order, nodes)
	}
	var path []string
	seen := map[string]bool{}
	for id := current; id != "" && !seen[id]; {
		nd, ok := nodes[id]
		if !ok {
			break
		}
		seen[id] = true
		path = append(path, id)
		id = nd.Parent
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

func cgNewestLeaf(order []string, nodes map[string]*cgNode) string {
	parents := make(map[string]bool, len(nodes))
	for _, nd := range nodes {
		if nd.Parent != "" {
			parents[nd.Parent] = true
		}
	}
	best, bestAt := "", time.Time{}
	for _, id := range order {
		if parents[id] {
			continue
		}
		var m struct {
			CreateTime json.RawMessage `json:"create_time"`
		}
		_ = json.Unmarshal(nodes[id].Message, &m)
		at := cgTime(m.CreateTime)
		if best == "" || !at.Before(bestAt) {
			best, bestAt = id, at
		}
	}
	return best
}

func cgReadMeta(raw json.RawMessage) cgMeta {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return cgMeta{}
	}
	var m cgMeta
	_ = json.Unmarshal(fields["is_visually_hidden_from_conversation"], &m.hidden)
	_ = json.Unmarshal(fields["model_slug"], &m.model)
	if json.Unmarshal(fields["attachments"], &m.attachments) != nil {
		m.attachments = nil
	}
	return m
}

// cgTime reads a ChatGPT timestamp: float seconds since the epoch (or
// such a number in a string), exactly to the digits written. null, and
// anything else, give the zero time.
func cgTime(raw json.RawMessage) time.Time {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}
	}
	s := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}
		}
		s = strings.TrimSpace(s)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC()
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f > 253402300799 { // up to year 9999
		return time.Time{}
	}
	if !strings.ContainsAny(s, "eE") {
		whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "+"), ".")
		sec, err1 := strconv.ParseInt(whole, 10, 64)
		frac = (frac + "000000000")[:9]
		nsec, err2 := strconv.ParseInt(frac, 10, 64)
		if err1 == nil && err2 == nil {
			return time.Unix(sec, nsec).UTC()
		}
	}
	sec := math.Floor(f)
	nsec := min(int64(math.Round((f-sec)*1e9)), 999999999)
	return time.Unix(int64(sec), nsec).UTC()
}
