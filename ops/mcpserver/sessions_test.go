package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A session whose client keeps its GET stream open is alive, however
// long it sends no POST; one without a stream still expires.
func TestSessionLivesWhileItsStreamIsOpen(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, srv := api(t, svc, apiOptions{SessionTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "listening"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	time.Sleep(500 * time.Millisecond)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("a session with its stream open expired: %v", err)
	}
	if n := srv.Agents(); n != 1 {
		t.Fatalf("%d agents, want the listening one", n)
	}
}

// mcpPost sends one JSON-RPC message to /mcp as a client of the given
// session would.
func mcpPost(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", legacyVersion)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// initialize opens a session over raw HTTP and returns its ID.
func initialize(t *testing.T, url string) string {
	t.Helper()
	resp := mcpPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	// The answer is read, as a client does: a body closed unread cancels
	// the request, and the session is left uninitialized.
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, sid)
	}
	resp = mcpPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	return sid
}

// An unknown (or expired) session is a 404 with a JSON-RPC error, which
// tells a client to start a new one.
func TestUnknownSessionIsAJSONRPCError(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, _ := api(t, svc, apiOptions{SessionTimeout: 50 * time.Millisecond})
	sid := initialize(t, ts.URL)
	time.Sleep(300 * time.Millisecond) // no stream: it expires
	for _, session := range []string{sid, "nosuchsession"} {
		resp := mcpPost(t, ts.URL, session, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
		var body struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		err := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || err != nil || body.JSONRPC != "2.0" || string(body.ID) != "7" || body.Error.Code != -32001 || !strings.Contains(body.Error.Message, "initialize") {
			t.Errorf("session %q: %s %s %+v (%v)", session, resp.Status, resp.Header.Get("Content-Type"), body, err)
		}
	}
}

// sseEvent is one server-sent event.
type sseEvent struct{ name, id, retry, data string }

func readEvent(t *testing.T, r *bufio.Reader) sseEvent {
	t.Helper()
	var e sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %v (so far %+v)", err, e)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if e != (sseEvent{}) {
				return e
			}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "event":
			e.name = v
		case "id":
			e.id = v
		case "retry":
			e.retry = v
		case "data":
			e.data += v
		}
	}
}

// A call's stream starts with a priming event with an ID and a retry
// time; when it drops, a GET with Last-Event-ID gets what followed.
func TestDroppedStreamResumes(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, _ := api(t, svc, apiOptions{})
	session := initialize(t, ts.URL)
	resp := mcpPost(t, ts.URL, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_message_range","arguments":{"session_id":"`+sid+`","start_idx":0,"end_idx":1}}}`)
	prime := readEvent(t, bufio.NewReader(resp.Body))
	resp.Body.Close() // dropped before the result
	if prime.id == "" || prime.retry == "" {
		t.Fatalf("priming event %+v: want an id and a retry time", prime)
	}

	// As a client does, it waits the retry time before it resumes, and
	// again while the server has not yet seen the old stream go (409).
	retry, err := strconv.Atoi(prime.retry)
	if err != nil {
		t.Fatalf("retry %q is not a number of milliseconds", prime.retry)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		time.Sleep(time.Duration(retry) * time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", legacyVersion)
		req.Header.Set("Last-Event-ID", prime.id)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusConflict {
			break
		}
		resp.Body.Close()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resuming: %s", resp.Status)
	}
	ev := readEvent(t, bufio.NewReader(resp.Body))
	var msg struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal([]byte(ev.data), &msg) != nil || msg.ID != 2 || !strings.Contains(string(msg.Result), `"messages"`) {
		t.Fatalf("resumed with %+v, want the call's result", ev)
	}
}
