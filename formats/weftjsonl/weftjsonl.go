// Package weftjsonl reads and writes weft's own JSONL: lossless, so a
// session can move between files with its operations.
package weftjsonl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"weft/formats"
	"weft/model"
)

// A file is a session line, its stored messages in seq order, then its
// operations:
//
//	{"weft":1,"type":"session","session":{...}}
//	{"type":"message","message":{...}}
//	{"type":"op","op":{...}}
//
// A file may hold several sessions, one after another.
const version = 1

// line is one line of the file; the reader and the writer share it.
type line struct {
	Weft    int            `json:"weft,omitempty"`
	Type    string         `json:"type"`
	Session *model.Session `json:"session,omitempty"`
	Message *model.Message `json:"message,omitempty"`
	Op      *model.Op      `json:"op,omitempty"`
}

// Key is the import key of a message of weft's format: the session it
// came from and its ID there.
func Key(sessionID string, id model.ItemID) string { return sessionID + "/" + string(id) }

// Write writes one session losslessly: its record, its stored messages
// and its operations.
func Write(w io.Writer, session model.Session, messages []model.Message, ops []model.Op) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	session.Changes = nil // the write log is this file's history, not the session's
	if err := enc.Encode(line{Weft: version, Type: "session", Session: &session}); err != nil {
		return err
	}
	for i := range messages {
		if err := enc.Encode(line{Type: "message", Message: &messages[i]}); err != nil {
			return err
		}
	}
	for i := range ops {
		if err := enc.Encode(line{Type: "op", Op: &ops[i]}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Read reads weft's own JSONL: one thread per session line, with its
// messages keyed by Key and its operations.
func Read(r io.Reader, emit formats.Emitter) ([]formats.Problem, error) {
	var problems []formats.Problem
	open := false
	var session string
	var lastSeq uint64
	lines := 0
	err := formats.EachLine(r, func(n int, raw []byte) error {
		lines++
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			problems = append(problems, formats.Problem{Line: n, Err: "not JSON: " + formats.ShortError(err)})
			return nil
		}
		switch l.Type {
		case "session":
			if l.Session == nil || l.Session.ID == "" {
				problems = append(problems, formats.Problem{Line: n, Err: "session line without a session ID"})
				return nil
			}
			if l.Weft > version {
				return fmt.Errorf("line %d: weft format %d is newer than this weft reads (%d)", n, l.Weft, version)
			}
			if open {
				if err := emit.End(); err != nil {
					return err
				}
			}
			s := l.Session
			session, open, lastSeq = s.ID, true, 0
			return emit.Begin(formats.ThreadInfo{Key: s.ID, Title: s.Title, Source: formats.Weft, CreatedAt: s.CreatedAt, ActiveTags: s.ActiveTags})
		case "message", "op":
			if !open {
				problems = append(problems, formats.Problem{Line: n, Err: l.Type + " before any session line"})
				return nil
			}
			if l.Type == "op" {
				if l.Op == nil || l.Op.ID == "" {
					problems = append(problems, formats.Problem{Line: n, Err: "op line without an operation ID"})
					return nil
				}
				return emit.Op(*l.Op)
			}
			m := l.Message
			if m == nil || m.Seq == 0 {
				problems = append(problems, formats.Problem{Line: n, Err: "message line without a seq"})
				return nil
			}
			if m.Seq <= lastSeq {
				problems = append(problems, formats.Problem{Line: n, Err: fmt.Sprintf("message seq %d comes after seq %d: seqs must increase", m.Seq, lastSeq)})
				return nil
			}
			lastSeq = m.Seq
			nm := model.NewMessage{Role: m.Role, Content: m.Content, Name: m.Name, Parts: m.Parts, CreatedAt: m.CreatedAt, Tokens: m.Tokens, Meta: m.Meta}
			if err := nm.Validate(); err != nil {
				problems = append(problems, formats.Problem{Line: n, Err: err.Error()})
				return nil
			}
			return emit.Message(formats.Message{Key: Key(session, model.MessageID(m.Seq)), NewMessage: nm})
		default:
			problems = append(problems, formats.Problem{Line: n, Err: fmt.Sprintf("unknown line type %q", l.Type)})
		}
		return nil
	}, func(n int) { problems = append(problems, formats.Problem{Line: n, Err: "line longer than 64 MB"}) })
	if err != nil {
		return problems, err
	}
	if open {
		return problems, emit.End()
	}
	if lines == 0 {
		return problems, fmt.Errorf("empty file")
	}
	return problems, fmt.Errorf("no weft session found: is this a weft export (weft export --format jsonl)?")
}
