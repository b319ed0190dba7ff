package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"weft/ops/httpx"
	"weft/ops/tools"
)

// stdioPeer drives ServeIO as a client process would: lines in, lines out.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func serveLines(t *testing.T, srv *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	p.out.Buffer(nil, 16<<20)
	go func() {
		p.done <- srv.ServeIO(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("the server stopped reading: %v", err)
	}
}

// next reads the next line the server writes.
func (p *stdioPeer) next() map[string]json.RawMessage {
	p.t.Helper()
	got := make(chan bool, 1)
	go func() { got <- p.out.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			p.t.Fatalf("the server closed its output: %v", p.out.Err())
		}
	case <-time.After(10 * time.Second):
		p.t.Fatal("no answer from the server")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
		p.t.Fatalf("a line that is not JSON: %q", p.out.Text())
	}
	return m
}

// handshake initializes a session at version.
func (p *stdioPeer) handshake(version string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"lines","version":"1"}}}`)
	if m := p.next(); string(m["id"]) != `"init"` || m["result"] == nil {
		p.t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// listTools asks tools/list and checks every tool comes back.
func (p *stdioPeer) listTools(id int) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/list"}`)
	m := p.next()
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if string(m["id"]) != itoa(id) || json.Unmarshal(m["result"], &res) != nil || len(res.Tools) != len(tools.All()) {
		p.t.Fatalf("tools/list: %.300v", m)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// expectError reads an error answer and checks its code, message and id.
func (p *stdioPeer) expectError(name string, code int, says, id string) {
	p.t.Helper()
	m := p.next()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(m["error"], &e) != nil || string(m["jsonrpc"]) != `"2.0"` {
		p.t.Fatalf("%s: not a JSON-RPC error: %v", name, m)
	}
	if e.Code != code || !strings.Contains(e.Message, says) || string(m["id"]) != id {
		p.t.Errorf("%s: code %d, id %s, %q; want %d, id %s, saying %q", name, e.Code, m["id"], e.Message, code, id, says)
	}
}

func (p *stdioPeer) closeAndWait() {
	p.t.Helper()
	p.in.Close()
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Errorf("ServeIO after the client hung up: %v", err)
		}
	case <-time.After(10 * time.Second):
		p.t.Fatal("ServeIO did not return after the client hung up")
	}
}

// A bad line is answered and the session goes on; the SDK's own transport
// would stop at it.
func TestStdioSurvivesBadLines(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	p := serveLines(t, New(tools.Local{Service: svc}, Options{}))

	p.send(`{bad json`)
	p.expectError("bad JSON first", -32700, "parse error", "null")
	p.handshake(legacyVersion)
	p.listTools(2)
	for _, tt := range malformed {
		p.send(tt.body)
		p.expectError(tt.name, tt.code, tt.says, tt.id)
	}
	p.send(`   `) // blank lines are nothing
	p.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	p.expectError("batch under 2025-11-25", -32600, "batching is not supported", "null")
	p.send(`{"jsonrpc":"2.0","id":16,"method":"nosuch"}`)
	p.expectError("unknown method", -32601, "nosuch", "16")
	p.send(`{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"` + strings.Repeat("x", httpx.MaxBodyBytes) + `"}}`)
	p.expectError("a line over 8 MB", -32600, "longer than 8 MB", `"big"`)
	p.listTools(4)
	p.closeAndWait()
}

// A line over the cap is answered with its own id, wherever the id stands
// in it, so the client is not left waiting for an answer; without one it
// can find (a batch, an id inside a value), the answer's id is null.
func TestStdioOversizedLineKeepsItsID(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	p := serveLines(t, New(tools.Local{Service: svc}, Options{}))
	p.handshake(legacyVersion)
	huge := strings.Repeat("x", httpx.MaxBodyBytes)
	for _, tt := range []struct{ name, line, id string }{
		{"id first", `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"append_messages","arguments":{"messages":[{"role":"user","content":"` + huge + `"}]}}}`, "41"},
		{"id last, as the TypeScript SDK writes it", `{"method":"tools/call","params":{"name":"append_messages","arguments":{"messages":[{"role":"user","content":"` + huge + `"}]}},"jsonrpc":"2.0","id":"ts-42"}`, `"ts-42"`},
		{"an id inside the params only", `{"jsonrpc":"2.0","method":"notifications/x","params":{"id":7,"x":"` + huge + `"}}`, "null"},
		{"a string that looks like an id", `{"jsonrpc":"2.0","method":"x","params":{"s":"\",\"id\":9,` + huge + `"}}`, "null"},
		{"a batch", `[{"jsonrpc":"2.0","id":43,"method":"ping","params":{"x":"` + huge + `"}}]`, "null"},
	} {
		p.send(tt.line)
		p.expectError(tt.name, -32600, "longer than 8 MB", tt.id)
	}
	p.listTools(5)
	p.closeAndWait()
}

// Under a protocol version that has batches, a batch still reaches the SDK.
func TestStdioBatchesUnderOldProtocol(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	p := serveLines(t, New(tools.Local{Service: svc}, Options{}))
	p.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	p.expectError("batch before initialize", -32600, "batching", "null")
	p.handshake("2025-03-26")
	p.send(`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]`)
	if !p.out.Scan() || !strings.HasPrefix(p.out.Text(), "[") || !strings.Contains(p.out.Text(), `"id":6`) {
		t.Fatalf("batch at 2025-03-26: %s", p.out.Text())
	}
	p.listTools(7)
	p.closeAndWait()
}

// weft mcp relaying to the weft that holds the file filters the same way.
func TestStdioRelaySurvivesBadLines(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, _ := api(t, svc, apiOptions{})
	relayed, err := relayTo(ts.URL+"/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	p := serveLines(t, relayed)
	p.send(`{bad json`)
	p.expectError("bad JSON first", -32700, "parse error", "null")
	p.handshake(legacyVersion)
	p.send(`{"jsonrpc":"2.0","id":true,"method":"ping"}`)
	p.expectError("id true", -32600, `"id" must be a string or an integer`, "null")
	p.listTools(2)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_message_range","arguments":{"session_id":"` + sid + `","start_idx":0,"end_idx":1}}}`)
	if m := p.next(); string(m["id"]) != "3" || !strings.Contains(string(m["result"]), sid) {
		t.Fatalf("relayed tools/call: %.300v", m)
	}
	p.closeAndWait()
}

// A client that writes its requests and closes its end at once (a shell
// pipe) still gets every answer before the session ends.
func TestStdioAnswersRequestsSentBeforeTheInputEnds(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	srv := New(tools.Local{Service: svc}, Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeIO(context.Background(), inR, outW)
		outW.Close()
	}()
	lines := make(chan []string, 1)
	go func() {
		var got []string
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			got = append(got, sc.Text())
		}
		lines <- got
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`+"\n")
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeIO: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeIO did not end after its input did")
	}
	got := <-lines
	ids := map[string]bool{}
	for _, l := range got {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Result != nil {
			ids[string(m.ID)] = true
		}
	}
	for _, id := range []string{`1`, `2`, `"three"`} {
		if !ids[id] {
			t.Errorf("no answer to request %s; the server wrote %d lines", id, len(got))
		}
	}
}
