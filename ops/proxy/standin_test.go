package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/memory"
	"weft/ops/reads"
	"weft/store"
	"weft/store/boltstore"
)

// A stand-in for the providers' APIs: it records every request it gets
// and answers as the test says, in the provider's format, streaming or
// not. Nothing here reaches a real provider.

// upstreamRequest is a request the stand-in got.
type upstreamRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// standIn is the stand-in upstream.
type standIn struct {
	t      testing.TB
	server *httptest.Server
	mu     sync.Mutex
	got    []upstreamRequest
	n      int // requests got
	// answer answers a request; nil answers with answerText.
	answer func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newStandIn(t testing.TB) *standIn {
	s := &standIn{t: t}
	s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		// The latest requests are kept (a benchmark sends thousands of
		// megabytes), and how many came.
		if len(s.got) == keptRequests {
			s.got = append(s.got[:0], s.got[1:]...)
		}
		s.got = append(s.got, upstreamRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		s.n++
		answer := s.answer
		s.mu.Unlock()
		if answer == nil {
			answer = answerText("Done.")
		}
		answer(w, r, body)
	}))
	t.Cleanup(s.server.Close)
	return s
}

// last is the last request the stand-in got.
func (s *standIn) last() upstreamRequest {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.got) == 0 {
		s.t.Fatal("the stand-in got no request")
	}
	return s.got[len(s.got)-1]
}

func (s *standIn) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// keptRequests is how many of its latest requests the stand-in keeps.
const keptRequests = 16

func (s *standIn) setAnswer(a func(w http.ResponseWriter, r *http.Request, body []byte)) {
	s.mu.Lock()
	s.answer = a
	s.mu.Unlock()
}

// streams reports whether a request body asks for a stream.
func streams(body []byte) bool {
	return bytes.Contains(body, []byte(`"stream":true`))
}

// answerText answers with text, in the format and mode the request
// asks for.
func answerText(text string) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return answerWith(text, nil)
}

// toolCall is a call the stand-in's answer makes.
type toolCall struct {
	id, name, input string
}

// answerWith answers with text and tool calls.
func answerWith(text string, calls []toolCall) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		anthropic := strings.HasSuffix(r.URL.Path, "/messages")
		switch {
		case strings.HasSuffix(r.URL.Path, "/count_tokens"):
			writeJSON(w, `{"input_tokens":42}`)
		case anthropic && streams(body):
			anthropicStream(w, text, calls, -1)
		case anthropic:
			content := []string{fmt.Sprintf(`{"type":"text","text":%q}`, text)}
			for _, c := range calls {
				content = append(content, fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, c.id, c.name, c.input))
			}
			writeJSON(w, `{"id":"msg_1","type":"message","role":"assistant","model":"stand-in","content":[`+strings.Join(content, ",")+`],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}}`)
		case streams(body):
			openAIStream(w, text, calls)
		default:
			tc := ""
			if len(calls) > 0 {
				var list []string
				for _, c := range calls {
					list = append(list, fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}`, c.id, c.name, c.input))
				}
				tc = `,"tool_calls":[` + strings.Join(list, ",") + `]`
			}
			writeJSON(w, fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","model":"stand-in","choices":[{"index":0,"message":{"role":"assistant","content":%q%s},"finish_reason":"stop"}]}`, text, tc))
		}
	}
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_standin")
	w.Write([]byte(body))
}

// anthropicStream writes a Messages API stream of text and calls, one
// event a flush; with cut >= 0 it stops after that many events and waits
// for the request to end.
func anthropicStream(w http.ResponseWriter, text string, calls []toolCall, cut int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Request-Id", "req_standin")
	events := []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"stand-in","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	}
	half := len(text) / 2
	for _, piece := range []string{text[:half], text[half:]} {
		events = append(events, `event: content_block_delta`+"\n"+fmt.Sprintf(`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, piece))
	}
	events = append(events, `event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`)
	for k, c := range calls {
		i := k + 1
		events = append(events,
			`event: content_block_start`+"\n"+fmt.Sprintf(`data: {"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, c.id, c.name),
			`event: content_block_delta`+"\n"+fmt.Sprintf(`data: {"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, c.input[:len(c.input)/2]),
			`event: content_block_delta`+"\n"+fmt.Sprintf(`data: {"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, c.input[len(c.input)/2:]),
			`event: content_block_stop`+"\n"+fmt.Sprintf(`data: {"type":"content_block_stop","index":%d}`, i),
		)
	}
	events = append(events,
		`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
		`event: message_stop`+"\n"+`data: {"type":"message_stop"}`,
	)
	rc := http.NewResponseController(w)
	for k, e := range events {
		if k == cut {
			return
		}
		fmt.Fprintf(w, "%s\n\n", e)
		rc.Flush()
	}
}

// openAIStream writes a chat completion stream of text and calls.
func openAIStream(w http.ResponseWriter, text string, calls []toolCall) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	send := func(s string) {
		fmt.Fprintf(w, "data: %s\n\n", s)
		rc.Flush()
	}
	chunk := func(delta, finish string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"stand-in","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, delta, finish)
	}
	send(chunk(`{"role":"assistant","content":""}`, "null"))
	half := len(text) / 2
	send(chunk(fmt.Sprintf(`{"content":%q}`, text[:half]), "null"))
	send(chunk(fmt.Sprintf(`{"content":%q}`, text[half:]), "null"))
	for k, c := range calls {
		send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, k, c.id, c.name), "null"))
		send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%q}}]}`, k, c.input), "null"))
	}
	finish := `"stop"`
	if len(calls) > 0 {
		finish = `"tool_calls"`
	}
	send(chunk(`{}`, finish))
	send("[DONE]")
}

// proxyRig is weft's listener in front of a stand-in, over a fresh file,
// logging everything to logs.
type proxyRig struct {
	t     testing.TB
	up    *standIn
	svc   *ops.Service
	path  string
	weft  *httptest.Server
	logs  *syncBuffer
	proxy *Handler
}

// syncBuffer is a log both the test and the handlers use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// rigOptions are what a test asks of the listener (Token) and of the
// proxy (Upstreams; empty: the stand-in).
type rigOptions struct {
	Token     string
	Upstreams Upstreams
	// Memory: the service keeps every session within its memory policy
	// (memory.Keep), as weft's do.
	Memory bool
	// Store, when set, is the store the service keeps its sessions in (a
	// PostgreSQL database); otherwise a bbolt file of the test's own.
	Store store.Store
}

func newProxyRig(t testing.TB, o rigOptions) *proxyRig {
	t.Helper()
	rig := &proxyRig{t: t, up: newStandIn(t), path: filepath.Join(t.TempDir(), "weft.db"), logs: &syncBuffer{}}
	st := o.Store
	if st == nil {
		bst, err := boltstore.Open(rig.path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bst.Close() })
		st = bst
	}
	logger := slog.New(slog.NewTextHandler(rig.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []ops.Option{ops.WithLogger(logger)}
	if o.Memory {
		opts = append(opts, memory.Keep())
	}
	rig.svc = ops.New(st, opts...)
	if o.Upstreams.Anthropic == "" {
		o.Upstreams.Anthropic = rig.up.server.URL
	}
	if o.Upstreams.OpenAI == "" {
		o.Upstreams.OpenAI = rig.up.server.URL + "/v1"
	}
	rig.proxy = New(rig.svc, Options{Logger: logger, Upstreams: o.Upstreams})
	rig.weft = httptest.NewServer(listen.Handler(listen.Options{Token: o.Token, Faces: []httpx.Face{rig.proxy.Face()}}))
	t.Cleanup(rig.weft.Close)
	return rig
}

// post sends a request to weft and returns its answer, read whole.
func (rig *proxyRig) post(path, body string, header map[string]string) (*http.Response, []byte) {
	rig.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, rig.weft.URL+path, strings.NewReader(body))
	if err != nil {
		rig.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rig.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		rig.t.Fatal(err)
	}
	return resp, b
}

// fileHash is the hash of the store's file: a request weft refuses
// leaves it as it was.
func (rig *proxyRig) fileHash() [32]byte {
	rig.t.Helper()
	b, err := os.ReadFile(rig.path)
	if err != nil {
		rig.t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// send sends body to weft at path as it is, a GET when body is empty
// and a POST otherwise, and returns the answer's status and body.
func (rig *proxyRig) send(t testing.TB, path, body string) (int, []byte) {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, _ := http.NewRequestWithContext(context.Background(), method, rig.weft.URL+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}

// messages waits until session sid holds n stored messages, and fails
// the test if it comes to hold another number.
func (rig *proxyRig) messages(sid string, n int) {
	rig.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, _, err := rig.svc.View(sid)
		if errors.Is(err, ops.ErrNotFound) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // its first write is under way
			continue
		}
		if err != nil {
			rig.t.Fatal(err)
		}
		if info.MessageCount == n {
			return
		}
		if info.MessageCount > n || time.Now().After(deadline) {
			rig.t.Fatalf("session %s holds %d messages, want %d", sid, info.MessageCount, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leaveMidStream posts a streamed request to weft, reads the start of
// its answer and leaves, and waits until weft hangs up on the upstream
// (gone closed). It returns the session the request went to.
func (rig *proxyRig) leaveMidStream(path, body string, gone <-chan struct{}) string {
	rig.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rig.weft.URL+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rig.t.Fatal(err)
	}
	first := make([]byte, 64)
	if _, err := io.ReadAtLeast(resp.Body, first, 1); err != nil {
		rig.t.Fatal(err)
	}
	sid := resp.Header.Get(SessionHeader)
	cancel() // the client leaves mid-stream
	resp.Body.Close()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		rig.t.Fatal("weft did not hang up on the upstream when its client left")
	}
	return sid
}

// onlySession waits until the file holds one session, and returns its
// ID.
func (rig *proxyRig) onlySession() string {
	rig.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		res, err := reads.ListSessions(rig.svc, context.Background(), reads.ListSessionsArgs{})
		switch {
		case err != nil || time.Now().After(deadline):
			rig.t.Fatal("no session", err)
		case len(res.Sessions) == 1:
			return res.Sessions[0].SessionID
		}
	}
}

// sessions counts the sessions in the file.
func (rig *proxyRig) sessions() int {
	rig.t.Helper()
	res, err := reads.ListSessions(rig.svc, context.Background(), reads.ListSessionsArgs{})
	if err != nil {
		rig.t.Fatal(err)
	}
	return res.Total
}
