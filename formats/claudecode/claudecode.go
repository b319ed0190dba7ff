// Package claudecode reads Claude Code session files
// (~/.claude/projects/*/*.jsonl) as threads.
package claudecode

import (
	"fmt"
	"io"

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
//   - a user record marked "weftRole":"system" (weft wrote it for a
//     system message: export.WriteClaudeCode) is that system message,
//     without the label line its text starts with.
//   - summary, custom-title: the thread's title.
//   - file-history-snapshot, queue-operation and anything else without a
//     uuid: metadata, skipped.
//
// The active branch is the path from the newest leaf (by timestamp, then
// file order) to its root; a /rewind leaves abandoned siblings that are
// not imported, and a Note counts them (branches and user and assistant
// records) and says where the first begins. Only records that carry conversation count as leaves: a
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
	// content is what parts render as (formats.RenderContent), when it
	// was made as their large text was decoded (ccRecord.decodeLarge);
	// "" otherwise.
	content string
	// results: a user's tool results, one message each.
	results []ccResult
	// resultsFirst: the record's first block is a tool result, so its tool
	// messages come before its user message.
	resultsFirst   bool
	isMeta         bool
	compactSummary bool
	// weftSystem: weft wrote the record for a system message (see
	// export.WriteClaudeCode), its text under a label line.
	weftSystem bool
}

type ccResult struct {
	parts []model.Part // the tool_result part, then any images it holds
	// content is the content its message renders as when it is the
	// part alone (formats.RenderContent), made with its text: "" for
	// one with images.
	content string
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
	// borrow: a block read is its part's Raw where it lies, not a copy
	// (ReadMessages, which encodes the parts at once and points them
	// into their encoding: formats.MessageParts).
	borrow bool
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
