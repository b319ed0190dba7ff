// Package facetest is what the faces' tests share (ops/mcpserver,
// ops/listen, ops/relay, ops/proxy): a service over a seeded file, HTTP
// requests read whole, and MCP clients joined in memory. It imports no
// face, so that every face's own tests may import it.
package facetest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/demo"
	"weft/ops"
	"weft/store/boltstore"
)

// LegacyVersion is the protocol version today's clients (Claude Code,
// the inspector, the TypeScript SDK) negotiate.
const LegacyVersion = "2025-11-25"

// Seeded returns a service over a fresh file holding the demo thread,
// and the thread's session.
func Seeded(t testing.TB, opts ...ops.Option) (*ops.Service, string) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "weft.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := ops.New(st, opts...)
	sid, err := demo.Seed(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	return svc, sid
}

// Do sends a request and returns the status, headers and body. A "Host"
// header sets the request's Host.
func Do(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// ErrorOf reads an {"error": ...} body.
func ErrorOf(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("not a JSON error: %s (%v)", body, err)
	}
	return e.Error
}

// Connect joins an SDK client named name to srv over in-memory
// transports, at a given protocol version ("" for the latest), and
// returns the server's side too.
func Connect(t testing.TB, srv *mcp.Server, name, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	ctx := context.Background()
	clientT, serverT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, opts).Connect(ctx, clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs, ss
}

// CallOK calls a tool that must succeed and decodes its structured
// result into out (when not nil).
func CallOK(t testing.TB, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error %s", name, args, Text(res))
	}
	if out != nil {
		if err := json.Unmarshal([]byte(Text(res)), out); err != nil {
			t.Fatalf("%s: result is not JSON: %v\n%s", name, err, Text(res))
		}
	}
	return res
}

// CallErr calls a tool that must be refused and returns the error text.
func CallErr(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v, want a tool error", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want a tool error: %s", name, args, Text(res))
	}
	return Text(res)
}

// Text is a tool result's text content.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
