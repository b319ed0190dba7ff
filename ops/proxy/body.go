package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"weft/formats"
	"weft/formats/export"
	"weft/internal/jsonscan"
	"weft/ops/httpx"
)

// A proxied request's body is read once, by a scanner that only finds
// where each top-level field's value and each message lie (jsonscan.go):
// the body goes upstream as it came with only its messages (and, for a
// thread that now opens with a summary, its system prompt) put in their
// place, every other byte untouched. What weft reads of a message is
// read (and checked) by the importers; the rest is the upstream's to
// judge.

// invalidUTF8 is the offset of the first byte of b that is not valid
// UTF-8.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// proxyBody is a request body read for the proxy.
type proxyBody struct {
	api API
	raw []byte
	// fields are the top-level fields' values, slices of raw, and spans
	// where they lie.
	fields map[string]json.RawMessage
	spans  map[string][2]int
	// messages are the elements of "messages", slices of raw; own are
	// those with fields besides those weft writes (fields.go).
	messages []json.RawMessage
	own      []int
	// sentList is where the thread list lies in the body rewrite wrote.
	sentList [2]int
}

// parseProxyBody reads a request body: a JSON object whose thread (its
// "messages"; the Responses API's "input", which may be a string) is a
// list. It says what is wrong with any other.
func parseProxyBody(api API, raw []byte) (*proxyBody, error) {
	list := api.ListField()
	b := &proxyBody{api: api, raw: raw, fields: map[string]json.RawMessage{}, spans: map[string][2]int{}}
	i := jsonscan.SkipSpace(raw, 0)
	if i == len(raw) {
		return nil, fmt.Errorf("it is empty: send a JSON object with %q", list)
	}
	if raw[i] != '{' {
		return nil, fmt.Errorf("it is %s, not a JSON object", formats.DescribeJSON(raw[i:]))
	}
	// JSON is UTF-8: a body that is not would be stored with
	// replacement characters and sent on as it came, two threads that
	// differ.
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("it is not valid UTF-8 (byte %d): JSON is sent as UTF-8", invalidUTF8(raw))
	}
	// The top level's members, and the elements of the thread's list
	// as they go by: every other value is skipped whole.
	scan := &jsonscan.Scanner{B: raw}
	end, err := scan.Container(i, '{', '}', func(j int) (int, error) {
		k, start, err := member(scan, j)
		if err != nil {
			return 0, err
		}
		name, err := keyName(raw[j:k])
		if err != nil {
			return 0, err
		}
		if _, dup := b.fields[name]; dup && (name == list || name == "system" && api != Responses) {
			return 0, fmt.Errorf("%q is there twice", name)
		}
		var end int
		if name == list && start < len(raw) && raw[start] == '[' {
			end, err = scan.Container(start, '[', ']', func(s int) (int, error) {
				if api == Responses {
					// An item is the provider's to judge: only its
					// extent is read.
					e, err := scan.SkipValue(s)
					if err == nil {
						b.messages = append(b.messages, raw[s:e:e])
					}
					return e, err
				}
				e, own, err := scanMessage(scan, s, api)
				if err != nil {
					return 0, err
				}
				if own {
					b.own = append(b.own, len(b.messages))
				}
				b.messages = append(b.messages, raw[s:e:e])
				return e, nil
			})
		} else {
			end, err = scan.SkipValue(start)
		}
		if err != nil {
			if name == list {
				err = fmt.Errorf("%q: %v", list, err)
			}
			return 0, err
		}
		b.fields[name] = raw[start:end:end]
		b.spans[name] = [2]int{start, end}
		return end, nil
	})
	if err != nil {
		return nil, fmt.Errorf("it is not valid JSON: %v", err)
	}
	if jsonscan.SkipSpace(raw, end) != len(raw) {
		return nil, fmt.Errorf("there is more after its JSON object")
	}
	if api == Responses {
		if err := b.checkInput(); err != nil {
			return nil, err
		}
		return b, nil
	}
	msgs, ok := b.fields["messages"]
	switch {
	case !ok:
		return nil, fmt.Errorf("it has no \"messages\": send the conversation, oldest first")
	case msgs[0] != '[':
		return nil, fmt.Errorf("\"messages\" is %s, not a list of messages", formats.DescribeJSON(msgs))
	}
	if s, ok := b.fields["system"]; ok && api == Anthropic && !formats.IsNull(s) && s[0] != '"' && s[0] != '[' {
		return nil, fmt.Errorf("\"system\" is %s, not a string or a list of blocks", formats.DescribeJSON(s))
	}
	return b, nil
}

// keyName is a member's key, decoded when it has escapes.
func keyName(key []byte) (string, error) {
	if !bytes.ContainsRune(key, '\\') {
		return string(key[1 : len(key)-1]), nil
	}
	var name string
	if err := json.Unmarshal(key, &name); err != nil {
		return "", fmt.Errorf("a key is not a valid string")
	}
	return name, nil
}

// rewrite appends to dst the body with the effective thread of turn in
// place of its messages; for the Messages API, the summaries that open
// the thread are added to its system prompt, and the client's
// cache_control breakpoints go with the blocks they marked, where those
// are still sent; a message's own fields go with what it said. The values are written straight into dst, in the
// order they come in the body.
func (b *proxyBody) rewrite(dst []byte, turn *Turn) ([]byte, error) {
	type splice struct {
		start, end int
		name       string
		value      any
	}
	var splices []splice
	put := func(name string, value any) {
		if sp, ok := b.spans[name]; ok {
			splices = append(splices, splice{sp[0], sp[1], name, value})
			return
		}
		// A new field goes first: the object has one at least.
		open := bytes.IndexByte(b.raw, '{') + 1
		splices = append(splices, splice{open, open, name, value})
	}
	switch b.api {
	case Anthropic:
		// The client's system prompt goes as it came: a summary that
		// opens the thread is a system turn of its own.
		put("messages", b.segmentThread(turn))
	case Responses:
		input, err := b.responsesInput(turn.Responses)
		if err != nil {
			return nil, err
		}
		put("input", input)
	default:
		put("messages", b.chatThread(turn))
	}
	slices.SortFunc(splices, func(x, y splice) int { return x.start - y.start })
	out := dst
	at := 0
	for _, sp := range splices {
		out = append(out, b.raw[at:sp.start]...)
		_, isNew := b.spans[sp.name]
		if isNew = !isNew; isNew {
			out = append(strconv.AppendQuote(out, sp.name), ':')
		}
		// The encoder writes what encoding/json writes (HTML not
		// escaped), a few times faster: the thread may be megabytes.
		// Raw values in it (tool inputs, cache_control, the system's
		// blocks) were read by decoders: valid.
		var err error
		from := len(out)
		if t, ok := sp.value.(threadWriter); ok {
			out, err = t.appendJSON(out)
		} else {
			out, err = export.AppendJSON(out, sp.value)
		}
		if err != nil {
			return nil, err
		}
		if sp.name == b.api.ListField() {
			b.sentList = [2]int{from, len(out)}
		}
		if isNew {
			out = append(out, ',')
		}
		at = sp.end
	}
	return append(out, b.raw[at:]...), nil
}

// threadWriter is a thread that writes itself: one with messages' own
// fields or breakpoints, which encoding the exporter's values alone
// would drop.
type threadWriter interface {
	appendJSON(out []byte) ([]byte, error)
}

// anMessage is a Messages API message as the proxy sends it: the
// exporter's blocks, some with the client's cache_control.
type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	export.AnthropicBlock
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// marked is a block of the client's that carried a cache_control.
type marked struct {
	typ, key     string
	cacheControl json.RawMessage
}

// blockRef is what tells a Messages API block from the others of its
// type, read from a request's message.
type blockRef struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

// key is a text's text, a call's ID or a result's call ID; false for a
// block of another type (an image, a document), not told apart here.
func (r *blockRef) key() (string, bool) {
	switch r.Type {
	case "text":
		return r.Text, true
	case "tool_use":
		return r.ID, true
	case "tool_result":
		return r.ToolUseID, true
	}
	return "", false
}

// blockKey is what tells a block from the others of its type.
func blockKey(blk *export.AnthropicBlock) string {
	key, _ := (&blockRef{Type: blk.Type, Text: blk.Text, ID: blk.ID, ToolUseID: blk.ToolUseID}).key()
	return key
}

// cacheMarks are the blocks of the request's messages that carry a
// cache_control, latest first; hits are the messages that have them
// (Turn.CacheMarked), and only those are read.
func (b *proxyBody) cacheMarks(hits []int) []marked {
	var marks []marked
	for k := len(hits) - 1; k >= 0; k-- {
		var msg struct {
			Content []struct {
				blockRef
				CacheControl json.RawMessage `json:"cache_control"`
			} `json:"content"`
		}
		if hits[k] < 0 || hits[k] >= len(b.messages) || json.Unmarshal(b.messages[hits[k]], &msg) != nil {
			continue
		}
		for j := len(msg.Content) - 1; j >= 0; j-- {
			c := &msg.Content[j]
			if formats.IsNull(c.CacheControl) {
				continue
			}
			key, ok := c.key()
			if !ok {
				continue
			}
			marks = append(marks, marked{typ: c.Type, key: key, cacheControl: c.CacheControl})
		}
	}
	return marks
}

// proxyError answers a proxied request weft refuses, in the shape of
// the API's own errors, so the client reads it as it reads the
// provider's.
func proxyError(w http.ResponseWriter, api API, status int, msg string) {
	var body any
	if api == Anthropic {
		type anError struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		body = struct {
			Type  string  `json:"type"`
			Error anError `json:"error"`
		}{"error", anError{anthropicErrorType(status), msg}}
	} else {
		type oaError struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		}
		typ := "invalid_request_error"
		if status >= 500 {
			typ = "server_error"
		}
		body = struct {
			Error oaError `json:"error"`
		}{oaError{Message: msg, Type: typ}}
	}
	b, _ := formats.Encode(body)
	httpx.WriteJSONBody(w, status, b)
}

// anthropicErrorType is the Messages API's error type for a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// model is the request's "model", or "".
func (b *proxyBody) model() string {
	var m string
	if raw, ok := b.fields["model"]; ok {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// list is the thread list of the body sent: out, as rewrite wrote it
// (or the request's own body, unchanged).
func (b *proxyBody) list(out []byte, unchanged bool) []byte {
	if unchanged {
		sp, ok := b.spans[b.api.ListField()]
		if !ok {
			return nil
		}
		return out[sp[0]:sp[1]]
	}
	return out[b.sentList[0]:b.sentList[1]]
}
