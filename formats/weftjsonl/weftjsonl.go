// Package weftjsonl reads and writes weft's own JSONL: lossless, so a
// session can move between files with its operations.
package weftjsonl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"weft/formats"
	"weft/model"
)

// A file is a session line, its stored messages in seq order, then its
// operations:
//
//	{"weft":1,"type":"session","session":{...},"sources":["claude-code:…"]}
//	{"type":"message","message":{...},"keys":["…"]}
//	{"type":"op","op":{...}}
//
// A file may hold several sessions, one after another.
//
// A session keeps its identity when it moves: the session line's ID is
// the session's, and a message's import key is Key(session ID, its ID).
// Beside these, a file carries what the session is known by to the
// importers of the file it was exported from: "keys" lists the other
// import keys a message is stored under there (a Claude Code record's
// UUID, the key an earlier move gave it) and "sources" the source
// threads imported into the session ("format:key", as weft records
// them). Importing the file anywhere records them again, so importing
// the session's first source afterwards finds it there too. Both fields
// are optional and new in this version of the writer; a reader that
// does not know them (an older weft) reads the file as before, which is
// why the format's number stays 1.
const version = 1

// maxKey bounds an import key or source key a file may carry; a longer
// one is left out (and said so), since no importer makes such keys.
const maxKey = 4096

// line is one line of the file; the reader and the writer share it.
type line struct {
	Weft    int            `json:"weft,omitempty"`
	Type    string         `json:"type"`
	Session *model.Session `json:"session,omitempty"`
	Sources []string       `json:"sources,omitempty"`
	Message *model.Message `json:"message,omitempty"`
	Keys    []string       `json:"keys,omitempty"`
	Op      *model.Op      `json:"op,omitempty"`
}

// Key is the import key of a message of weft's format: the session it
// came from and its ID there.
func Key(sessionID string, id model.ItemID) string { return sessionID + "/" + string(id) }

// Export is one session as the format holds it, what Write writes.
type Export struct {
	Session  model.Session
	Messages []model.Message // the stored messages, in seq order
	Ops      []model.Op      // in creation order
	// Keys are, beside each message (Keys[i] for Messages[i]; the slice
	// may be short or nil), the import keys it is stored under other than
	// its own Key(Session.ID, its ID).
	Keys [][]string
	// Sources are the source threads recorded as imported into the
	// session ("format:key").
	Sources []string
}

// Write writes one session losslessly: its record and what it is known
// by, its stored messages with their import keys, and its operations.
func Write(w io.Writer, e Export) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	session := e.Session
	session.Changes = nil // the write log is this file's history, not the session's
	if err := enc.Encode(line{Weft: version, Type: "session", Session: &session, Sources: e.Sources}); err != nil {
		return err
	}
	for i := range e.Messages {
		l := line{Type: "message", Message: &e.Messages[i]}
		if i < len(e.Keys) {
			l.Keys = e.Keys[i]
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	for i := range e.Ops {
		if err := enc.Encode(line{Type: "op", Op: &e.Ops[i]}); err != nil {
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
			var sources []string
			for _, src := range l.Sources {
				if len(src) > maxKey {
					problems = append(problems, formats.Problem{Line: n, Err: fmt.Sprintf("a source of %d bytes was left out (at most %d)", len(src), maxKey)})
					continue
				}
				if f, k, ok := strings.Cut(src, ":"); !ok || f == "" || k == "" {
					problems = append(problems, formats.Problem{Line: n, Err: fmt.Sprintf("source %q was left out: a source is format:key", src)})
					continue
				}
				if !slices.Contains(sources, src) {
					sources = append(sources, src)
				}
			}
			return emit.Begin(formats.ThreadInfo{Key: s.ID, Title: s.Title, Source: formats.Weft, CreatedAt: s.CreatedAt, ActiveTags: s.ActiveTags, SourceKeys: sources})
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
			key := Key(session, model.MessageID(m.Seq))
			var aliases []string
			for _, k := range l.Keys {
				if k == "" || len(k) > maxKey {
					problems = append(problems, formats.Problem{Line: n, Err: fmt.Sprintf("an import key of %d bytes was left out (at most %d)", len(k), maxKey)})
					continue
				}
				if k != key && !slices.Contains(aliases, k) {
					aliases = append(aliases, k)
				}
			}
			return emit.Message(formats.Message{Key: key, Aliases: aliases, NewMessage: nm})
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
