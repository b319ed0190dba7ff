package claudecode

import (
	"bytes"
	"encoding/json"

	"weft/formats"
)

// pendingLines bounds how far back Pending looks for the last response.
const pendingLines = 10000

// Pending says how much of a growing Claude Code session file (data:
// whole lines) can be imported without cutting a response short: the
// offset where the records that may still change begin, len(data) when
// none may.
//
// Claude Code versions that write a response a block at a time (each
// record's stop_reason null; 2.1.38 does) may add more blocks to the
// last response, and may write the results of its first tool calls
// between them; weft keeps the first version of a message it imported,
// so importing such a response early would lose its later blocks. The
// last response's records, and what follows them, are held back until a
// user's prompt or the next response follows. A response whose records
// carry its stop_reason (written once complete, as 2.1.330 does) is not
// held. A compaction's boundary waits for the summary written after it,
// which its digest is made of.
func Pending(data []byte) int {
	cut := len(data)
	last := "" // the message ID of the last response, once found
	end := len(data)
	for n := 0; end > 0 && n < pendingLines; n++ {
		start := bytes.LastIndexByte(data[:end-1], '\n') + 1
		line := bytes.TrimSpace(data[start:end])
		end = start
		var h ccHead
		if len(line) == 0 || line[0] != '{' || !parse(line, &h) {
			continue
		}
		typ, _ := formats.DecodeString(h.Type)
		if sub, _ := formats.DecodeString(h.Subtype); typ == "system" && sub == "compact_boundary" {
			if last == "" {
				return start // its summary comes next: the digest waits for it
			}
			return cut
		}
		var msg struct {
			ID         json.RawMessage `json:"id"`
			StopReason json.RawMessage `json:"stop_reason"`
			Content    json.RawMessage `json:"content"`
		}
		if typ != "user" && typ != "assistant" || formats.IsNull(h.Message) || !parse(h.Message, &msg) {
			continue // progress, system, metadata: they do not end a response
		}
		if typ == "user" {
			if !ccOnlyResults(msg.Content) {
				return cut // a prompt: what came before it is complete
			}
			continue
		}
		id, _ := formats.DecodeString(msg.ID)
		switch {
		case last == "" && (!formats.IsNull(msg.StopReason) || id == ""):
			return len(data) // written complete, or nothing to tell its records by
		case last == "":
			last = id
		case id != last:
			return cut // the response before it is complete
		}
		cut = start
	}
	return cut
}

// ccOnlyResults reports whether a user record's content is tool results
// only (what Claude Code writes between the blocks of a response).
func ccOnlyResults(content []byte) bool {
	if formats.IsNull(content) || content[0] != '[' {
		return false
	}
	blocks := ccContentBlocks(content)
	for i := range blocks {
		if !blocks[i].is("tool_result") {
			return false
		}
	}
	return len(blocks) > 0
}
