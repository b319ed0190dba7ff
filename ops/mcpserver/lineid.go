package mcpserver

import (
	"encoding/json"
)

// idFinder finds the id of a JSON-RPC message as its bytes go by, without
// decoding or keeping the message: the value of the key "id" of the
// top-level object, wherever it stands (the TypeScript SDK writes it
// last). A line too long to take is answered with it, so the client is
// not left waiting for an answer to its request.
//
// It reads JSON as it is written, and anything else without harm: what it
// finds is checked as an id (idProblem) before it is used.
type idFinder struct {
	started  bool
	depth    int
	inString bool
	escaped  bool
	// key is the current key of the top-level object while it is read
	// (up to a few bytes: only "id" matters), and afterColon whether its
	// value is being read.
	key        []byte
	keyLong    bool
	afterColon bool
	// value gathers the id's value.
	value    []byte
	inValue  bool
	found    json.RawMessage
	finished bool
}

// maxIDBytes bounds an id weft reads back out of a line.
const maxIDBytes = 256

// write reads more of the message.
func (f *idFinder) write(p []byte) {
	for _, c := range p {
		if f.finished {
			return
		}
		f.step(c)
	}
}

func (f *idFinder) step(c byte) {
	if !f.started {
		switch c {
		case ' ', '\t', '\r', '\n':
			return
		case '{':
			f.started = true
		default:
			// A batch, or not JSON: no one id answers for it.
			f.finished = true
			return
		}
	}
	if f.inString {
		switch {
		case f.escaped:
			f.escaped = false
		case c == '\\':
			f.escaped = true
		case c == '"':
			f.inString = false
		}
		switch {
		case f.inValue:
			f.keepValue(c)
			if !f.inString {
				f.finish()
			}
		case f.depth == 1 && !f.afterColon && f.inString:
			if len(f.key) < 8 {
				f.key = append(f.key, c)
			} else {
				f.keyLong = true
			}
		}
		return
	}
	switch c {
	case ' ', '\t', '\r', '\n':
		if f.inValue && len(f.value) > 0 {
			f.finish()
		}
	case '"':
		f.inString = true
		if f.depth == 1 && !f.afterColon {
			f.key, f.keyLong = f.key[:0], false
		} else if f.depth == 1 && f.isID() && len(f.value) == 0 {
			f.inValue = true
			f.keepValue(c)
		}
	case '{', '[':
		f.depth++
	case '}', ']':
		if f.inValue {
			f.finish()
		}
		f.depth--
	case ':':
		if f.depth == 1 {
			f.afterColon = true
			f.inValue = f.isID()
		}
	case ',':
		if f.depth == 1 {
			if f.inValue {
				f.finish()
				return
			}
			f.afterColon, f.key = false, f.key[:0]
		}
	default:
		if f.inValue {
			f.keepValue(c)
		}
	}
}

func (f *idFinder) isID() bool { return !f.keyLong && string(f.key) == "id" }

func (f *idFinder) keepValue(c byte) {
	if len(f.value) >= maxIDBytes {
		f.finished = true // no id is this long
		return
	}
	f.value = append(f.value, c)
}

// finish ends the search at the id's value, keeping it if it is an id.
func (f *idFinder) finish() {
	f.finished, f.inValue = true, false
	if len(f.value) > 0 && json.Valid(f.value) && idProblem(f.value) == "" {
		f.found = json.RawMessage(f.value)
	}
}

// id is the id found, or nil.
func (f *idFinder) id() json.RawMessage { return f.found }
