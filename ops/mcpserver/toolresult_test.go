package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/reads"
	"weft/ops/tools"
)

// wireJSON encodes a result as the SDK's JSON-RPC layer does: an encoder
// that does not escape HTML, without the trailing newline.
func wireJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// TestToolWireIsTheSDKsResult holds encodeToolResults to the SDK's own
// encoding of the results it takes over: for each result, at the
// protocol version that has resultType and at one that has not, what it
// sends is the SDK's bytes but for <, > and & left unescaped (the SDK
// escapes them in the text and structured content, which any JSON reader
// reads back the same), and a client decodes the same result from both.
// Results it must leave alone are passed through as they are.
func TestToolWireIsTheSDKsResult(t *testing.T) {
	t.Parallel()
	structured := json.RawMessage(`{"a":"<b> & \"c\"\n\u2028 é","n":[1,2.5,null,true],"o":{}}`)
	cases := []struct {
		name  string
		res   *mcp.CallToolResult
		taken bool
	}{
		{"text and structured", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(structured)}}, StructuredContent: structured}, true},
		{"text only", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "plain <text>\t\x01\u2029 \"quoted\" \\"}}}, true},
		{"error", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "session \"x\" not found"}}}, true},
		{"empty text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{}}, StructuredContent: json.RawMessage(`{}`)}, true},
		{"meta", &mcp.CallToolResult{Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: "t"}}}, true},
		{"two contents", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, false},
		{"annotated text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}}, false},
		{"typed structured", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}, StructuredContent: map[string]any{"k": []any{"<v>", 1.5}}}, true},
		{"no content", &mcp.CallToolResult{}, false},
	}
	for _, version := range []string{legacyVersion, ""} {
		for _, c := range cases {
			t.Run(c.name+"@"+version, func(t *testing.T) {
				var inner, outer mcp.Result
				srv := mcp.NewServer(&mcp.Implementation{Name: "wire", Version: "1"}, nil)
				srv.AddTool(&mcp.Tool{Name: "t", InputSchema: &jsonschema.Schema{Type: "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						copied := *c.res
						return &copied, nil
					})
				record := func(to *mcp.Result) mcp.Middleware {
					return func(next mcp.MethodHandler) mcp.MethodHandler {
						return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
							res, err := next(ctx, method, req)
							if method == "tools/call" {
								*to = res
							}
							return res, err
						}
					}
				}
				// Middleware added later runs outside: inner sees the SDK's
				// result, outer what encodeToolResults made of it.
				srv.AddReceivingMiddleware(record(&inner))
				srv.AddReceivingMiddleware(record(&outer), encodeToolResults)
				clientT, serverT := mcp.NewInMemoryTransports()
				ctx := context.Background()
				ss, err := srv.Connect(ctx, serverT, nil)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer func() { cs.Close(); ss.Wait() }()
				got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				sdk, ok := inner.(*mcp.CallToolResult)
				if !ok {
					t.Fatalf("the SDK's result is a %T", inner)
				}
				if _, isWire := outer.(*toolWire); isWire != c.taken {
					t.Fatalf("taken over: %v, want %v", isWire, c.taken)
				}
				if !c.taken {
					if outer != inner {
						t.Fatalf("a result not taken over was changed: %T", outer)
					}
					return
				}
				// Past the middleware the SDK names itself in the _meta of
				// the result it sends at the latest protocol version: it
				// did so to ours, and would have to the SDK's.
				if m := outer.GetMeta(); m != nil {
					sdk.Meta = m
				}
				want := wireJSON(t, sdk)
				ours := wireJSON(t, outer)
				var escaped bytes.Buffer
				json.HTMLEscape(&escaped, ours)
				if !bytes.Equal(escaped.Bytes(), want) {
					t.Fatalf("wire differs from the SDK's\n ours: %s\n  sdk: %s", ours, want)
				}
				var fromSDK mcp.CallToolResult
				if err := json.Unmarshal(want, &fromSDK); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, &fromSDK) {
					t.Fatalf("the client decoded %+v, from the SDK's bytes %+v", got, &fromSDK)
				}
			})
		}
	}
}

// TestToolTextIsStructuredBytes holds weft's tools/call results to the
// spec's advice: the text content is the structured content's JSON, byte
// for byte, markup and escapes included, whether the structured content
// is encoded from the result's value or given as JSON.
func TestToolTextIsStructuredBytes(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	var sent []mcp.Result
	srv.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/call" {
				sent = append(sent, res)
			}
			return res, err
		}
	})
	cs := connect(t, srv, "tester", nil)
	callOK(t, cs, "append_messages", map[string]any{"session_id": sid, "messages": []map[string]any{
		{"role": "user", "content": "<script>a && b</script> \"quoted\" \\ \t \u2028 \x01 é"},
	}}, nil)
	var got reads.MessageRangeResult
	callOK(t, cs, "get_message_range", map[string]any{"session_id": sid, "start_idx": 0, "end_idx": 0}, &got)
	callOK(t, cs, "get_message_range", map[string]any{"session_id": sid, "start_idx": got.Total - 1, "end_idx": got.Total - 1}, nil)
	if len(sent) != 3 {
		t.Fatalf("%d results sent, want 3", len(sent))
	}
	for _, res := range sent {
		w, ok := res.(*toolWire)
		if !ok {
			t.Fatalf("a %T was sent, not a toolWire", res)
		}
		var wire struct {
			Content           []textWire      `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(wireJSON(t, w), &wire); err != nil {
			t.Fatal(err)
		}
		if len(wire.Content) != 1 || wire.Content[0].Text != string(wire.StructuredContent) {
			t.Fatalf("text and structured content differ:\n text: %+v\n structured: %s", wire.Content, wire.StructuredContent)
		}
	}
	if last := sent[2].(*toolWire).Content[0].Text; !strings.Contains(last, `<script>a && b</script> \"quoted\"`) {
		t.Errorf("the appended message is not in the read as written: %s", last)
	}
}
