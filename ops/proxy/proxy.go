// Package proxy is the context proxy: weft speaks the model APIs agents
// already use, in front of the provider. Its HTTP side (Handler) reads
// a request's body and hands its thread to the engine (Engine, one kept
// with each ops.Service), which recognises the session the thread
// continues, stores what is new through the service's one write path,
// and gives back the effective thread; the body goes upstream with that
// thread in place of its own, and the answer comes back to the client
// as it arrives, to be stored by the engine once it is whole. A proxied
// request goes handler → engine → ops.Service → store, never back up.
// The proxy's paths are a Face the listener (ops/listen) serves.
//
// What the proxy shares with the pre-request hook (the tool
// apply_context_operations) stays in the core, ops: reading a caller's
// whole thread (ops.Service.ReadThread, with what it remembers of the
// threads read), and syncing it into a session (SyncPrepare: the stored
// messages matched by identity, the new ones appended). The hook is a
// Service method that the tool registry (ops/tools) binds, and the
// registry may import no face: so the proxy builds on the core's sync,
// rather than the hook on the proxy's.
package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/memory"
)

// The context proxy: weft speaks the model APIs agents already use, in
// front of the provider. A request's body is read, its messages handed
// to the engine (engine.go: it recognises the session, stores what is
// new, and gives back the effective thread), and the body goes upstream
// with the effective thread in place of its messages: everything else
// in it (system, tools, parameters, cache_control, fields weft does not
// know) goes as it came, and when no operation changes the thread the
// body goes byte for byte. The answer comes back to the client byte for byte
// as it arrives, flushed chunk by chunk, while a copy is read to store
// the assistant's message once it is complete.
//
//	POST /v1/messages                 Anthropic Messages (streaming or not)
//	POST /v1/messages/count_tokens    the same thread, counted: nothing stored
//	POST /v1/chat/completions         OpenAI Chat Completions (streaming or not)
//	POST /v1/responses                OpenAI Responses (streaming or not; responses.go)
//	POST /v1/responses/input_tokens   the same thread, counted: nothing stored
//	/v1/...                           anything else: passed through untouched
//
// A session is named by a /s/SESSION prefix (/s/SESSION/v1/messages) or
// the X-Weft-Session header; the answer says the session in
// X-Weft-Session. The client's credentials (x-api-key, authorization,
// anthropic-* and every other header of its own) go upstream and are
// never stored or logged. Where the listener wants a token, the proxy's
// paths take it in X-Weft-Token, since Authorization is the client's
// key for the provider.

const (
	// DefaultAnthropicUpstream is where Anthropic requests go unless
	// told otherwise: the base URL the Anthropic SDKs take
	// (ANTHROPIC_BASE_URL).
	DefaultAnthropicUpstream = "https://api.anthropic.com"
	// DefaultOpenAIUpstream is where OpenAI requests go unless told
	// otherwise: the base URL the OpenAI SDKs take (OPENAI_BASE_URL).
	DefaultOpenAIUpstream = "https://api.openai.com/v1"
	// SessionHeader names the session a proxied request continues; the
	// answer carries the session it went to.
	SessionHeader = "X-Weft-Session"
	// TokenHeader carries the listener's token on the proxy's paths.
	TokenHeader = "X-Weft-Token"
	// MaxBodyBytes caps a proxied request's body: the Messages
	// API's own limit.
	MaxBodyBytes = 32 << 20
	// maxAnswerBytes bounds the copy of an answer kept to store it; a
	// longer answer still reaches the client, and is not stored.
	maxAnswerBytes = 64 << 20
)

// Upstreams are where the context proxy sends what it takes: each API's
// base URL, as that provider's SDK takes it.
type Upstreams struct {
	// Anthropic is the Messages API's base URL (POST Anthropic +
	// "/v1/messages"); empty means DefaultAnthropicUpstream.
	Anthropic string
	// OpenAI is the OpenAI APIs' base URL, with its /v1 (POST OpenAI +
	// "/chat/completions" or "/responses"); empty means
	// DefaultOpenAIUpstream.
	OpenAI string
	// Client sends the requests; nil means one of the proxy's own,
	// which asks for no compression (the answer is passed on as it
	// comes) and follows no redirect (the client sees it).
	Client *http.Client
}

// CheckUpstream says what is wrong with an upstream base URL, or nil.
func CheckUpstream(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("upstream %q is not a URL: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("upstream %q is not an http:// or https:// URL", raw)
	case u.Host == "":
		return fmt.Errorf("upstream %q names no host", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("upstream %q has a query or fragment: give the API's base URL only", raw)
	}
	return nil
}

// Handler serves the proxy's paths over a service.
type Handler struct {
	engine    *Engine
	logger    *slog.Logger
	anthropic string
	openai    string
	client    *http.Client
	// background counts the work after the answers (storing them),
	// which the listener waits for when it closes.
	background sync.WaitGroup
	// answerHook, when not nil, is called once a request's messages
	// are stored, before its answer is (the tests order requests with
	// it).
	answerHook func(turn *Turn)
}

// Options configure a Handler.
type Options struct {
	// Upstreams are where requests go.
	Upstreams Upstreams
	// Logger receives the proxy's diagnostics; nil discards them. The
	// client's credentials never reach it.
	Logger *slog.Logger
}

// New returns the proxy over svc.
func New(svc *ops.Service, o Options) *Handler {
	u := o.Upstreams
	p := &Handler{
		engine:    EngineOf(svc),
		logger:    cmp.Or(o.Logger, slog.New(slog.DiscardHandler)),
		anthropic: strings.TrimRight(cmp.Or(u.Anthropic, DefaultAnthropicUpstream), "/"),
		openai:    strings.TrimRight(cmp.Or(u.OpenAI, DefaultOpenAIUpstream), "/"),
		client:    u.Client,
	}
	if p.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		p.client = &http.Client{
			Transport:     t,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return p
}

// Face is what the proxy serves on the listener: /v1/... and
// /s/SESSION/v1/..., with bodies up to MaxBodyBytes, the listener's
// token in TokenHeader (Authorization is the client's key for its
// provider), and refusals in the provider's shape. When the listener
// has closed, the proxy finishes storing the answers it passed on.
func (p *Handler) Face() httpx.Face {
	mount := func(pattern, serves string) httpx.Mount {
		return httpx.Mount{
			Pattern: pattern, Handler: p, Serves: serves,
			MaxBody: MaxBodyBytes,
			TooLarge: func(w http.ResponseWriter, r *http.Request) {
				bodyError(w, apiOf(r), &http.MaxBytesError{Limit: MaxBodyBytes})
			},
			TokenHeader: TokenHeader, TokenWhy: "Authorization goes to the provider",
			Refuse: refusal,
		}
	}
	return httpx.Face{
		Mounts: []httpx.Mount{
			mount("/v1/", "the context proxy at /v1/messages and /v1/chat/completions"),
			mount("/s/", ""),
		},
		Closed: p.background.Wait,
	}
}

// proxyEndpoint is what a proxied path asks for.
type proxyEndpoint struct {
	api API
	// path is the path below /v1 ("/messages"); upstream is where it
	// goes, with the query.
	path     string
	upstream string
	// thread: the body's messages are the thread (messages, count_tokens,
	// chat completions); probe: count_tokens, which stores nothing.
	thread, probe bool
	session       string
}

// isPath reports whether path is one of the proxy's: /v1/... or
// /s/SESSION/v1/...
func isPath(path string) bool {
	if rest, ok := strings.CutPrefix(path, "/s/"); ok {
		_, path, ok = strings.Cut(rest, "/")
		if !ok {
			return false
		}
		path = "/" + path
	}
	return strings.HasPrefix(path, "/v1/")
}

// apiOf is the API whose error shape a refusal of a request to path
// takes: Anthropic's for its paths or a request that carries its
// headers, else OpenAI's.
func apiOf(r *http.Request) API {
	if strings.Contains(r.URL.Path, "/v1/messages") || r.Header.Get("X-Api-Key") != "" || r.Header.Get("Anthropic-Version") != "" {
		return Anthropic
	}
	return OpenAI
}

// refusal answers a request to the proxy's paths that the listener
// refuses, in its provider's shape: the proxy's clients read errors so.
// What is not one of its paths (/s/ alone) is answered as any other.
func refusal(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if !isPath(r.URL.Path) {
		httpx.WriteError(w, status, msg)
		return
	}
	proxyError(w, apiOf(r), status, msg)
}

// route reads a proxied request's path and session.
func (p *Handler) route(r *http.Request) (proxyEndpoint, error) {
	path := r.URL.EscapedPath()
	ep := proxyEndpoint{}
	if rest, ok := strings.CutPrefix(path, "/s/"); ok {
		seg, tail, _ := strings.Cut(rest, "/")
		name, err := url.PathUnescape(seg)
		if err != nil || strings.TrimSpace(name) == "" {
			return ep, fmt.Errorf("%q names no session: /s/SESSION/v1/... takes a session ID, ID prefix or title, URL-escaped", "/s/"+seg)
		}
		ep.session, path = name, "/"+tail
	}
	if h := strings.TrimSpace(r.Header.Get(SessionHeader)); h != "" {
		if ep.session != "" && ep.session != h {
			return ep, fmt.Errorf("the path names session %q and %s names %q: name one", ep.session, SessionHeader, h)
		}
		ep.session = h
	}
	sub, ok := strings.CutPrefix(path, "/v1")
	if !ok || !strings.HasPrefix(sub, "/") {
		return ep, fmt.Errorf("nothing at %s: the proxy serves /v1/messages, /v1/messages/count_tokens, /v1/chat/completions and /v1/responses", r.URL.Path)
	}
	ep.path = sub
	ep.api = apiOf(r)
	switch sub {
	case "/messages":
		ep.api, ep.thread = Anthropic, true
	case "/messages/count_tokens":
		ep.api, ep.thread, ep.probe = Anthropic, true, true
	case "/chat/completions":
		ep.api, ep.thread = OpenAI, true
	case "/responses":
		ep.api, ep.thread = Responses, true
	case "/responses/input_tokens":
		ep.api, ep.thread, ep.probe = Responses, true, true
	}
	base := p.openai + sub // the OpenAI base URL has its /v1
	if ep.api == Anthropic {
		base = p.anthropic + "/v1" + sub
	}
	if r.URL.RawQuery != "" {
		base += "?" + r.URL.RawQuery
	}
	ep.upstream = base
	return ep, nil
}

// ServeHTTP serves one proxied request.
func (p *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ep, err := p.route(r)
	if err != nil {
		proxyError(w, apiOf(r), http.StatusNotFound, err.Error())
		return
	}
	if !ep.thread {
		// Another path of the API (a model list): weft has nothing to
		// do with it but pass it on.
		p.forward(w, r, ep, r.Body, r.ContentLength, nil)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		proxyError(w, ep.api, http.StatusMethodNotAllowed, fmt.Sprintf("%s /v1%s: send the request with POST", r.Method, ep.path))
		return
	}
	// The body and what goes upstream in its place are read and
	// written into buffers kept for the next request: zeroing megabytes
	// for every request costs more than anything weft does with them.
	// The second is taken only when the body is written anew.
	bodyBuf, outBuf := getBuffer(r.ContentLength), (*[]byte)(nil)
	given := false
	defer func() {
		if !given {
			putBuffer(bodyBuf)
		}
		if outBuf != nil {
			putBuffer(outBuf)
		}
	}()
	body, err := readInto(bodyBuf, r.Body)
	if err != nil {
		bodyError(w, ep.api, err)
		return
	}
	req, err := parseProxyBody(ep.api, body)
	if err != nil {
		proxyError(w, ep.api, http.StatusBadRequest, "the request body: "+err.Error())
		return
	}
	if field := req.serverSide(); field != "" {
		p.passThrough(w, r, ep, body, field)
		return
	}
	ctx := ops.WithAuthor(r.Context(), cmp.Or(httpx.CleanAuthor(r.Header.Get(httpx.AuthorHeader)), "proxy"))
	// A memory policy that names the upstream as its summarizer asks
	// this request's provider, with its credentials.
	ctx = memory.WithUpstream(ctx, p.upstreamWriter(r, ep.api, req.model()))
	lend := lendOf(body, req.messages)
	given = lend > 0
	turn, err := p.engine.Take(ctx, Request{API: ep.api, Session: ep.session, Messages: req.messages, Probe: ep.probe, Lend: lend})
	if err != nil {
		status := httpx.StatusOf(err)
		if status == http.StatusInternalServerError {
			p.logger.Error("proxy: the request could not be stored", "error", err)
		}
		proxyError(w, ep.api, status, "weft: "+err.Error())
		return
	}
	out := body
	if !turn.Unchanged {
		outBuf = getBuffer(int64(len(body)))
		if out, err = req.rewrite((*outBuf)[:0], &turn); err != nil {
			p.logger.Error("proxy: the effective thread could not be written", "error", err)
			proxyError(w, ep.api, http.StatusInternalServerError, "weft could not write the effective thread: "+err.Error())
			return
		}
	}
	sid := turn.SessionID
	if turn.Created {
		// A session the request starts may be made by another request
		// at once (the same one, sent again): the answer says the one
		// its messages went to.
		if st, err := turn.Wait(); err == nil {
			sid = st.SessionID
		}
	}
	if sid != "" {
		w.Header().Set(SessionHeader, sid)
	}
	if !ep.probe && !turn.Resent && p.engine.sentLists.sent(sid, req.list(out, turn.Unchanged)) {
		p.engine.svc.CountPrefixBreak(sid)
	}
	if !ep.probe && sid != "" {
		parts := turn.Parts
		parts.System, parts.Tools = p.engine.fields.count(req.fields["system"]), p.engine.fields.count(req.fields["tools"])
		if ep.api == Responses {
			parts.System = p.engine.fields.count(req.fields["instructions"])
		}
		p.engine.svc.CountSent(sid, parts)
	}
	var rec *answerRecorder
	release := func() {}
	switch {
	case ep.probe:
	case turn.Resent:
		p.logger.Info("proxy: the request sends again the start of its session, which holds more: its answer is not stored", "session", turn.SessionID)
	default:
		rec = &answerRecorder{api: ep.api, engine: p.engine, ctx: ctx, turn: &turn}
		release = p.engine.expectAnswer(&turn)
	}
	sent := &sentBody{Reader: bytes.NewReader(out), closed: make(chan struct{})}
	whole := p.forward(w, r, ep, sent, int64(len(out)), rec)
	// The request's messages are being stored meanwhile, and the answer
	// is stored after them: in the background, so that the client has
	// the end of its answer at once. The listener waits for it before it
	// closes.
	p.background.Add(1)
	go func() {
		defer p.background.Done()
		defer release()
		if _, err := turn.Wait(); err != nil {
			p.logger.Error("proxy: the request's messages were not stored", "session", turn.SessionID, "error", err)
			return
		}
		if p.answerHook != nil {
			p.answerHook(&turn)
		}
		if whole {
			if err := rec.store(); err != nil {
				p.logger.Warn("proxy: the answer was not stored", "session", turn.SessionID, "error", err)
			}
		}
	}()
	if !turn.Unchanged {
		*outBuf = out // grown: kept grown
	}
	// The transport may still hold the body a moment after the answer
	// (it closes it when it is done); until then the buffers are not
	// given to another request.
	select {
	case <-sent.closed:
	case <-time.After(5 * time.Second):
		bodyBuf, outBuf = &[]byte{}, nil
	}
}

// sentBody is a body sent upstream, which says when the transport is
// done with it.
type sentBody struct {
	*bytes.Reader
	once   sync.Once
	closed chan struct{}
}

// Close is the transport saying it is done with the body.
func (b *sentBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// forward sends the request upstream with body, and the answer back as
// it comes. rec, when not nil, reads a copy of a successful answer; the
// answer is whole when it reached the client to its end.
func (p *Handler) forward(w http.ResponseWriter, r *http.Request, ep proxyEndpoint, body io.Reader, length int64, rec *answerRecorder) (whole bool) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	up, err := http.NewRequestWithContext(ctx, r.Method, ep.upstream, body)
	if err != nil {
		if c, ok := body.(io.Closer); ok {
			_ = c.Close() // never sent: nobody else will
		}
		proxyError(w, ep.api, http.StatusBadGateway, "weft cannot make the upstream request: "+err.Error())
		return false
	}
	up.ContentLength = length
	if length == 0 {
		up.Body = http.NoBody
	}
	copyRequestHeaders(up.Header, r.Header)
	resp, err := p.client.Do(up)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left
		}
		p.logger.Warn("proxy: the upstream cannot be reached", "upstream", upstreamHost(ep.upstream), "error", err)
		proxyError(w, ep.api, http.StatusBadGateway, fmt.Sprintf("weft could not reach the upstream %s: %v", upstreamHost(ep.upstream), errors.Unwrap(err)))
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	copyResponseHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	if rec != nil && resp.StatusCode == http.StatusOK {
		rec.streaming = strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	} else {
		rec = nil // an error, or a probe: nothing of it is stored
	}
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return rec.ended() // the client left: stored only if it had the end
			}
			if err := rc.Flush(); err != nil {
				return rec.ended()
			}
			rec.feed(buf[:n])
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil && rec.ended() {
			return true // the client had the end, and hung up
		}
		if rerr != nil {
			// The upstream broke off: the client has what came, and
			// nothing half is stored.
			p.logger.Warn("proxy: the upstream's answer broke off", "upstream", upstreamHost(ep.upstream), "error", rerr)
			return false
		}
	}
	return r.Context().Err() == nil || rec.ended()
}

// buffers keeps the buffers of bodies read and written, for the next
// request.
var buffers sync.Pool

// maxKeptBuffer is the largest buffer kept for another request.
const maxKeptBuffer = 8 << 20

// kept reports whether a buffer goes back to the pool for another
// request (putBuffer).
func kept(buf []byte) bool { return cap(buf) <= maxKeptBuffer }

// lendOf is Request.Lend of a body whose messages are msgs: 0 when the
// body is kept for another request, else half of its messages' bytes. A
// body is given to the engine, which may keep a block of it where it
// lies, when the pool does not keep it or when it is mostly one message
// of a megabyte or more (a tool's output). An agent's usual body, the
// conversation so far with a message or two new, stays pooled, as does
// a small one (whose buffer may be a large one from the pool).
func lendOf(body []byte, msgs []json.RawMessage) int {
	given := !kept(body)
	total := 0
	for _, m := range msgs {
		total += len(m)
		given = given || len(m) >= 1<<20 && len(m) >= len(body)/2
	}
	if !given {
		return 0
	}
	return max(total/2, 1)
}

// getBuffer is a buffer with room for size bytes where it can.
func getBuffer(size int64) *[]byte {
	if b, ok := buffers.Get().(*[]byte); ok {
		if int64(cap(*b)) >= size {
			return b
		}
		buffers.Put(b)
	}
	b := make([]byte, 0, max(min(size, MaxBodyBytes)+1, 512))
	return &b
}

func putBuffer(b *[]byte) {
	if kept(*b) {
		*b = (*b)[:0]
		buffers.Put(b)
	}
}

// readInto reads r whole into buf, which it keeps (grown) for the next
// use.
func readInto(buf *[]byte, r io.Reader) ([]byte, error) {
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			*buf = b
			return b, nil
		}
		if err != nil {
			*buf = b
			return nil, err
		}
	}
}

// upstreamHost is the host an upstream URL names, for messages.
func upstreamHost(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return "upstream"
}

// hopHeaders are a connection's own, never passed on (RFC 9110 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// copyRequestHeaders passes the client's headers upstream: its
// credentials and the API's own headers, but not the connection's, nor
// what is weft's (X-Weft-*), nor what a browser says of where it is.
// Accept-Encoding is left to the transport, which asks for no
// compression.
func copyRequestHeaders(dst, src http.Header) {
	skip := connectionHeaders(src)
	for k, vs := range src {
		switch {
		case skip[k], strings.HasPrefix(k, "X-Weft-"), strings.HasPrefix(k, "Sec-Fetch-"):
			continue
		}
		switch k {
		case "Host", "Content-Length", "Accept-Encoding", "Origin", "Referer", "Cookie":
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// copyResponseHeaders passes the upstream's headers back, but not the
// connection's.
func copyResponseHeaders(dst, src http.Header) {
	skip := connectionHeaders(src)
	for k, vs := range src {
		if !skip[k] {
			dst[k] = append([]string(nil), vs...)
		}
	}
}

// connectionHeaders are the hop-by-hop headers, and those Connection
// names.
func connectionHeaders(h http.Header) map[string]bool {
	skip := make(map[string]bool, len(hopHeaders)+2)
	for _, k := range hopHeaders {
		skip[k] = true
	}
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				skip[http.CanonicalHeaderKey(f)] = true
			}
		}
	}
	return skip
}

// bodyError answers a request whose body could not be read, in the
// API's error shape.
func bodyError(w http.ResponseWriter, api API, err error) {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		proxyError(w, api, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d MB", MaxBodyBytes>>20))
	case errors.Is(err, httpx.ErrBodyTooSlow):
		w.Header().Set("Connection", "close")
		proxyError(w, api, http.StatusRequestTimeout, err.Error())
	default:
		proxyError(w, api, http.StatusBadRequest, "cannot read the request body: "+err.Error())
	}
}
