// Package formats reads conversation files into threads and writes
// threads out in the formats model providers and people take.
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

const (
	ClaudeCode Format = "claude-code"
	ChatGPT    Format = "chatgpt"
	Codex      Format = "codex"
	OpenAI     Format = "openai"
	ShareGPT   Format = "sharegpt"
	Weft       Format = "weft"
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
}

// Message is a message to import.
type Message struct {
	// Key is unique within the thread and stable across re-reads of the
	// same source (a record's UUID, or an ordinal and digest). Where
	// Format.GlobalKeys is false, two threads may use the same key: the
	// importer's caller qualifies it with the thread's Key.
	Key string
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

// maxProblems bounds the problems an import lists for one file; the rest
// are counted in a last one.
const maxProblems = 100

// problemList collects an importer's problems, keeping the list short.
type problemList struct {
	list     []Problem
	dropped  int
	firstOut int // line of the first problem not listed
}

func (p *problemList) add(line int, msg string) { p.put(Problem{Line: line, Err: msg}) }

// note adds a remark where nothing was lost.
func (p *problemList) note(line int, msg string) { p.put(Problem{Line: line, Err: msg, Note: true}) }

func (p *problemList) put(pr Problem) {
	if len(p.list) >= maxProblems {
		if p.dropped == 0 {
			p.firstOut = pr.Line
		}
		p.dropped++
		return
	}
	p.list = append(p.list, pr)
}

func (p *problemList) result() []Problem {
	if p.dropped == 0 {
		return p.list
	}
	return append(p.list, Problem{Line: p.firstOut, Err: fmt.Sprintf("%d more problems from this line on are not listed", p.dropped), More: p.dropped})
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
