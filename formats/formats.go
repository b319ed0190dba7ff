// Package formats holds what weft's importers and exporters share: the
// types an importer streams (ThreadInfo, Message, Problem) to an
// Emitter, the Item an exporter takes, format detection, the line
// reader, and the one set of JSON helpers (decoding a string, compacting,
// describing a value or an error, encoding parts, media types, titles).
// Each format has a package of its own below this one (claudecode,
// chatgpt, codex, openai, sharegpt, weftjsonl); export writes threads
// out, and readers maps a Format to its importer.
//
// Importers know file formats and nothing of storage: they stream what
// they read to an Emitter, which the service turns into sessions. Each
// message carries an import key that is stable across re-reads of the
// same source, so importing a file twice adds nothing and importing a
// longer version of a growing session adds only the new messages.
package formats

import (
	"errors"
	"fmt"
	"io"
	"time"

	"weft/model"
)

// Format names a file format.
type Format string

// The formats weft imports.
const (
	// ClaudeCode is a Claude Code session file (~/.claude/projects/*/*.jsonl).
	ClaudeCode Format = "claude-code"
	// ChatGPT is a ChatGPT data export's conversations.json.
	ChatGPT Format = "chatgpt"
	// Codex is a Codex CLI rollout file (~/.codex/sessions/.../rollout-*.jsonl).
	Codex Format = "codex"
	// OpenAI is chat-completions messages, alone or in records.
	OpenAI Format = "openai"
	// ShareGPT is records of {"conversations": [{"from", "value"}]}.
	ShareGPT Format = "sharegpt"
	// Weft is weft's own lossless JSONL.
	Weft Format = "weft"
)

// Formats lists the importable formats.
var Formats = []Format{ClaudeCode, ChatGPT, Codex, OpenAI, ShareGPT, Weft}

// ThreadInfo describes a thread as its source has it.
type ThreadInfo struct {
	// Key identifies the conversation in its source (a session or
	// conversation ID); re-importing the same key finds the same session.
	// Importers without one derive it from the content.
	Key       string
	Title     string
	Source    Format
	CreatedAt time.Time
	// ActiveTags, where the source records them (weft's own format).
	ActiveTags []string
	// SourceKeys, where the source records them (weft's own format):
	// the other source threads the session was imported from, as weft
	// names them ("claude-code:<session id>"). Importing any of them
	// again, wherever the session has moved, finds the same session.
	SourceKeys []string
}

// Message is a message to import.
type Message struct {
	// Key is unique within the thread and stable across re-reads of the
	// same source (a record's UUID, or an ordinal and digest). Where
	// Format.GlobalKeys is false, two threads may use the same key: the
	// importer's caller qualifies it with the thread's Key.
	Key string
	// Aliases are further keys the message is known by, as weft stores
	// them (already qualified, never qualified again): the import keys a
	// weft export carries from the file it was made in, so the sources
	// the message first came from recognise it wherever it moves.
	Aliases []string
	// Digest is model.ContentDigest of the message's role and content
	// where the reader hashed them already (for its keys), so the
	// importer does not hash every message twice; empty otherwise.
	Digest string
	model.NewMessage
}

// GlobalKeys reports whether the format's message keys name a message
// apart from its thread: a Claude Code record's UUID, a weft message's
// session and seq. Such a message is recognised again when another
// file (a resumed session) holds it too. The others' keys (an ordinal
// and digest, a line, a node of one conversation's tree) only identify a
// message within its thread.
func (f Format) GlobalKeys() bool { return f == ClaudeCode || f == Weft }

// Emitter receives what an importer reads, thread by thread: Begin, the
// thread's messages and digests in order, End. An error from the emitter
// stops the import.
type Emitter interface {
	Begin(t ThreadInfo) error
	Message(m Message) error
	// Digest collapses the messages from fromKey to toKey (inclusive,
	// both already emitted in this thread) into a summary: how a
	// compaction in the source is kept, so the operator can expand it.
	Digest(fromKey, toKey, summary string) error
	// Op records an operation of weft's own format (weft JSONL only).
	Op(op model.Op) error
	End() error
}

// Problem is a record an importer could not read, or could read only in
// part. The rest of the file is still imported. A Note is a remark on
// how something was read, where nothing was lost (a key made up for a
// conversation without an ID, an empty record skipped).
type Problem struct {
	Line int // 1-based; 0 when the format has no lines
	Err  string
	Note bool
	// More, on the last problem of a long list, counts the problems
	// not listed (Err says so).
	More int
}

// String is the problem as a line of a report: "line 12: not JSON".
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Err)
	}
	return p.Err
}

// ErrUnknownFormat is returned when a file's format cannot be told.
var ErrUnknownFormat = errors.New("unknown format")

// Reader is an importer: it reads one file and streams its threads.
type Reader func(r io.Reader, emit Emitter) ([]Problem, error)
