package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"weft/formats"
)

// The Responses API through the proxy (POST /v1/responses, what Codex
// CLI sends). The body's "input" is the thread: a list of items, or a
// string (one user message). It goes upstream with the effective
// thread in place of its input, every other field (instructions, tools,
// store, include, fields weft does not know) as it came; the answer
// comes back byte for byte, and its output items are stored once the
// response is complete (response.completed).
//
// A request that continues a thread the provider keeps
// (previous_response_id, or a conversation) sends only its new items:
// weft cannot see the thread, so it cannot recognise the session nor
// send the effective thread. It passes such a request through untouched,
// stores nothing of it, and says so in its log, rather than pretend.

// serverSideFields name a thread the provider keeps.
var serverSideFields = []string{"previous_response_id", "conversation"}

// checkInput checks a Responses API body's "input", read by
// parseProxyBody: a list of items or a string. It says what is wrong
// with any other. A string input is one message item, made of it.
func (b *proxyBody) checkInput() error {
	if b.serverSide() != "" {
		return nil // passed through as it came: its input is the provider's to judge
	}
	in, ok := b.fields["input"]
	switch {
	case !ok:
		return fmt.Errorf("it has no \"input\": send the conversation's items, oldest first")
	case in[0] == '"':
		if _, ok := formats.DecodeString(in); !ok {
			return fmt.Errorf("\"input\" is not a valid string")
		}
		// One user message, as the API reads a string.
		b.messages = []json.RawMessage{append(append([]byte(`{"role":"user","content":`), in...), '}')}
	case in[0] != '[':
		return fmt.Errorf("\"input\" is %s, not a list of items or a string", formats.DescribeJSON(in))
	}
	return nil
}

// serverSide names the field by which a Responses API request continues
// a thread the provider keeps, or is "".
func (b *proxyBody) serverSide() string {
	if b.api != Responses {
		return ""
	}
	for _, name := range serverSideFields {
		if v, ok := b.fields[name]; ok && !formats.IsNull(v) {
			return name
		}
	}
	return ""
}

// passThrough sends a request that continues a thread the provider
// keeps upstream as it came, and its answer back, storing nothing.
func (p *Handler) passThrough(w http.ResponseWriter, r *http.Request, ep proxyEndpoint, body []byte, field string) {
	p.logger.Warn("proxy: a Responses API request continues a thread the provider keeps ("+field+"): weft cannot see the whole thread, so the request is passed through untouched and nothing of it is stored; send the whole input with store false to put weft in the loop",
		"field", field)
	// The body's buffer goes to another request once this one returns,
	// and the transport may still hold the body then: it gets a copy.
	body = bytes.Clone(body)
	p.forward(w, r, ep, bytes.NewReader(body), int64(len(body)), nil)
}

// responsesInput is the input sent in place of the request's: its own
// items as they came, and the messages weft wrote, as one JSON list.
func (b *proxyBody) responsesInput(items []ResponsesItem) (json.RawMessage, error) {
	size := 2
	for _, it := range items {
		if it.Request >= 0 && it.Request < len(b.messages) {
			size += len(b.messages[it.Request]) + 1
		}
	}
	out := make([]byte, 0, size+64*len(items))
	out = append(out, '[')
	for k, it := range items {
		if k > 0 {
			out = append(out, ',')
		}
		switch {
		case it.Request >= 0 && it.Request < len(b.messages):
			out = append(out, b.messages[it.Request]...)
		case it.Request < 0 && it.Message != nil:
			m, err := formats.Encode(it.Message)
			if err != nil {
				return nil, err
			}
			out = append(out, m...)
		default:
			return nil, fmt.Errorf("item %d of the thread names input[%d], and the request has %d items", k, it.Request, len(b.messages))
		}
	}
	return append(out, ']'), nil
}

// responsesAnswer is the output of a Responses API answer: a response,
// completed.
func responsesAnswer(body []byte) (json.RawMessage, string, error) {
	var r struct {
		Object string          `json:"object"`
		Status string          `json:"status"`
		Model  string          `json:"model"`
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Object != "response" {
		return nil, "", errors.New("the answer is not a Responses API response")
	}
	if r.Status != "completed" {
		return nil, "", fmt.Errorf("the response is %q, not completed: %w", r.Status, errIncomplete)
	}
	return r.Output, r.Model, nil
}

// rsStream puts a Responses API stream's events together: the items
// each response.output_item.done gives, and the response that
// response.completed gives whole.
type rsStream struct {
	model  string
	items  []json.RawMessage
	output json.RawMessage
	done   bool // response.completed came
	failed bool // response.failed, response.incomplete or an error came
}

func (s *rsStream) event(data []byte) error {
	var ev struct {
		Type        string          `json:"type"`
		OutputIndex int             `json:"output_index"`
		Item        json.RawMessage `json:"item"`
		Response    struct {
			Model  string          `json:"model"`
			Output json.RawMessage `json:"output"`
		} `json:"response"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return err
	}
	switch ev.Type {
	case "response.output_item.done":
		if ev.OutputIndex < 0 || ev.OutputIndex > 4096 || len(ev.Item) == 0 {
			s.failed = true
			return nil
		}
		for len(s.items) <= ev.OutputIndex {
			s.items = append(s.items, nil)
		}
		s.items[ev.OutputIndex] = ev.Item
	case "response.completed":
		s.done, s.model, s.output = true, ev.Response.Model, ev.Response.Output
	case "response.failed", "response.incomplete", "error":
		s.failed = true
	}
	return nil
}

func (s *rsStream) ended() bool { return s.done }

// message is the output the stream made: the completed response's,
// or, when it leaves its output out, the items given one by one.
func (s *rsStream) message() (json.RawMessage, string, error) {
	if !s.done || s.failed {
		return nil, "", errIncomplete
	}
	var output []json.RawMessage
	if json.Unmarshal(s.output, &output) == nil && len(output) > 0 {
		return s.output, s.model, nil
	}
	output = output[:0]
	for _, it := range s.items {
		if it != nil {
			output = append(output, it)
		}
	}
	msg, err := json.Marshal(output)
	return msg, s.model, err
}
