package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"weft/formats"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK refuses some malformed messages in ways a client cannot read
// (plain-text 400s over HTTP) or cannot survive (its stdio transport stops
// at the first line it cannot decode). jsonrpcProblem finds them first, for
// both transports, so that weft answers them with a JSON-RPC error and
// serves on: whatever it lets through, the SDK decodes.

// rpcProblem is why a message is not one the SDK can take.
type rpcProblem struct {
	code int
	msg  string
	// id is the message's id when a valid one could be read; nil answers
	// with id null.
	id json.RawMessage
}

// maxJSONDepth is how deeply the SDK lets a message nest.
const maxJSONDepth = 1000

// maxExactID bounds integer ids: the SDK reads them as float64, so larger
// ones would come back changed.
const maxExactID = 1<<53 - 1

// jsonrpcProblem says what is wrong with a JSON-RPC 2.0 message or batch,
// or nil when the SDK can take it.
func jsonrpcProblem(body []byte) *rpcProblem {
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		if len(body) == 0 {
			err = fmt.Errorf("it is empty")
		}
		return &rpcProblem{code: jsonrpc.CodeParseError, msg: fmt.Sprintf("parse error: not JSON (%v)", err)}
	}
	if tooDeep(body, maxJSONDepth) {
		return &rpcProblem{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxJSONDepth)}
	}
	if body[0] != '[' {
		return messageProblem(body)
	}
	var batch []json.RawMessage
	_ = json.Unmarshal(body, &batch)
	if len(batch) == 0 {
		return &rpcProblem{code: jsonrpc.CodeInvalidRequest, msg: "invalid request: an empty batch"}
	}
	ids := map[string]bool{}
	for i, raw := range batch {
		if p := messageProblem(raw); p != nil {
			// One answer for the whole batch, which has no one id.
			return &rpcProblem{code: p.code, msg: fmt.Sprintf("%s (message %d of the batch)", p.msg, i+1)}
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		_ = json.Unmarshal(raw, &m)
		if len(m.ID) > 0 && len(m.Method) > 0 {
			if key := canonicalID(m.ID); ids[key] {
				return &rpcProblem{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("invalid request: the batch uses id %s twice", m.ID)}
			} else {
				ids[key] = true
			}
		}
	}
	return nil
}

// messageProblem checks one message of valid JSON.
func messageProblem(raw []byte) *rpcProblem {
	invalid := func(id json.RawMessage, format string, args ...any) *rpcProblem {
		return &rpcProblem{code: jsonrpc.CodeInvalidRequest, msg: "invalid request: " + fmt.Sprintf(format, args...), id: id}
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] != '{' {
		return invalid(nil, "a JSON-RPC message is an object, not %s", jsonKind(raw))
	}
	// Keys as the SDK reads them: exactly, case and all.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return invalid(nil, "%v", err)
	}
	var id json.RawMessage
	rawID, hasID := m["id"]
	if hasID {
		if msg := idProblem(rawID); msg != "" {
			return invalid(nil, "%s", msg)
		}
		id = rawID
	}
	if v, ok := m["jsonrpc"]; !ok || json.Unmarshal(v, new(string)) != nil || !bytes.Equal(bytes.TrimSpace(v), []byte(`"2.0"`)) {
		return invalid(id, `"jsonrpc" must be "2.0"`)
	}
	if method, ok := m["method"]; ok {
		var name string
		if json.Unmarshal(method, &name) != nil || bytes.Equal(bytes.TrimSpace(method), []byte("null")) {
			return invalid(id, `"method" must be a string (the method's name), not %s`, jsonKind(method))
		}
		if name == "" {
			return invalid(id, `"method" is empty`)
		}
		return nil
	}
	// No method: a response to a request of the server's.
	if !hasID {
		return invalid(nil, `no "method" (a request) and no "id" (a response)`)
	}
	_, hasResult := m["result"]
	rpcErr, hasError := m["error"]
	if hasResult == hasError {
		return invalid(id, `a response has either "result" or "error"`)
	}
	if hasError {
		var e struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(rpcErr, &e); err != nil {
			return invalid(id, `"error" must be an object with an integer "code" and a string "message"`)
		}
	}
	return nil
}

// idProblem says what is wrong with an id, or "".
func idProblem(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '"':
		return ""
	case 'n':
		return `"id" is null: an id is a string or an integer (a notification has no "id")`
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return fmt.Sprintf(`"id" %s is not an integer: an id is a string or an integer`, raw)
		}
		if n > maxExactID || n < -maxExactID {
			return fmt.Sprintf(`"id" %s is too large: an integer id lies within ±%d (or send a string)`, raw, int64(maxExactID))
		}
		return ""
	}
	return fmt.Sprintf(`"id" must be a string or an integer, not %s`, jsonKind(raw))
}

// canonicalID is an id as a map key: a string and a number never collide.
func canonicalID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return "s" + s
	}
	return "n" + string(bytes.TrimSpace(raw))
}

// jsonKind names the kind of a JSON value, for messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

// tooDeep reports whether valid JSON nests objects and arrays deeper than
// max.
func tooDeep(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// jsonrpcError encodes a JSON-RPC error response; a nil id is null.
func jsonrpcError(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := formats.Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	return b
}
