package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
)

// The SDK sends an error a handler returned without a JSON-RPC code as
// code 0, which JSON-RPC does not define and clients cannot act on (a
// relay's missing token, a second initialize). Every error weft answers
// gets a code: the errors of handlers here (errorCodes), the SDK's
// refusals before any handler runs on stdio (codedTransport) and over
// HTTP (codedWriter).

// errorCodes gives every error a method returns a JSON-RPC code: a
// refused request is invalid params, a second initialize an invalid
// request, anything else an internal error.
func errorCodes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		return res, coded(err, method)
	}
}

// coded returns err with a JSON-RPC code; one it has is kept.
func coded(err error, method string) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != 0 {
		return err
	}
	code := int64(jsonrpc.CodeInternalError)
	var opsErr *ops.Error
	switch {
	case method == "initialize":
		// initialize fails only when it is not the session's first.
		code = jsonrpc.CodeInvalidRequest
	case errors.As(err, &opsErr) && !errors.Is(err, ops.ErrSummarySource):
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

// codedTransport gives a code to the errors the SDK answers on its own,
// before any method handler runs: a request before initialize, whose
// answer is an invalid request.
type codedTransport struct{ mcp.Transport }

func (t codedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return codedConn{c}, nil
}

type codedConn struct{ mcp.Connection }

func (c codedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(resp.Error, &rpcErr) || rpcErr.Code == 0 {
			fixed := *resp
			fixed.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: resp.Error.Error()}
			msg = &fixed
		}
	}
	return c.Connection.Write(ctx, msg)
}

// codedWriter gives a code to the errors the SDK answers on its own over
// Streamable HTTP, before any handler runs: a call in a session whose
// initialize never completed (its client gave up on the answer) is
// refused with no code. The SDK's HTTP transport takes no wrapper as
// stdio's does, so the fix is made on the way out: the SDK writes each
// message whole in one Write (a JSON body, or one SSE event, replayed
// ones too), and an uncoded error starts with a prefix that cannot occur
// inside a JSON string (its quotes would be escaped there).
type codedWriter struct{ http.ResponseWriter }

var (
	uncodedError = []byte(`"error":{"code":0,"message"`)
	invalidError = []byte(`"error":{"code":-32600,"message"`)
)

func (w codedWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, uncodedError) {
		return w.ResponseWriter.Write(p)
	}
	if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(p, uncodedError, invalidError)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush sends what was written, as the SDK's streams need.
func (w codedWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap gives http.ResponseController the writer underneath.
func (w codedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
