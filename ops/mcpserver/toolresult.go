package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's result is its JSON twice, as text and as structured content.
// The SDK encodes a *mcp.CallToolResult through two MarshalJSON methods of
// its own (the result's and the text's), and encoding/json re-scans what
// every MarshalJSON gives: the structured content was scanned three times
// and the text, escaped, twice, before the transport scans the message
// once more. toolWire is the same result as plain fields, which the SDK's
// encoder writes in one pass: the text escaped once, the structured
// content encoded once from the result's value (or, given as JSON,
// scanned once). On a read of 40 messages (26 kB of JSON) that was
// a sixth of a tools/call through the SDK (BenchmarkMCPInProcessMessageRange40).

// toolWire is a tools/call result as it goes on the wire: the fields of
// mcp.CallToolResult that a weft tool's result can have, in the order
// the SDK writes them. mcp.ResultBase makes it a result the SDK sends
// like its own, and carries _meta.
type toolWire struct {
	mcp.ResultBase
	Content           []textWire `json:"content"`
	StructuredContent any        `json:"structuredContent,omitempty"`
	IsError           bool       `json:"isError,omitempty"`
	ResultType        string     `json:"resultType,omitempty"`
}

// textWire is mcp.TextContent as the SDK writes it.
type textWire struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// encodeToolResults sends a tools/call result that is one text, with
// structured content or without, as a toolWire; any other result is the
// SDK's to encode, as are the results of other methods.
func encodeToolResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok {
			if w, ok := wireOf(r, req); ok {
				return w, nil
			}
		}
		return res, nil
	}
}

// wireOf returns r, the answer to req, as a toolWire, when one says all
// r says: one text content with nothing beside its text, no input
// requests and no request state.
func wireOf(r *mcp.CallToolResult, req mcp.Request) (*toolWire, bool) {
	if r == nil || len(r.Content) != 1 || r.InputRequests != nil || r.RequestState != "" {
		return nil, false
	}
	text, ok := r.Content[0].(*mcp.TextContent)
	if !ok || text == nil || text.Meta != nil || text.Annotations != nil {
		return nil, false
	}
	if sc, ok := r.StructuredContent.(json.RawMessage); ok && len(sc) == 0 {
		return nil, false // not JSON: the SDK answers it as it does
	}
	w := &toolWire{
		Content:           []textWire{{Type: "text", Text: text.Text}},
		StructuredContent: r.StructuredContent,
		IsError:           r.IsError,
		ResultType:        resultTypeOf(req),
	}
	w.Meta = r.Meta
	return w, true
}

// resultTypeOf is the resultType the SDK gives a result without input
// requests, which it keeps unexported: "complete" when the session was
// initialized at a protocol version that has the field
// (multiRoundTripVersion on) or, a stateless request, not initialized at
// all (the SDK takes its latest version then), and none before. It is
// the session's, so it is read from the session rather than from r
// encoded again (TestToolWireIsTheSDKsResult holds it to the SDK's).
func resultTypeOf(req mcp.Request) string {
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		if p := ss.InitializeParams(); p != nil && p.ProtocolVersion < multiRoundTripVersion {
			return ""
		}
	}
	return "complete"
}
