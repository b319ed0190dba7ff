package formats

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"weft/model"
)

// weft's own JSONL: lossless, so a session can move between files. A
// session line, its stored messages in seq order, then its operations:
//
//	{"weft":1,"type":"session","session":{...}}
//	{"type":"message","message":{...}}
//	{"type":"op","op":{...}}
//
// A file may hold several sessions, one after another.
const weftVersion = 1

type weftLine struct {
	Weft    int            `json:"weft,omitempty"`
	Type    string         `json:"type"`
	Session *model.Session `json:"session,omitempty"`
	Message *model.Message `json:"message,omitempty"`
	Op      *model.Op      `json:"op,omitempty"`
}

// WeftKey is the import key of a message of weft's format: the session it
// came from and its ID there.
func WeftKey(sessionID string, id model.ItemID) string { return sessionID + "/" + string(id) }

// WriteWeft writes one session losslessly: its record, its stored
// messages and its operations.
func WriteWeft(w io.Writer, session model.Session, messages []model.Message, ops []model.Op) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	session.Changes = nil // the write log is this file's history, not the session's
	if err := enc.Encode(weftLine{Weft: weftVersion, Type: "session", Session: &session}); err != nil {
		return err
	}
	for i := range messages {
		if err := enc.Encode(weftLine{Type: "message", Message: &messages[i]}); err != nil {
			return err
		}
	}
	for i := range ops {
		if err := enc.Encode(weftLine{Type: "op", Op: &ops[i]}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadWeft reads weft's own JSONL.
func ReadWeft(r io.Reader, emit Emitter) ([]Problem, error) {
	var problems []Problem
	open := false
	var session string
	var lastSeq uint64
	lines := 0
	err := eachLine(r, func(n int, line []byte) error {
		lines++
		var l weftLine
		if err := json.Unmarshal(line, &l); err != nil {
			problems = append(problems, Problem{Line: n, Err: "not JSON: " + shortErr(err)})
			return nil
		}
		switch l.Type {
		case "session":
			if l.Session == nil || l.Session.ID == "" {
				problems = append(problems, Problem{Line: n, Err: "session line without a session ID"})
				return nil
			}
			if l.Weft > weftVersion {
				return fmt.Errorf("line %d: weft format %d is newer than this weft reads (%d)", n, l.Weft, weftVersion)
			}
			if open {
				if err := emit.End(); err != nil {
					return err
				}
			}
			s := l.Session
			session, open, lastSeq = s.ID, true, 0
			return emit.Begin(ThreadInfo{Key: s.ID, Title: s.Title, Source: Weft, CreatedAt: s.CreatedAt, ActiveTags: s.ActiveTags})
		case "message", "op":
			if !open {
				problems = append(problems, Problem{Line: n, Err: l.Type + " before any session line"})
				return nil
			}
			if l.Type == "op" {
				if l.Op == nil || l.Op.ID == "" {
					problems = append(problems, Problem{Line: n, Err: "op line without an operation ID"})
					return nil
				}
				return emit.Op(*l.Op)
			}
			m := l.Message
			if m == nil || m.Seq == 0 {
				problems = append(problems, Problem{Line: n, Err: "message line without a seq"})
				return nil
			}
			if m.Seq <= lastSeq {
				problems = append(problems, Problem{Line: n, Err: fmt.Sprintf("message seq %d comes after seq %d: seqs must increase", m.Seq, lastSeq)})
				return nil
			}
			lastSeq = m.Seq
			nm := model.NewMessage{Role: m.Role, Content: m.Content, Name: m.Name, Parts: m.Parts, CreatedAt: m.CreatedAt, Tokens: m.Tokens, Meta: m.Meta}
			if err := nm.Validate(); err != nil {
				problems = append(problems, Problem{Line: n, Err: err.Error()})
				return nil
			}
			return emit.Message(Message{Key: WeftKey(session, model.MessageID(m.Seq)), NewMessage: nm})
		default:
			problems = append(problems, Problem{Line: n, Err: fmt.Sprintf("unknown line type %q", l.Type)})
		}
		return nil
	}, func(n int) { problems = append(problems, Problem{Line: n, Err: "line longer than 64 MB"}) })
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

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
