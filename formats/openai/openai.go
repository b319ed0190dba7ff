// Package openai reads OpenAI-style messages: chat-completions messages
// alone, in records, or as JSON lines (see Read), and the list of
// messages a pre-request hook is given (ReadMessages).
package openai

import (
	"errors"
	"fmt"
	"io"

	"weft/formats"
	"weft/formats/internal/records"
)

// OpenAI-style messages ({role, content}, as the Chat Completions API
// takes them, and as fine-tuning sets such as LLaMA-Factory's store
// them). Read accepts five shapes, told apart by the first
// non-space byte and the keys of the first record that can be read:
//
//	(a) [{role, content}, ...]                    one thread
//	(b) {"messages": [...], ...}                  one thread
//	(c) [{"messages": [...]}, ...]                one thread per record
//	(d) JSON lines of {"messages": [...]}         one thread per line
//	(e) JSON lines of {role, content}             one thread for the file
//
// A file starting with '{' is JSON lines when its first line is a whole
// JSON value (or, when it is not, when the next line starts a JSON value
// of its own: a first line that is broken), else one JSON document (a
// pretty-printed (b)). Shapes (a) and (e) stream: each message is emitted
// as it is read (after at most a few messages, which wait for the
// thread's title), so a file of millions of messages is never in memory.
// A record of (b), (c), (d) is read whole, one at a time.
//
// Messages: role system, user, assistant, tool; developer is system
// (meta source_role), function is tool. content is a string, null, or a
// list of parts: text (and input_text, output_text, refusal) is text,
// image_url / input_image / image an image part (media type from a data:
// URL or the file extension), anything else an "other" part. A message
// whose content is a plain string and that has nothing else (no tool
// calls, reasoning, refusal, media) has no parts: its content is the
// string as it is. reasoning_content is a thinking part; refusal a text
// part.
//
// Tool calls: each of an assistant's tool_calls is a tool_call part, its
// input the arguments when they are JSON, else the arguments string
// JSON-encoded ({} when empty). A call without an id gets "call_<k>" (k
// counting the calls of the thread). A tool message is a tool_result part
// whose ToolCallID is its tool_call_id, or, without one, the oldest call
// of the thread still waiting for its result; its Name is its own name or
// the called tool's; its Raw is the whole tool message, and images in its
// content follow it as parts of their own. Legacy function_call and role
// function become a call and a result with no ToolCallID (Name = the
// function's name). A message with nothing to show (no text, no parts)
// is a Note, an unknown role a Problem.
//
// A thread's title is the first line of its first user message (lines
// that are only an image skipped, at most 80 characters), else of its
// first message.
//
// LLaMA-Factory records list media beside the messages ("images",
// "videos", "audios"); each <image> (<video>, <audio>) in a message's text
// takes the next one, in order, and becomes an image (other) part there.
// A record's other keys ("tools", "model", ...) are kept in the meta of
// its first message, strings as they are, other values as compact JSON.
//
// Keys: these formats have no ids. A message's key is
// "<ordinal>:<first 12 hex of its digest>", its ordinal (zero-padded to
// ten digits) its 1-based
// place among its thread's messages in the file (counting messages that
// could not be read, so that mending one does not move the others); a
// thread's key is the first 16 hex of the SHA-256 of "<digest>:<place>",
// digest its first imported message's and place the record's 1-based
// place in the file (1 for a file that is one thread). Re-reading a file,
// or a longer version of it, gives the same keys to the same messages.
// At most formats.MaxProblems problems are listed; the rest are counted.

type mode uint8

const (
	unknown      mode = iota
	messagesMode      // (a), (e): the file is one thread of messages
	recordsMode       // (b), (c), (d): records with messages
)

type reader struct {
	emit    formats.Emitter
	probs   formats.Problems
	mode    mode
	thread  *records.Thread // of a file of messages
	threads int
	msg     message // reused
}

const shapes = `a JSON array of messages ({"role", "content"}), an object or a JSON array of records with "messages", or JSON lines of either`

// Read reads OpenAI-style messages (see the shapes above).
func Read(r io.Reader, emit formats.Emitter) ([]formats.Problem, error) {
	o := &reader{emit: emit}
	_, err := records.Each(r, &o.probs, o.value)
	if err == records.ErrEmpty {
		return nil, err
	}
	if err == nil && o.thread != nil {
		var any bool
		if any, err = o.thread.Finish(); any {
			o.threads++
		}
	}
	problems := o.probs.Result()
	if err != nil {
		if _, ok := err.(*records.NotJSONError); ok {
			err = fmt.Errorf("not an OpenAI messages file: %w; it should be %s", err, shapes)
		}
		return problems, err
	}
	if o.threads == 0 {
		what := "no message could be imported"
		if o.mode == unknown {
			what = "no message or record with messages was found"
		}
		return problems, fmt.Errorf("not an OpenAI messages file: %s; it should be %s", what, shapes)
	}
	return problems, nil
}

func (o *reader) value(v *records.Value) error {
	raw := v.Object(&o.probs, "a message or a record")
	if raw == nil {
		return nil
	}
	if o.mode == unknown {
		if known, err := o.detect(v, raw); !known || err != nil {
			return err
		}
	}
	if o.mode == recordsMode {
		return o.record(v, raw)
	}
	nm, reason := readMessage(raw, &o.msg, &o.thread.Calls, nil)
	switch reason {
	case "":
		return o.thread.Add(v.Index, nm)
	case notRecord:
		reason += " in a file of single messages"
	}
	v.Skipped(&o.probs, "", reason)
	return nil
}

// detect tells the file's mode from its first object that is a message
// or a record, and refuses another format's file. known is false for a
// value that tells nothing (it is reported).
func (o *reader) detect(v *records.Value, raw []byte) (known bool, err error) {
	if _, ok := fastMessage(raw); ok {
		o.startMessages()
		return true, nil
	}
	m := &o.msg
	if reason := decode(raw, m); reason != "" {
		v.Problem(&o.probs, reason+"; skipped")
		return false, nil
	}
	isRecord := m.Messages != nil
	switch {
	case m.Mapping != nil || m.CurrentNode != nil:
		return false, errors.New(`this is a ChatGPT export (conversations with a "mapping"), not OpenAI messages: import it with --format chatgpt`)
	case m.Conversations != nil && !isRecord:
		return false, errors.New(`this is a ShareGPT file (records with "conversations"), not OpenAI messages: import it with --format sharegpt`)
	case isRecord:
		o.mode = recordsMode
	case m.isMessage():
		o.startMessages()
	default:
		v.Problem(&o.probs, formats.DescribeJSON(raw)+": neither a message (role, content) nor a record (messages); skipped")
		return false, nil
	}
	return true, nil
}

// startMessages makes the file one thread of messages.
func (o *reader) startMessages() {
	o.mode = messagesMode
	o.thread = &records.Thread{Emit: o.emit, Source: formats.OpenAI, Ordinal: 1}
}

// record reads a record of (b), (c), (d) and emits its thread.
func (o *reader) record(v *records.Value, raw []byte) error {
	m := &o.msg
	if reason := decode(raw, m); reason != "" {
		v.Problem(&o.probs, reason+"; skipped")
		return nil
	}
	if m.Messages == nil {
		if m.isMessage() {
			v.Problem(&o.probs, `a single message in a file of records with "messages"; skipped`)
		} else {
			v.Problem(&o.probs, `a record without "messages"; skipped`)
		}
		return nil
	}
	msgs := v.List(&o.probs, "messages", m.Messages)
	if len(msgs) == 0 {
		return nil
	}
	media := m.Media()
	th := &records.Thread{Emit: o.emit, Source: formats.OpenAI, Ordinal: v.Index,
		Meta: records.ExtraMeta(raw, "messages", "images", "videos", "audios")}
	var mm message
	err := v.EachObject(&o.probs, msgs, "message", func(k int, where string, mraw []byte) error {
		nm, reason := readMessage(mraw, &mm, &th.Calls, media)
		if reason == notRecord {
			reason += ", not a message"
		}
		if reason != "" {
			v.Skipped(&o.probs, where, reason)
			return nil
		}
		return th.Add(k, nm)
	})
	if err != nil {
		return err
	}
	any, err := th.FinishRecord(v, &o.probs, media)
	if any {
		o.threads++
	}
	return err
}
