package export

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"weft/formats"
	"weft/model"
)

// A Claude Code transcript (~/.claude/projects/<project>/<session>.jsonl)
// is what `claude --resume` reads: one JSON record a line, the
// conversation's records chained by uuid/parentUuid. WriteClaudeCode
// writes the effective thread as one: a custom-title record with the
// session's title, then one user or assistant record per item, in
// order, each carrying the session ID, the project's folder (cwd), the
// version, the item's time and a uuid of its own (derived from the
// session ID, so the same session ID gives the same file) whose parent
// is the record before. Checked against Claude Code 2.1.330, which resumes such a file
// and sends the thread as it is written (see the README).
//
// The thread is read as the Messages API body is (planMessages): the
// same pairing of tool calls and results, the same IDs and names, the
// same folding into text of what cannot stand as it is, so the Report
// is the Anthropic exporter's. But where that body merges consecutive
// messages of a role, the transcript keeps one record per item (Claude
// Code merges them when it sends the thread, and puts tool results
// first), so reading it back gives the items again: an assistant's
// records each get their own message ID, which is what keeps the
// importer from merging them.
//
// A system item (a digest's summary, an inserted note, a system prompt)
// has no place in a transcript: it is a user record whose text starts
// with a label line, "[summary of 14 messages, 2026-03-01 10:02–11:40
// UTC]" for a summary, "[system]" otherwise, and the record is marked
// "weftRole":"system", which Claude Code ignores and weft's importer
// reads back as a system message without the label.

// ClaudeCodeVersion is the Claude Code version a transcript's records
// claim when ClaudeCodeOptions leave it out: the one this writer was
// checked against.
const ClaudeCodeVersion = "2.1.330"

// ClaudeCodeSystemRole is the value of the "weftRole" field that marks a
// record standing for a system message (see WriteClaudeCode).
const ClaudeCodeSystemRole = "system"

// ClaudeCodeOptions say what a transcript's records carry besides the
// thread.
type ClaudeCodeOptions struct {
	// SessionID is the transcript's session ID, a UUID (the file is
	// named after it); empty: a new one.
	SessionID string
	// Cwd is the project's folder, as Claude Code records it.
	Cwd string
	// Title, if set, is written as the session's custom title.
	Title string
	// Version is the Claude Code version the records claim; empty:
	// ClaudeCodeVersion.
	Version string
	// Now is the time of a record whose item has none (and of the
	// first, when no item before it has one).
	Now time.Time
}

// ccRecord is a user or assistant record of a transcript, its fields in
// Claude Code's order.
type ccRecord struct {
	ParentUUID  *string   `json:"parentUuid"`
	IsSidechain bool      `json:"isSidechain"`
	UserType    string    `json:"userType"`
	Cwd         string    `json:"cwd"`
	SessionID   string    `json:"sessionId"`
	Version     string    `json:"version"`
	Type        string    `json:"type"`
	Message     ccMessage `json:"message"`
	IsMeta      bool      `json:"isMeta,omitempty"`
	UUID        string    `json:"uuid"`
	Timestamp   string    `json:"timestamp"`
	WeftRole    string    `json:"weftRole,omitempty"`
}

// ccMessage is a record's message: a user's content is a string when it
// is one text, else blocks; an assistant's is an API response's.
type ccMessage struct {
	ID         string `json:"id,omitempty"`
	Type       string `json:"type,omitempty"`
	Role       string `json:"role"`
	Model      string `json:"model,omitempty"`
	Content    any    `json:"content"`
	StopReason string `json:"stop_reason,omitempty"`
}

// ccTitle is the record that names the session.
type ccTitle struct {
	Type        string `json:"type"`
	CustomTitle string `json:"customTitle"`
	SessionID   string `json:"sessionId"`
}

// WriteClaudeCode writes items as a Claude Code transcript, and says in
// the Report what it had to change (as the Anthropic exporter does).
func WriteClaudeCode(w io.Writer, items []formats.Item, opts ClaudeCodeOptions) (Report, error) {
	an := planMessages(items, false, false)
	x := an.x
	if opts.SessionID == "" {
		opts.SessionID = NewClaudeCodeSessionID()
	}
	if opts.Version == "" {
		opts.Version = ClaudeCodeVersion
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if opts.Title != "" {
		if err := enc.Encode(ccTitle{Type: "custom-title", CustomTitle: opts.Title, SessionID: opts.SessionID}); err != nil {
			return x.report(), err
		}
	}
	cw := ccWriter{enc: enc, opts: opts, at: opts.Now, ns: uuidBytes(opts.SessionID)}
	if an.continued {
		cw.at = firstTime(items, opts.Now)
		if err := cw.record("user", ccMessage{Role: "user", Content: "(continued)"}, nil); err != nil {
			return x.report(), err
		}
	}
	var blocks []AnthropicBlock
	n := 0
	for i := range x.xi {
		xi := &x.xi[i]
		if !xi.live() {
			continue
		}
		it := &items[i]
		if !it.CreatedAt.IsZero() {
			cw.at = it.CreatedAt
		}
		role := model.RoleUser
		if xi.role == model.RoleAssistant {
			role = model.RoleAssistant
		}
		blocks = x.anBlocks(&xaMsg{role: role, lo: xi.lo, hi: xi.hi}, blocks[:0])
		var err error
		if role == model.RoleAssistant {
			n++
			msg := ccMessage{ID: ccMessageID(opts.SessionID, n), Type: "message", Role: "assistant", Model: it.Meta["model"],
				Content: ownBlocks(blocks), StopReason: "end_turn"}
			if msg.Model == "" {
				msg.Model = "<synthetic>"
			}
			for k := range blocks {
				if blocks[k].Type == "tool_use" {
					msg.StopReason = "tool_use"
				}
			}
			err = cw.record("assistant", msg, nil)
		} else {
			var mark func(*ccRecord)
			if xi.role == model.RoleSystem {
				blocks[0].Text = ccLabel(it) + "\n" + blocks[0].Text
				mark = func(r *ccRecord) { r.WeftRole = ClaudeCodeSystemRole }
			} else if it.Meta["isMeta"] == "true" {
				mark = func(r *ccRecord) { r.IsMeta = true }
			}
			msg := ccMessage{Role: "user", Content: ownBlocks(blocks)}
			if len(blocks) == 1 && blocks[0].Type == "text" {
				msg.Content = blocks[0].Text
			}
			err = cw.record("user", msg, mark)
		}
		if err != nil {
			return x.report(), err
		}
	}
	return x.report(), bw.Flush()
}

// ccWriter writes a transcript's records, each the child of the one
// before.
type ccWriter struct {
	enc    *json.Encoder
	opts   ClaudeCodeOptions
	parent string
	at     time.Time
	// ns and n name the records: the n-th record's uuid is a name-based
	// UUID of n in the session's namespace, so an export under a given
	// session ID is the same every time, and no two sessions share one.
	ns []byte
	n  int
}

func (cw *ccWriter) record(typ string, msg ccMessage, mark func(*ccRecord)) error {
	r := ccRecord{
		UserType: "external", Cwd: cw.opts.Cwd, SessionID: cw.opts.SessionID, Version: cw.opts.Version,
		Type: typ, Message: msg, UUID: nameUUID(cw.ns, strconv.Itoa(cw.n)), Timestamp: cw.at.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if cw.parent != "" {
		parent := cw.parent
		r.ParentUUID = &parent
	}
	if mark != nil {
		mark(&r)
	}
	cw.parent = r.UUID
	cw.n++
	return cw.enc.Encode(&r)
}

// ownBlocks is a copy of blocks the writer reuses, a result's text as a
// string.
func ownBlocks(blocks []AnthropicBlock) []AnthropicBlock {
	m := AnthropicMessage{Content: blocks}
	return m.own().Content
}

// firstTime is the time of the first item that has one, else now.
func firstTime(items []formats.Item, now time.Time) time.Time {
	for i := range items {
		if !items[i].CreatedAt.IsZero() {
			return items[i].CreatedAt
		}
	}
	return now
}

// ccMessageID is the API message ID of the transcript's n-th assistant
// record: unique in the file, so no two records are read as parts of
// one response.
func ccMessageID(session string, n int) string {
	s := session
	if len(s) > 8 {
		s = s[:8]
	}
	return "msg_weft_" + s + "_" + strconv.Itoa(n)
}

// ccLabel is the label line of a system item written as a user record:
// what the item is, and for a summary what it stands for.
func ccLabel(it *formats.Item) string {
	if !it.Summary {
		return "[system]"
	}
	what := "earlier messages"
	if it.MessageCount > 0 {
		what = strconv.Itoa(it.MessageCount) + " messages"
		if it.MessageCount == 1 {
			what = "1 message"
		}
	}
	if !it.TimeSpanStart.IsZero() {
		last := it.TimeSpanEnd
		if last.IsZero() {
			last = it.TimeSpanStart // a span without an end: one time
		}
		what += ", " + formats.SpanText(it.TimeSpanStart, last)
	}
	return "[summary of " + what + "]"
}

// NewClaudeCodeSessionID is a new session ID as Claude Code makes them:
// a random (version 4) UUID.
func NewClaudeCodeSessionID() string { return newUUID() }

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// uuidBytes is a UUID's 16 bytes, or, for a string that is not one, the
// string itself (as a namespace it only needs to be the session's).
func uuidBytes(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 {
		return []byte(s)
	}
	return b
}

// nameUUID is the name-based (version 5, SHA-1) UUID of name in the
// namespace ns, as RFC 9562 makes them.
func nameUUID(ns []byte, name string) string {
	h := sha1.New()
	h.Write(ns)
	h.Write([]byte(name))
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// claudeCodeMaxDir is how long a project's folder name may be before
// Claude Code cuts it and adds a hash.
const claudeCodeMaxDir = 200

// ClaudeCodeProjectDir is the name of the folder under Claude Code's
// projects/ that holds the transcripts of the project at cwd, as Claude
// Code names it: every character but an ASCII letter or digit becomes
// "-" (one per UTF-16 unit, as JavaScript's replace counts them), and a
// name longer than 200 is cut there and followed by "-" and a hash of
// cwd in base 36.
func ClaudeCodeProjectDir(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	b := make([]byte, len(units))
	for i, u := range units {
		switch {
		case u >= 'a' && u <= 'z', u >= 'A' && u <= 'Z', u >= '0' && u <= '9':
			b[i] = byte(u)
		default:
			b[i] = '-'
		}
	}
	if len(b) <= claudeCodeMaxDir {
		return string(b)
	}
	// JavaScript's string hash: h = h*31 + unit, in 32 bits.
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(b[:claudeCodeMaxDir]) + "-" + strconv.FormatInt(abs, 36)
}
