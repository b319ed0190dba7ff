package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"weft/formats"
	"weft/formats/export"
	"weft/formats/readers"
	"weft/formats/weftjsonl"
	"weft/model"
	"weft/ops"
	"weft/ops/ingest"
)

// Files is what the command line does with a whole thread or a whole
// file — weft show's outline, weft export, weft import — here (Local)
// or through the weft that holds the file (ops/relay's Remote, whose
// listener offers POST /outline, /export and /import for it), with the
// same results either way.
type Files interface {
	// Outline is what weft show prints around the messages of the
	// session ref names.
	Outline(ctx context.Context, ref string) (Outline, error)
	// Export writes a thread to w as args say, and gives the exporter's
	// notes.
	Export(ctx context.Context, w io.Writer, args ExportArgs) (notes []string, err error)
	// Import reads a file from r, telling progress (if not nil) how it
	// goes. The error is for a request the weft that holds the file
	// refused or could not answer; what the import itself met is in the
	// report.
	Import(ctx context.Context, r io.Reader, args ImportArgs, progress Progress) (ImportReport, error)
}

// Progress follows an import as it goes.
type Progress interface {
	// Messages is called after each batch with the messages read so
	// far, when the import counts them in this process.
	Messages(n int)
	// Waiting is called when the import runs in the weft that holds the
	// file, which reports once, at the end; the function it returns is
	// called when the import is done.
	Waiting() (done func())
}

// Outline is what weft show prints around a thread's messages: the
// session, its size and tokens, and where each operation left its
// marker.
type Outline struct {
	SessionID    string `json:"session_id"`
	Title        string `json:"title"`
	Version      uint64 `json:"version"`
	MessageCount int    `json:"message_count"`
	OpCount      int    `json:"op_count"`
	// Items is the length of the effective thread.
	Items int `json:"items"`
	// RawTokens are the stored messages' tokens, Tokens the effective
	// thread's.
	RawTokens int             `json:"raw_tokens"`
	Tokens    int             `json:"tokens"`
	Markers   []OutlineMarker `json:"markers"`
}

// OutlineMarker is an operation's marker in the effective thread (the
// outermost ones: a marker swallowed by a later operation shows inside
// it).
type OutlineMarker struct {
	// At is the index of the item the marker stands before (Items when
	// it stands at the end).
	At          int          `json:"at"`
	OperationID string       `json:"operation_id"`
	OpType      model.OpType `json:"op_type"`
	Author      string       `json:"author"`
	// Hidden counts the items the operation collapsed, removed, replaced
	// or moved; Added the items it put in.
	Hidden int `json:"hidden"`
	Added  int `json:"added"`
}

// Outline returns the outline of the session ref names (an ID, a
// unique ID prefix or a title; empty: the focused session, else the most
// recently updated).
func (l Local) Outline(_ context.Context, ref string) (Outline, error) {
	info, v, err := l.Service.View(ref)
	if err != nil {
		return Outline{}, err
	}
	o := Outline{
		SessionID: info.ID, Title: info.Title, Version: info.Version, MessageCount: info.MessageCount, OpCount: info.OpCount,
		Items: v.Len(), RawTokens: v.RawTokens, Tokens: v.Tokens, Markers: make([]OutlineMarker, 0, len(v.Markers)),
	}
	for _, m := range v.Markers {
		o.Markers = append(o.Markers, OutlineMarker{At: m.At, OperationID: m.OpID, OpType: m.OpType, Author: m.Author, Hidden: len(m.Hidden), Added: m.Added})
	}
	return o, nil
}

// ExportFormats are the formats Export writes.
var ExportFormats = []string{"openai", "anthropic", "jsonl", "markdown", "claude-code"}

// ExportArgs say what to export: a session (as session_id takes it) in a
// format of ExportFormats, its effective thread or, with Raw, its stored
// messages (jsonl always holds both).
type ExportArgs struct {
	SessionID string `json:"session_id,omitempty"`
	Format    string `json:"format"`
	Raw       bool   `json:"raw,omitempty"`
	// ClaudeCode says what a claude-code transcript's records carry
	// besides the thread; nil: a new session ID, no folder.
	ClaudeCode *ClaudeCodeArgs `json:"claude_code,omitempty"`
}

// ClaudeCodeArgs are a Claude Code transcript's session ID (empty: a new
// one) and its project's folder (the cwd of its records).
type ClaudeCodeArgs struct {
	SessionID string `json:"session_id,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
}

// Export writes a thread to w as args say. The notes are the exporter's
// (a tool result kept as text where the format has no place for it),
// one line each. Nothing is written when the session cannot be found.
func (l Local) Export(ctx context.Context, w io.Writer, args ExportArgs) (notes []string, err error) {
	svc := l.Service
	bw := bufio.NewWriterSize(w, 1<<16)
	switch args.Format {
	case "jsonl":
		session, err := svc.ExportWeft(args.SessionID)
		if err != nil {
			return nil, err
		}
		if err := weftjsonl.Write(bw, session); err != nil {
			return nil, err
		}
	case "openai", "anthropic", "markdown", "claude-code":
		info, items, err := svc.ExportItems(args.SessionID, args.Raw)
		if err != nil {
			return nil, err
		}
		var report export.Report
		switch args.Format {
		case "openai":
			report, err = export.WriteOpenAI(bw, items)
		case "anthropic":
			report, err = export.WriteAnthropic(bw, items)
		case "claude-code":
			cc := export.ClaudeCodeOptions{Title: info.Title, Now: time.Now()}
			if a := args.ClaudeCode; a != nil {
				cc.SessionID, cc.Cwd = a.SessionID, a.Cwd
			}
			report, err = export.WriteClaudeCode(bw, items, cc)
		default:
			err = export.WriteMarkdown(bw, info.Title, items)
		}
		if err != nil {
			return nil, err
		}
		notes = report.Folded
	default:
		return nil, &ops.Error{Kind: ops.ErrInvalid, Msg: fmt.Sprintf("unknown export format %q: %s", args.Format, strings.Join(ExportFormats, ", "))}
	}
	if err := bw.Flush(); err != nil {
		return notes, err
	}
	return notes, ctx.Err()
}

// ImportArgs say how to import a file: its format (empty: detected from
// its start) and, optionally, the session every thread of it goes into
// (ingest.Options.Session).
type ImportArgs struct {
	Format  formats.Format
	Session string
}

// ImportReport is what an import did.
type ImportReport struct {
	// Format is the file's format, as given or detected.
	Format formats.Format
	// Refused says why nothing was imported (the format could not be
	// told); nil when the file was read.
	Refused error
	// Problems are the records that could not be read, and notes.
	Problems []formats.Problem
	// Sessions are the sessions the import touched.
	Sessions []ingest.ImportedSession
	// Stopped says why the import stopped before the end of the file;
	// nil when it read it all.
	Stopped error
}

// Import reads a file from r into the service, every batch through its
// write path, telling progress (if not nil) the messages read so far
// after each batch. The error is always nil: what the import met is in
// the report.
func (l Local) Import(ctx context.Context, r io.Reader, args ImportArgs, progress Progress) (ImportReport, error) {
	rep := ImportReport{Format: args.Format}
	br := bufio.NewReaderSize(r, formats.DetectSize)
	if rep.Format == "" {
		head, err := br.Peek(formats.DetectSize)
		if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			rep.Refused = fmt.Errorf("reading it: %w", err)
			return rep, nil
		}
		if rep.Format, err = formats.Detect(head); err != nil {
			rep.Refused = err
			return rep, nil
		}
	}
	read, ok := readers.For(rep.Format)
	if !ok {
		rep.Refused = &ops.Error{Kind: ops.ErrInvalid, Msg: fmt.Sprintf("unknown format %q", rep.Format)}
		return rep, nil
	}
	var counted func(int)
	if progress != nil {
		counted = progress.Messages
	}
	im := ingest.New(ctx, l.Service, ingest.Options{Session: args.Session, Progress: counted})
	problems, err := read(br, im)
	rep.Stopped = errors.Join(err, im.Close())
	rep.Problems, rep.Sessions = problems, im.Sessions
	return rep, nil
}
