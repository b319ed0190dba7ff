package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"weft/formats"
	"weft/ops"
)

// answerRecorder reads a copy of a successful answer as it goes to the
// client, and stores the assistant's message once the whole answer has
// reached it: a stream's events put together (text, thinking, tool calls
// with their input), or the one JSON body. An answer that stops short
// (no message_stop, no finish_reason), or one the client did not get
// whole, stores nothing. A nil recorder records nothing.
type answerRecorder struct {
	api    API
	engine *Engine
	ctx    context.Context
	// turn is the request's: the answer follows its messages, once
	// stored.
	turn      *Turn
	streaming bool

	// body is the answer (not streaming), or what came of the stream
	// past its last whole line.
	body  []byte
	total int  // bytes of the answer so far
	over  bool // the answer grew past maxAnswerBytes: not stored
	// event and data are the stream's event being read; stream puts
	// its events together (nil until the first).
	event  string
	data   []byte
	stream answerStream
	// events counts the stream's events; broken says why one of them
	// could not be read (nil while all could): the answer is broken, and
	// nothing of it is stored.
	events int
	broken error
	// usage is what the provider says the answer cost.
	usage ops.Usage
}

// answerStream puts a streamed answer's events together, in its API's
// shape.
type answerStream interface {
	// event reads one event's data; an error says it does not parse.
	event(data []byte) error
	// ended reports whether the stream's end event came (message_stop,
	// a choice's finish_reason, response.completed).
	ended() bool
	// message is the message the stream made, and the model that
	// answered; errIncomplete when the stream did not end well.
	message() (json.RawMessage, string, error)
}

// newAnswerStream is the stream of an API's answer.
func newAnswerStream(api API) answerStream {
	switch api {
	case Anthropic:
		return &anStream{}
	case Responses:
		return &rsStream{}
	}
	return &oaStream{}
}

// readAnswer is the message of an API's answer that is one JSON body,
// and the model that answered.
func readAnswer(api API, body []byte) (json.RawMessage, string, error) {
	switch api {
	case Anthropic:
		return anthropicAnswer(body)
	case Responses:
		return responsesAnswer(body)
	}
	return openAIAnswer(body)
}

// feed reads the next piece of the answer.
func (a *answerRecorder) feed(p []byte) {
	if a == nil || a.over {
		return
	}
	// The whole answer counts, not what is held at once: a stream's
	// text is kept as it is put together.
	if a.total += len(p); a.total > maxAnswerBytes {
		a.over, a.body, a.data, a.stream = true, nil, nil, nil
		return
	}
	a.body = append(a.body, p...)
	if !a.streaming {
		return
	}
	rest := a.body
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		a.line(bytes.TrimSuffix(rest[:i], []byte("\r")))
		rest = rest[i+1:]
	}
	a.body = append(a.body[:0], rest...)
}

// line reads one line of a server-sent event stream.
func (a *answerRecorder) line(l []byte) {
	switch {
	case len(l) == 0:
		if len(a.data) > 0 {
			if a.stream == nil {
				a.stream = newAnswerStream(a.api)
			}
			a.events++
			addUsage(&a.usage, a.data)
			if err := a.stream.event(a.data); err != nil && a.broken == nil {
				a.broken = fmt.Errorf("event %d of the stream does not parse (%v): the answer is broken, and nothing of it is stored", a.events, err)
			}
		}
		a.event, a.data = "", a.data[:0]
	case l[0] == ':': // a comment
	default:
		field, value, _ := bytes.Cut(l, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			a.event = string(value)
		case "data":
			if len(a.data) > 0 {
				a.data = append(a.data, '\n')
			}
			a.data = append(a.data, value...)
		}
	}
}

// ended reports whether the stream came to its end event (message_stop,
// a choice's finish_reason, response.completed): what came up to it has
// reached the client, which may hang up then without waiting for the
// connection to close (Codex CLI does), and the answer is whole.
func (a *answerRecorder) ended() bool {
	return a != nil && a.streaming && !a.over && a.stream != nil && a.stream.ended()
}

// errIncomplete is an answer that stopped before its end.
var errIncomplete = errors.New("the answer stopped before its end")

// store stores the assistant's message of a whole answer.
func (a *answerRecorder) store() error {
	if a == nil {
		return nil
	}
	if a.over {
		return errors.New("the answer is too long to keep")
	}
	if a.streaming && len(bytes.TrimSpace(a.body)) > 0 {
		a.line(nil) // a last event without its blank line
	}
	var msg json.RawMessage
	var model string
	var err error
	switch {
	case !a.streaming:
		addUsage(&a.usage, a.body)
		msg, model, err = readAnswer(a.api, a.body)
	case a.stream == nil:
		err = errIncomplete // no event came
	case a.broken != nil:
		err = a.broken
	default:
		msg, model, err = a.stream.message()
	}
	if err != nil {
		return err
	}
	stored, err := a.turn.Wait()
	if err != nil {
		return err
	}
	if a.usage != (ops.Usage{}) {
		a.engine.svc.CountUsage(stored.SessionID, a.usage)
	}
	_, err = a.engine.RecordAnswer(context.WithoutCancel(a.ctx), Answer{
		API: a.api, SessionID: stored.SessionID, After: stored.Stored, Message: msg, Model: model,
	})
	return err
}

// anthropicAnswer is the message of a Messages API answer: the body
// itself, which has its role and content.
func anthropicAnswer(body []byte) (json.RawMessage, string, error) {
	var m struct {
		Type  string `json:"type"`
		Role  string `json:"role"`
		Model string `json:"model"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Type != "message" || m.Role != "assistant" {
		return nil, "", errors.New("the answer is not a Messages API message")
	}
	return body, m.Model, nil
}

// openAIAnswer is the first choice's message of a chat completion.
func openAIAnswer(body []byte) (json.RawMessage, string, error) {
	var c struct {
		Model   string `json:"model"`
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 || len(c.Choices[0].Message) == 0 {
		return nil, "", errors.New("the answer is not a chat completion with a choice")
	}
	return c.Choices[0].Message, c.Model, nil
}

// anStream puts a Messages API stream's events together.
type anStream struct {
	model  string
	blocks []*anStreamBlock
	done   bool // message_stop came
	failed bool // an error event came
}

type anStreamBlock struct {
	fields              map[string]json.RawMessage
	text, thinking, sig strings.Builder
	input               []byte
	citations           []json.RawMessage
}

func (s *anStream) event(data []byte) error {
	var ev struct {
		Type         string          `json:"type"`
		Index        int             `json:"index"`
		ContentBlock json.RawMessage `json:"content_block"`
		Delta        struct {
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			PartialJSON string          `json:"partial_json"`
			Thinking    string          `json:"thinking"`
			Signature   string          `json:"signature"`
			Citation    json.RawMessage `json:"citation"`
		} `json:"delta"`
		Message struct {
			Model string `json:"model"`
		} `json:"message"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return err
	}
	if ev.Index < 0 || ev.Index > 4096 {
		s.failed = true
		return nil
	}
	switch ev.Type {
	case "message_start":
		s.model = ev.Message.Model
	case "content_block_start":
		for len(s.blocks) <= ev.Index {
			s.blocks = append(s.blocks, nil)
		}
		b := &anStreamBlock{}
		if json.Unmarshal(ev.ContentBlock, &b.fields) != nil {
			s.failed = true
			return nil
		}
		var start struct {
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		}
		_ = json.Unmarshal(ev.ContentBlock, &start)
		b.text.WriteString(start.Text)
		b.thinking.WriteString(start.Thinking)
		s.blocks[ev.Index] = b
	case "content_block_delta":
		if ev.Index >= len(s.blocks) || s.blocks[ev.Index] == nil {
			s.failed = true
			return nil
		}
		b := s.blocks[ev.Index]
		switch ev.Delta.Type {
		case "text_delta":
			b.text.WriteString(ev.Delta.Text)
		case "input_json_delta":
			b.input = append(b.input, ev.Delta.PartialJSON...)
		case "thinking_delta":
			b.thinking.WriteString(ev.Delta.Thinking)
		case "signature_delta":
			b.sig.WriteString(ev.Delta.Signature)
		case "citations_delta":
			b.citations = append(b.citations, ev.Delta.Citation)
		}
	case "message_stop":
		s.done = true
	case "error":
		s.failed = true
	}
	return nil
}

func (s *anStream) ended() bool { return s.done }

// message is the assistant's message the stream made.
func (s *anStream) message() (json.RawMessage, string, error) {
	if !s.done || s.failed {
		return nil, "", errIncomplete
	}
	content := make([]map[string]json.RawMessage, 0, len(s.blocks))
	for _, b := range s.blocks {
		if b == nil {
			continue
		}
		set := func(k string, v any) {
			if raw, err := json.Marshal(v); err == nil {
				b.fields[k] = raw
			}
		}
		var typ string
		_ = json.Unmarshal(b.fields["type"], &typ)
		switch typ {
		case "text":
			set("text", b.text.String())
		case "thinking":
			set("thinking", b.thinking.String())
			if b.sig.Len() > 0 {
				set("signature", b.sig.String())
			}
		}
		if len(bytes.TrimSpace(b.input)) > 0 {
			if json.Valid(b.input) {
				b.fields["input"] = b.input
			} else {
				set("input", string(b.input))
			}
		}
		if len(b.citations) > 0 {
			set("citations", b.citations)
		}
		content = append(content, b.fields)
	}
	msg, err := json.Marshal(struct {
		Role    string                       `json:"role"`
		Content []map[string]json.RawMessage `json:"content"`
	}{"assistant", content})
	return msg, s.model, err
}

// oaStream puts a chat completion's chunks together: its first choice.
type oaStream struct {
	model                       string
	content, refusal, reasoning strings.Builder
	hasContent                  bool
	calls                       []*oaStreamCall
	finished                    bool // the choice's finish_reason came
	failed                      bool
}

type oaStreamCall struct {
	id, typ, name string
	args          strings.Builder
}

func (s *oaStream) event(data []byte) error {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return nil
	}
	var ch struct {
		Model   string `json:"model"`
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content          *string `json:"content"`
				Refusal          *string `json:"refusal"`
				ReasoningContent *string `json:"reasoning_content"`
				ToolCalls        []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &ch); err != nil {
		return err
	}
	if len(ch.Error) > 0 && !formats.IsNull(ch.Error) {
		s.failed = true
		return nil
	}
	if ch.Model != "" {
		s.model = ch.Model
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d := &c.Delta
		if d.Content != nil {
			s.content.WriteString(*d.Content)
			s.hasContent = true
		}
		if d.Refusal != nil {
			s.refusal.WriteString(*d.Refusal)
		}
		if d.ReasoningContent != nil {
			s.reasoning.WriteString(*d.ReasoningContent)
		}
		for _, tc := range d.ToolCalls {
			if tc.Index < 0 || tc.Index > 4096 {
				s.failed = true
				return nil
			}
			for len(s.calls) <= tc.Index {
				s.calls = append(s.calls, &oaStreamCall{})
			}
			call := s.calls[tc.Index]
			if tc.ID != "" {
				call.id = tc.ID
			}
			if tc.Type != "" {
				call.typ = tc.Type
			}
			call.name += tc.Function.Name
			call.args.WriteString(tc.Function.Arguments)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.finished = true
		}
	}
	return nil
}

func (s *oaStream) ended() bool { return s.finished }

// message is the assistant's message the chunks made.
func (s *oaStream) message() (json.RawMessage, string, error) {
	if !s.finished || s.failed {
		return nil, "", errIncomplete
	}
	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	m := struct {
		Role             string  `json:"role"`
		Content          *string `json:"content"`
		Refusal          string  `json:"refusal,omitempty"`
		ReasoningContent string  `json:"reasoning_content,omitempty"`
		ToolCalls        []call  `json:"tool_calls,omitempty"`
	}{Role: "assistant", Refusal: s.refusal.String(), ReasoningContent: s.reasoning.String()}
	if s.hasContent {
		text := s.content.String()
		m.Content = &text
	}
	for _, c := range s.calls {
		m.ToolCalls = append(m.ToolCalls, call{ID: c.id, Type: cmp.Or(c.typ, "function"), Function: function{Name: c.name, Arguments: c.args.String()}})
	}
	msg, err := json.Marshal(m)
	return msg, s.model, err
}
