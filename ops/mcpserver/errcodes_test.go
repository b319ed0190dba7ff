package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/listen"
	"weft/ops/tools"
)

// No error weft answers carries code 0, which JSON-RPC does not define:
// each has the code of what went wrong, else -32603 (internal error).
func TestErrorsNeverCarryCodeZero(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		svc, _ := seeded(t)
		p := serveLines(t, New(tools.Local{Service: svc}, Options{}))
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		p.expectError("a call before initialize", jsonrpc.CodeInvalidRequest, "initializ", "1")
		p.handshake(legacyVersion)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"` + legacyVersion + `","capabilities":{},"clientInfo":{"name":"again","version":"1"}}}`)
		p.expectError("a second initialize", jsonrpc.CodeInvalidRequest, "initialize", "2")
		p.listTools(3)
		p.closeAndWait()
	})

	t.Run("HTTP", func(t *testing.T) {
		svc, _ := seeded(t)
		ts, _ := api(t, svc, apiOptions{})
		session := initialize(t, ts.URL)
		resp := mcpPost(t, ts.URL, session, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"again","version":"1"}}}`)
		defer resp.Body.Close()
		code, msg := errorIn(t, resp.Body)
		if code != jsonrpc.CodeInvalidRequest || !strings.Contains(msg, "initialize") {
			t.Fatalf("a second initialize over HTTP: %d %q", code, msg)
		}
	})

	t.Run("relay without the token", func(t *testing.T) {
		svc, sid := seeded(t)
		l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0", Token: "needed"})
		relayed, err := relayTo(l.Addr(), "")
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := connectAt(t, relayed, "tokenless", legacyVersion, nil)
		ctx := context.Background()
		for name, call := range map[string]func() error{
			"resources/read": func() error {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: URISessions + "/" + sid})
				return err
			},
			"prompts/get": func() error {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "startup"})
				return err
			},
			"resources/subscribe": func() error {
				return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: URISessions + "/" + sid})
			},
		} {
			err := call()
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || !strings.Contains(rpcErr.Message, "token") {
				t.Errorf("%s through a relay without the token: %v, want an internal error naming the token", name, err)
			}
		}
	})
}

// errorIn reads the JSON-RPC error of an answer, plain JSON or an event
// stream.
func errorIn(t *testing.T, body io.Reader) (int, string) {
	t.Helper()
	var data string
	br := bufio.NewReader(body)
	first, _ := br.Peek(1)
	if len(first) == 1 && first[0] == '{' {
		b, _ := io.ReadAll(br)
		data = string(b)
	} else {
		for {
			ev := readEvent(t, br)
			if ev.data != "" {
				data = ev.data
				break
			}
		}
	}
	var m struct {
		Error *struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(data), &m) != nil || m.Error == nil || m.Error.Code == nil {
		t.Fatalf("not a JSON-RPC error: %s", data)
	}
	return *m.Error.Code, m.Error.Message
}

// The SDK's own refusal over HTTP of a call in a session not yet
// initialized is given a code on its way out, in a JSON body or an SSE
// event alike; a message that quotes such an error in a string is left
// as it is.
func TestCodedWriterGivesTheSDKsRefusalsACode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":2,"error":{"code":0,"message":"method \"tools/call\" is invalid during session initialization"}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"method \"tools/call\" is invalid during session initialization"}}`},
		{"event: message\nid: x_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":0,\"message\":\"m\"}}\n\n",
			"event: message\nid: x_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32600,\"message\":\"m\"}}\n\n"},
		{`{"jsonrpc":"2.0","id":4,"result":{"text":"\"error\":{\"code\":0,\"message\""}}`,
			`{"jsonrpc":"2.0","id":4,"result":{"text":"\"error\":{\"code\":0,\"message\""}}`},
		{`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad"}}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad"}}`},
	} {
		rec := httptest.NewRecorder()
		n, err := codedWriter{rec}.Write([]byte(tc.in))
		if err != nil || n != len(tc.in) || rec.Body.String() != tc.want {
			t.Errorf("wrote %q (n=%d, %v), want %q", rec.Body.String(), n, err, tc.want)
		}
	}
}
