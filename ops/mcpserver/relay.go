package mcpserver

import (
	"bytes"
	"context"
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
	"weft/ops/tools"
)

// NewRelay returns a server with the same tools, resources and prompt as
// New, whose tools run on the weft listening at target (its /mcp URL or
// base URL, as the address file next to the database names it) through
// that weft's HTTP API. weft mcp uses it when another weft holds the
// database: the client's name still reaches the operation log, through
// the X-Weft-Author header.
//
// The relay cannot lend the client's model to the other weft, so
// summarize_message_range falls back to what that weft has configured.
func NewRelay(target, token string, opts Options) (*Server, error) {
	return NewRelayWith(target, RelayOptions{Token: token}, opts)
}

// NewRemote talks to the weft listening at target (its <db>.addr URL):
// how a second weft process uses a database the first one holds. It
// follows no other weft when that one stops.
func NewRemote(target, token string) (*Remote, error) {
	return newRemote(target, RelayOptions{Token: token})
}

// Outline is the outline there.
func (b *remoteBackend) Outline(ctx context.Context, ref string) (tools.Outline, error) {
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
func (b *remoteBackend) Export(ctx context.Context, w io.Writer, args tools.ExportArgs) (notes []string, err error) {
	body, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	resp, err := b.send(ctx, exportPath, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
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
func (b *remoteBackend) Import(ctx context.Context, f io.Reader, args tools.ImportArgs, progress tools.Progress) (tools.ImportReport, error) {
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

// relayBase turns a listener's URL into the base its /api lives under.
func relayBase(target string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not a weft listener's URL (like http://127.0.0.1:%d%s)", target, httpx.DefaultPort, httpx.MCPPath)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), httpx.MCPPath)
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

// remoteBackend runs tools with POST /api/TOOL on a running weft.
type remoteBackend struct {
	mu     sync.Mutex
	base   string // where the holder listens; a relay moves it
	token  string
	client *http.Client
	// id names this process to the holder in the origin of its writes.
	id string
}

func newRemoteBackend(base, token string) *remoteBackend {
	// Each call dials anew: a call sent on a kept connection that the
	// holder closed as it stopped breaks with an EOF, which cannot tell
	// "never arrived" from "applied, then the holder went", so it cannot
	// be sent again; a refused dial can, and sends the relay on to the
	// file's new holder or the file itself. A loopback dial costs a few
	// tens of microseconds beside a tool call's milliseconds.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	return &remoteBackend{base: base, token: token, client: client, id: newRelayID()}
}

// target is the base URL of the weft called now.
func (b *remoteBackend) target() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.base
}

// moveTo points the backend at another weft.
func (b *remoteBackend) moveTo(base string) {
	b.mu.Lock()
	b.base = base
	b.mu.Unlock()
}

// Invoke runs a tool on the remote weft: the arguments and the result
// cross the network as JSON.
func (b *remoteBackend) Invoke(ctx context.Context, tool *tools.Tool, args, out any) error {
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
func (b *remoteBackend) Call(ctx context.Context, tool *tools.Tool, args json.RawMessage) (json.RawMessage, any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	out, err := b.post(ctx, httpx.APIPath+tool.Name, "application/json", bytes.NewReader(args), tool.Name)
	return out, nil, err
}

// post sends a request to the remote weft and returns its answer's body
// when it is a success; a refusal comes back as refusal makes it.
func (b *remoteBackend) post(ctx context.Context, path, contentType string, body io.Reader, what string) (json.RawMessage, error) {
	resp, err := b.send(ctx, path, contentType, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
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
func (b *remoteBackend) send(ctx context.Context, path, contentType string, body io.Reader) (*http.Response, error) {
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
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the weft at %s that holds the database did not answer: %w", base, err)
	}
	return resp, nil
}

// refusal turns a refused request's answer into an error: *ops.Error of
// the kind its status says, as in-process.
func (b *remoteBackend) refusal(resp *http.Response, body []byte) error {
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
