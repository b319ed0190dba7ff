package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// otherAuthor is the client that edits while Claude Code works.
const otherAuthor = "another-client"

// otherTag is the tag that client sets.
const otherTag = "seen-by-another-client"

// TestClaudeCode drives Claude Code through a read, an edit, and its
// resources while another client edits, with weft over stdio (weft mcp)
// and over Streamable HTTP (weft serve with a token), and writes what
// Claude Code sent to report.txt.
func TestClaudeCode(t *testing.T) {
	needClaude(t)
	f := prepare(t)
	rep := &report{}
	t.Cleanup(func() { rep.write(t) })
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			sec := rep.section(transport)
			t.Run("read", func(t *testing.T) { testRead(t, f, transport, sec) })
			t.Run("edit", func(t *testing.T) { testEdit(t, f, transport, sec) })
			t.Run("resources", func(t *testing.T) { testResources(t, f, transport, sec) })
		})
	}
}

// start gives a run its own copy of the file and weft on it.
func start(t *testing.T, f fixture, transport string) (string, *weftUnderTest) {
	t.Helper()
	dir := logsDir(t)
	db := f.copyTo(t, dir)
	if transport == "stdio" {
		return dir, stdioWeft(t, dir, db)
	}
	return dir, httpWeft(t, dir, db)
}

// ranToTheEnd checks that Claude Code finished the conversation the
// stand-in led: every call made, its last answer printed.
func ranToTheEnd(t *testing.T, dir string, run claudeRun, calls int) {
	t.Helper()
	if run.err != nil || run.output.IsError || run.output.Result != doneText {
		run.fail(t, dir, "claude -p did not finish the conversation: exit %v, result %q (want %q)", run.err, run.output.Result, doneText)
	}
	if len(run.problems) > 0 || len(run.results) != calls {
		run.fail(t, dir, "the stand-in asked for %d calls and got %d results back", calls, len(run.results))
	}
	for _, r := range run.results {
		if r.isError {
			run.fail(t, dir, "%s came back as an error: %s", r.tool, r.text)
		}
	}
}

// handshake is what Claude Code said about itself and what weft answered.
type handshake struct {
	client       string // clientInfo.name
	version      string // clientInfo.version
	protocol     string // the protocol version in use
	capabilities json.RawMessage
	subscribe    bool     // weft declared resources.subscribe
	weftTools    []string // the tools weft listed
}

// readHandshake finds the handshake in an MCP log: initialize (protocol
// 2025-11-25 and before) or, in the 2026-07-28 protocol, the client's
// _meta on every request and the server's discover result.
func readHandshake(wire []wireLine) handshake {
	var h handshake
	byID := map[string]rpc{}
	for _, m := range messages(wire, "client") {
		if m.Method != "" && len(m.ID) > 0 {
			byID[string(m.ID)] = m
		}
	}
	for _, m := range messages(wire, "server") {
		req, ok := byID[string(m.ID)]
		if !ok || len(m.Result) == 0 {
			continue
		}
		switch req.Method {
		case "initialize", "server/discover":
			var r struct {
				ProtocolVersion   string   `json:"protocolVersion"`
				SupportedVersions []string `json:"supportedVersions"`
				Capabilities      struct {
					Resources struct {
						Subscribe bool `json:"subscribe"`
					} `json:"resources"`
				} `json:"capabilities"`
			}
			json.Unmarshal(m.Result, &r)
			h.subscribe = h.subscribe || r.Capabilities.Resources.Subscribe
			if r.ProtocolVersion != "" {
				h.protocol = r.ProtocolVersion
			}
			var p struct {
				ProtocolVersion string          `json:"protocolVersion"`
				Capabilities    json.RawMessage `json:"capabilities"`
				ClientInfo      struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"clientInfo"`
				Meta struct {
					ProtocolVersion string          `json:"io.modelcontextprotocol/protocolVersion"`
					Capabilities    json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
					ClientInfo      struct {
						Name    string `json:"name"`
						Version string `json:"version"`
					} `json:"io.modelcontextprotocol/clientInfo"`
				} `json:"_meta"`
			}
			json.Unmarshal(req.Params, &p)
			if req.Method == "initialize" {
				h.client, h.version, h.capabilities = p.ClientInfo.Name, p.ClientInfo.Version, p.Capabilities
			} else if h.client == "" {
				h.client, h.version, h.capabilities = p.Meta.ClientInfo.Name, p.Meta.ClientInfo.Version, p.Meta.Capabilities
				// The client speaks the discovered protocol only if the
				// server supports it; otherwise it initializes.
				if slices.Contains(r.SupportedVersions, p.Meta.ProtocolVersion) {
					h.protocol = p.Meta.ProtocolVersion
				}
			}
		case "tools/list":
			var r struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			json.Unmarshal(m.Result, &r)
			for _, tool := range r.Tools {
				h.weftTools = append(h.weftTools, tool.Name)
			}
		}
	}
	return h
}

// toolCalls are the tools/call requests Claude Code sent weft.
func toolCalls(wire []wireLine) []struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
} {
	var out []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	for _, m := range messages(wire, "client") {
		if m.Method != "tools/call" {
			continue
		}
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(m.Params, &p)
		out = append(out, p)
	}
	return out
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// testRead: the stand-in asks for get_message_range over messages 0-3;
// the result Claude Code hands back is weft's, holding those four.
func testRead(t *testing.T, f fixture, transport string, sec *section) {
	dir, w := start(t, f, transport)
	args := map[string]any{"session_id": f.session, "start_idx": 0, "end_idx": 3}
	s := &standIn{calls: []call{{tool: "get_message_range", input: args}}}
	run := runClaude(t, dir, w, "Read the first four messages of the weft session "+f.session+".", s)
	ranToTheEnd(t, dir, run, 1)
	h := readHandshake(run.wire)

	// Claude Code offers every weft tool to the model, as mcp__weft__<name>.
	var offered []string
	for _, name := range run.toolNames {
		if rest, ok := strings.CutPrefix(name, "mcp__weft__"); ok {
			offered = append(offered, rest)
		}
	}
	if len(h.weftTools) == 0 || !reflect.DeepEqual(sorted(offered), sorted(h.weftTools)) {
		run.fail(t, dir, "weft listed %d tools %v; Claude Code offered the model %d as mcp__weft__*: %v", len(h.weftTools), h.weftTools, len(offered), offered)
	}
	res := run.results[0]
	if res.tool != "mcp__weft__get_message_range" {
		run.fail(t, dir, "the stand-in called %q, want mcp__weft__get_message_range", res.tool)
	}
	calls := toolCalls(run.wire)
	want, _ := json.Marshal(args)
	if len(calls) != 1 || calls[0].Name != "get_message_range" || !sameJSON(calls[0].Arguments, want) {
		run.fail(t, dir, "weft got tools/call %+v, want one get_message_range with %s", calls, want)
	}
	// The model sees the four messages, and what weft call gives for the
	// same arguments, unchanged.
	for i, m := range f.messages[:4] {
		enc, _ := json.Marshal(m.Content)
		if !strings.Contains(res.text, string(enc[1:len(enc)-1])) {
			run.fail(t, dir, "the tool result lacks message %d (%.60q…): %.600s", i, m.Content, res.text)
		}
	}
	if enc, _ := json.Marshal(f.messages[4].Content); strings.Contains(res.text, string(enc[1:len(enc)-1])) {
		run.fail(t, dir, "the tool result holds message 4, outside 0-3: %.600s", res.text)
	}
	if !sameJSON([]byte(res.text), f.firstFour) {
		run.fail(t, dir, "the tool result is not what weft call gives for the same arguments:\nClaude Code: %.800s\nweft call:   %.800s", res.text, f.firstFour)
	}

	sec.set(func(s *section) {
		s.handshake = h
		s.modelTools = len(run.toolNames)
		s.add("read", run, fmt.Sprintf("%s(0..3): the tool_result holds messages 0-3, %d bytes, equal to weft call's", res.tool, len(res.text)))
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// operation is an entry of list_operations.
type operation struct {
	ID      string `json:"operation_id"`
	Type    string `json:"op_type"`
	Author  string `json:"author"`
	Summary string `json:"summary"`
}

func listOperations(t *testing.T, db, session string) []operation {
	t.Helper()
	var out struct {
		Operations []operation `json:"operations"`
	}
	b := weftRun(t, "--db", db, "call", "list_operations", "session_id="+session)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("list_operations: %v: %s", err, b)
	}
	return out.Operations
}

// testEdit: the stand-in asks for digest_messages over 4-7; afterwards
// the file holds that digest, authored by the name Claude Code gave.
func testEdit(t *testing.T, f fixture, transport string, sec *section) {
	dir, w := start(t, f, transport)
	summary := "Chose memcached: twelve replicas would each warm a cold cache (digested through Claude Code)"
	s := &standIn{calls: []call{{tool: "digest_messages", input: map[string]any{"session_id": f.session, "start_idx": 4, "end_idx": 7, "summary": summary}}}}
	run := runClaude(t, dir, w, "Digest messages 4 to 7 of the weft session "+f.session+".", s)
	ranToTheEnd(t, dir, run, 1)
	h := readHandshake(run.wire)
	if h.client == "" {
		run.fail(t, dir, "no client name in the MCP log (neither initialize nor the 2026-07-28 _meta)")
	}
	w.release(t)
	ops := listOperations(t, w.db, f.session)
	i := slices.IndexFunc(ops, func(o operation) bool { return o.Type == "digest" && o.Summary == summary })
	if len(ops) != 1 || i < 0 {
		run.fail(t, dir, "list_operations after the run: %+v, want the one digest Claude Code made", ops)
	}
	if ops[i].Author != h.client {
		run.fail(t, dir, "the digest's author is %q, want Claude Code's client name %q", ops[i].Author, h.client)
	}
	if !strings.Contains(run.results[0].text, ops[i].ID) {
		run.fail(t, dir, "the tool result does not name the operation %s: %s", ops[i].ID, run.results[0].text)
	}
	sec.set(func(s *section) {
		s.add("edit", run, fmt.Sprintf("%s(4..7): list_operations shows digest %s by %q", run.results[0].tool, ops[i].ID, ops[i].Author))
	})
}

// apiCall runs a tool through weft's HTTP API as another client.
func apiCall(base, token, tool string, args any) error {
	body, _ := json.Marshal(args)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/"+tool, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Weft-Author", otherAuthor)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return fmt.Errorf("%s: %s %s", tool, resp.Status, b.Bytes())
	}
	return nil
}

// report collects what each transport's runs saw, for report.txt.
type report struct {
	mu       sync.Mutex
	sections []*section
}

// section is one transport's part of the report.
type section struct {
	mu           sync.Mutex
	transport    string
	handshake    handshake
	methods      []string
	modelTools   int
	lines        []string
	subscription string
	afterEdit    string
}

func (r *report) section(transport string) *section {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &section{transport: transport}
	r.sections = append(r.sections, s)
	return s
}

func (s *section) set(f func(*section)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *section) add(name string, run claudeRun, what string) {
	for _, m := range methods(run.wire, "client") {
		if !slices.Contains(s.methods, m) {
			s.methods = append(s.methods, m)
		}
	}
	s.lines = append(s.lines, fmt.Sprintf("  %-9s ok  %5.1fs  %d API requests  %s", name, run.took.Seconds(), len(run.exchanges), what))
}

func (r *report) write(t *testing.T) {
	var b strings.Builder
	for _, s := range r.sections {
		s.mu.Lock()
		h := s.handshake
		fmt.Fprintf(&b, "== Claude Code over %s\n", s.transport)
		if h.client != "" {
			fmt.Fprintf(&b, "  client %s %s, protocol %s, capabilities %s\n", h.client, h.version, h.protocol, h.capabilities)
			fmt.Fprintf(&b, "  weft's %d tools offered to the model as mcp__weft__<name> (of %d tools in all)\n", len(h.weftTools), s.modelTools)
			fmt.Fprintf(&b, "  MCP methods it sent: %s\n", strings.Join(s.methods, " "))
		}
		for _, l := range s.lines {
			b.WriteString(l + "\n")
		}
		if s.subscription != "" {
			fmt.Fprintf(&b, "  subscription: %s\n  %s\n", s.subscription, s.afterEdit)
		}
		s.mu.Unlock()
	}
	t.Log("\n" + b.String())
	if root := os.Getenv(logsEnv); root != "" {
		if err := os.WriteFile(filepath.Join(root, "report.txt"), []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}
