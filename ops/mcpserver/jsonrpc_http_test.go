package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// rpcAnswer is a JSON-RPC error response as a client reads it.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// malformed are messages the SDK cannot take, what weft answers each with,
// and the id the answer carries: the same over HTTP and stdio.
var malformed = []struct {
	name, body string
	code       int
	says, id   string
}{
	{"not JSON", `{"jsonrpc":"2.0","id":1,"method":`, -32700, "parse error", "null"},
	{"bad JSON", `{bad json`, -32700, "parse error", "null"},
	{"empty batch", `[]`, -32600, "empty batch", "null"},
	{"not an object", `"ping"`, -32600, "a JSON-RPC message is an object, not a string", "null"},
	{"response without result", `{"jsonrpc":"2.0","id":1}`, -32600, `either "result" or "error"`, "1"},
	{"id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, `"id" must be a string or an integer, not true or false`, "null"},
	{"id array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, `not an array`, "null"},
	{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, `not an object`, "null"},
	{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, `"id" is null`, "null"},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, `"id" 1.5 is not an integer`, "null"},
	{"id past 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, -32600, `too large`, "null"},
	{"method a number", `{"jsonrpc":"2.0","id":7,"method":5}`, -32600, `"method" must be a string`, "7"},
	{"method null", `{"jsonrpc":"2.0","id":7,"method":null}`, -32600, `"method" must be a string`, "7"},
	{"wrong version", `{"jsonrpc":"1.0","id":"a","method":"ping"}`, -32600, `"jsonrpc" must be "2.0"`, `"a"`},
	{"upper-case key", `{"JSONRPC":"2.0","id":8,"method":"ping"}`, -32600, `"jsonrpc" must be "2.0"`, "8"},
	{"error not an object", `{"jsonrpc":"2.0","id":9,"error":"boom"}`, -32600, `"error" must be an object`, "9"},
	{"too deep", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`, -32600, "nested deeper than 1000", "null"},
	{"batch with a bad message", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":false,"method":"ping"}]`, -32600, "message 2 of the batch", "null"},
	{"batch reusing an id", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "uses id 1 twice", "null"},
}

func TestMCPMalformedOverHTTP(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, _ := api(t, svc, apiOptions{})
	headers := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

	// A session, opened by hand as a client does.
	status, h, body := do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, headers)
	session := h.Get("Mcp-Session-Id")
	if status != 200 || session == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	inSession := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": legacyVersion}
	for k, v := range headers {
		inSession[k] = v
	}
	if status, _, body := do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, inSession); status != 202 {
		t.Fatalf("notifications/initialized: %d %s", status, body)
	}
	ping := func(when string) {
		t.Helper()
		status, _, body := do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":99,"method":"ping"}`, inSession)
		if status != 200 || !strings.Contains(string(body), `"id":99`) || !strings.Contains(string(body), `"result"`) {
			t.Fatalf("ping after %s: %d %s", when, status, body)
		}
	}
	ping("initialize")

	check := func(t *testing.T, body string, hdr map[string]string, code int, says, id string) {
		t.Helper()
		status, h, got := do(t, "POST", ts.URL+"/mcp", body, hdr)
		var a rpcAnswer
		if err := json.Unmarshal(got, &a); err != nil || a.JSONRPC != "2.0" || a.Error == nil {
			t.Fatalf("%d %s: not a JSON-RPC error (%v)", status, got, err)
		}
		if status != 400 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("status %d, Content-Type %q; want 400, application/json", status, h.Get("Content-Type"))
		}
		if a.Error.Code != code || !strings.Contains(a.Error.Message, says) || string(a.ID) != id {
			t.Errorf("code %d, id %s, %q; want %d, id %s, saying %q", a.Error.Code, a.ID, a.Error.Message, code, id, says)
		}
	}
	for _, tt := range malformed {
		t.Run(tt.name, func(t *testing.T) {
			check(t, tt.body, headers, tt.code, tt.says, tt.id)
			check(t, tt.body, inSession, tt.code, tt.says, tt.id)
			ping(tt.name)
		})
	}

	// What the SDK refuses itself comes back as JSON-RPC too.
	for _, tt := range []struct {
		name, body string
		code       int
		says, id   string
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":16,"method":"nosuch"}`, -32601, `method not found: "nosuch"`, "16"},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/nosuch"}`, -32601, `"notifications/nosuch"`, "null"},
		{"missing params", `{"jsonrpc":"2.0","id":"c","method":"tools/call"}`, -32600, `params`, `"c"`},
		{"batch under 2025-11-25", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "batching is not supported", "null"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check(t, tt.body, inSession, tt.code, tt.says, tt.id)
			ping(tt.name)
		})
	}
}
