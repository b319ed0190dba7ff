package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"weft/ops"
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
	base, err := relayBase(target)
	if err != nil {
		return nil, err
	}
	return newServer(&remoteBackend{base: base, token: token, client: &http.Client{}}, opts), nil
}

// Remote calls tools on a running weft through its HTTP API: how a
// second weft process uses a database the first one holds.
type Remote struct{ b *remoteBackend }

// NewRemote talks to the weft listening at target (its <db>.addr URL).
func NewRemote(target, token string) (*Remote, error) {
	base, err := relayBase(target)
	if err != nil {
		return nil, err
	}
	return &Remote{&remoteBackend{base: base, token: token, client: &http.Client{}}}, nil
}

// Call runs a tool there and returns its JSON result; refusals come back
// as *ops.Error of the same kind as in-process.
func (r *Remote) Call(ctx context.Context, tool *ops.Tool, args json.RawMessage) (json.RawMessage, error) {
	return r.b.call(ctx, tool, args)
}

// relayBase turns a listener's URL into the base its /api lives under.
func relayBase(target string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not a weft listener's URL (like http://127.0.0.1:%d/mcp)", target, DefaultPort)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp")
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

// remoteBackend runs tools with POST /api/TOOL on a running weft.
type remoteBackend struct {
	base   string
	token  string
	client *http.Client
}

// invoke runs a tool on the remote weft: the arguments and the result
// cross the network as JSON.
func (b *remoteBackend) invoke(ctx context.Context, tool *ops.Tool, args, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res, err := b.call(ctx, tool, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("%s answered with JSON this weft cannot read: %w", tool.Name, err)
	}
	return nil
}

func (b *remoteBackend) call(ctx context.Context, tool *ops.Tool, args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/api/"+tool.Name, bytes.NewReader(args))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(AuthorHeader, ops.AuthorFrom(ctx))
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the weft at %s that holds the database did not answer: %w", b.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("reading %s's answer from the weft at %s: %w", tool.Name, b.base, err)
	}
	if resp.StatusCode == http.StatusOK {
		return bytes.TrimSpace(body), nil
	}
	var e apiError
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		e.Error = fmt.Sprintf("the weft at %s answered %s", b.base, resp.Status)
	}
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return nil, &ops.Error{Kind: ops.ErrInvalid, Msg: e.Error}
	case http.StatusNotFound:
		return nil, &ops.Error{Kind: ops.ErrNotFound, Msg: e.Error}
	case http.StatusConflict:
		return nil, &ops.Error{Kind: ops.ErrConflict, Msg: e.Error}
	case http.StatusUnauthorized:
		if b.token == "" {
			return nil, fmt.Errorf("the weft at %s that holds the database wants a bearer token: give the token it was started with (--token or WEFT_TOKEN)", b.base)
		}
		return nil, fmt.Errorf("the weft at %s that holds the database refused the token given (--token or WEFT_TOKEN): give the token that weft was started with", b.base)
	}
	return nil, fmt.Errorf("%s", e.Error)
}
