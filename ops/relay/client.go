package relay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/reads"
	"weft/ops/sessionmatch"
	"weft/ops/tools"
)

// baseOf turns a listener's URL into the base its /api lives under.
func baseOf(target string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not a weft listener's URL (like http://127.0.0.1:%d%s)", target, httpx.DefaultPort, httpx.MCPPath)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), httpx.MCPPath)
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

// client calls a running weft over its listener: the tools with POST
// /api/TOOL, the pickers' reads, the whole-file endpoints (holder.go)
// and the stream of events.
type client struct {
	mu    sync.Mutex
	base  string // where the holder listens; a relay moves it
	token string
	http  *http.Client
	// id names this process to the holder in the origin of its writes.
	id string
}

func newClient(base, token string) *client {
	// Each call dials anew: a call sent on a kept connection that the
	// holder closed as it stopped breaks with an EOF, which cannot tell
	// "never arrived" from "applied, then the holder went", so it cannot
	// be sent again; a refused dial can, and sends the relay on to the
	// file's new holder or the file itself. A loopback dial costs a few
	// tens of microseconds beside a tool call's milliseconds.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	return &client{base: base, token: token, http: hc, id: newRelayID()}
}

// target is the base URL of the weft called now.
func (b *client) target() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.base
}

// moveTo points the backend at another weft.
func (b *client) moveTo(base string) {
	b.mu.Lock()
	b.base = base
	b.mu.Unlock()
}

// Invoke runs a tool on the remote weft: the arguments and the result
// cross the network as JSON.
func (b *client) Invoke(ctx context.Context, tool *tools.Tool, args, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res, _, err := b.Call(ctx, tool, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("%s answered with JSON this weft cannot read: %w", tool.Name, err)
	}
	return nil
}

// Call gives the remote weft's JSON, and no value: decoding it here
// would be the work the JSON spares.
func (b *client) Call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (json.RawMessage, any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	out, err := b.post(ctx, httpx.APIPath+tool.Name, "application/json", bytes.NewReader(args), tool.Name)
	return out, nil, err
}

// post sends a request to the remote weft and returns its answer's body
// when it is a success; a refusal comes back as refusal makes it.
func (b *client) post(ctx context.Context, path, contentType string, body io.Reader, what string) (json.RawMessage, error) {
	resp, err := b.send(ctx, path, contentType, body)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("reading %s's answer from the weft at %s: %w", what, b.target(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, b.refusal(resp, out)
	}
	return bytes.TrimSpace(out), nil
}

// send sends a request to the remote weft, as the context's author,
// with the token.
func (b *client) send(ctx context.Context, path, contentType string, body io.Reader) (*http.Response, error) {
	base := b.target()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(httpx.AuthorHeader, ops.AuthorFrom(ctx))
	if o := ops.OriginFrom(ctx); o != "" {
		req.Header.Set(httpx.OriginHeader, b.id+"/"+o)
	}
	if c, ok := reads.CapFrom(ctx); ok {
		req.Header.Set(httpx.ResultCapHeader, c.String())
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the weft at %s that holds the database did not answer: %w", base, err)
	}
	return resp, nil
}

// refusal turns a refused request's answer into an error: *ops.Error of
// the kind its status says, as in-process.
func (b *client) refusal(resp *http.Response, body []byte) error {
	var e httpx.APIError
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		e.Error = fmt.Sprintf("the weft at %s answered %s", b.target(), resp.Status)
	}
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return &ops.Error{Kind: ops.ErrInvalid, Msg: e.Error}
	case http.StatusNotFound:
		return &ops.Error{Kind: ops.ErrNotFound, Msg: e.Error}
	case http.StatusConflict:
		return &ops.Error{Kind: ops.ErrConflict, Msg: e.Error}
	case http.StatusUnauthorized:
		if b.token == "" {
			return fmt.Errorf("the weft at %s that holds the database wants a bearer token: give the token it was started with (--token or WEFT_TOKEN)", b.target())
		}
		return fmt.Errorf("the weft at %s that holds the database refused the token given (--token or WEFT_TOKEN): give the token that weft was started with", b.target())
	}
	return fmt.Errorf("%s", e.Error)
}

// Outline is the outline there.
func (b *client) Outline(ctx context.Context, ref string) (tools.Outline, error) {
	args, err := json.Marshal(map[string]string{"session_id": ref})
	if err != nil {
		return tools.Outline{}, err
	}
	res, err := b.post(ctx, outlinePath, "application/json", bytes.NewReader(args), "the outline")
	if err != nil {
		return tools.Outline{}, err
	}
	var o tools.Outline
	if err := json.Unmarshal(res, &o); err != nil {
		return tools.Outline{}, fmt.Errorf("the weft at %s answered with an outline this weft cannot read: %w", b.target(), err)
	}
	return o, nil
}

// Export is the export there: it is copied to w as it comes.
func (b *client) Export(ctx context.Context, w io.Writer, args tools.ExportArgs) (notes []string, err error) {
	body, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	resp, err := b.send(ctx, exportPath, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b2, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, b.refusal(resp, b2)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return nil, fmt.Errorf("reading the export from the weft at %s: %w", b.target(), err)
	}
	// The trailers are read once the body is.
	for _, n := range resp.Trailer.Values(noteTrailer) {
		if s, err := url.QueryUnescape(n); err == nil {
			notes = append(notes, s)
		}
	}
	if e := resp.Trailer.Get(errorTrailer); e != "" {
		s, _ := url.QueryUnescape(e)
		return notes, errors.New(s)
	}
	return notes, nil
}

// Import is the import there: the file is sent as it is read from f,
// and the weft there reports once, at the end.
func (b *client) Import(ctx context.Context, f io.Reader, args tools.ImportArgs, progress tools.Progress) (tools.ImportReport, error) {
	if progress != nil {
		defer progress.Waiting()()
	}
	q := url.Values{}
	if args.Format != "" {
		q.Set("format", string(args.Format))
	}
	if args.Session != "" {
		q.Set("session", args.Session)
	}
	path := importPath
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	res, err := b.post(ctx, path, "application/octet-stream", f, "the import")
	if err != nil {
		return tools.ImportReport{}, err
	}
	var w importReportJSON
	if err := json.Unmarshal(res, &w); err != nil {
		return tools.ImportReport{}, fmt.Errorf("the weft at %s answered with an import report this weft cannot read: %w", b.target(), err)
	}
	return w.report(), nil
}

// SessionPage reads a page of session records there.
func (b *client) SessionPage(ctx context.Context, a sessionmatch.PageArgs) (sessionmatch.Page, error) {
	var out sessionmatch.Page
	return out, b.ask(ctx, httpx.SessionsPagePath, a, &out)
}

// MatchSessions matches sessions there.
func (b *client) MatchSessions(ctx context.Context, a sessionmatch.Args) (sessionmatch.Result, error) {
	var out sessionmatch.Result
	return out, b.ask(ctx, httpx.SessionsMatchPath, a, &out)
}

// ask posts args as JSON to path on the remote weft and reads its JSON
// answer into out.
func (b *client) ask(ctx context.Context, path string, args, out any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res, err := b.post(ctx, path, "application/json", bytes.NewReader(body), path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("the weft at %s answered %s with JSON this weft cannot read: %w", b.target(), path, err)
	}
	return nil
}

// newRelayID names a relay process among those that write through one
// holder.
func newRelayID() string { return "relay-" + rand.Text()[:10] }

// readEvents reads one stream of events until it ends, calling opened
// once it is open; read says whether it was.
func (b *client) readEvents(ctx context.Context, opened func(), fn func(ops.Event)) (read bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.target()+httpx.EventsPath, nil)
	if err != nil {
		return false, err
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s answered %s", httpx.EventsPath, resp.Status)
	}
	opened()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var ev ops.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			fn(ev)
		}
	}
	return true, sc.Err()
}
