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
			if w, ok := wireOf(r); ok {
				return w, nil
			}
		}
		return res, nil
	}
}

// wireOf returns r as a toolWire, when one says all r says: one text
// content with nothing beside its text, no input requests and no request
// state.
func wireOf(r *mcp.CallToolResult) (*toolWire, bool) {
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
	rt, ok := resultTypeOf(r)
	if !ok {
		return nil, false
	}
	w := &toolWire{
		Content:           []textWire{{Type: "text", Text: text.Text}},
		StructuredContent: r.StructuredContent,
		IsError:           r.IsError,
		ResultType:        rt,
	}
	w.Meta = r.Meta
	return w, true
}

// resultTypeOf is the resultType the SDK writes for r, which it keeps
// unexported (set for clients of protocol versions that have it): the SDK
// encodes r without its content, which is small, and the field is read
// back.
func resultTypeOf(r *mcp.CallToolResult) (string, bool) {
	bare := *r
	bare.Content, bare.StructuredContent, bare.Meta = nil, nil, nil
	b, err := bare.MarshalJSON()
	if err != nil {
		return "", false
	}
	var got struct {
		ResultType string `json:"resultType"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		return "", false
	}
	return got.ResultType, true
}
