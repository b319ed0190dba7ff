package listen

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/httpx"
)

func TestOriginCheck(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, _ := api(t, svc, Options{Origins: []string{"http://app.example:3000"}})
	mcpGet := map[string]string{"Accept": "text/event-stream"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for kk, vv := range m {
			out[kk] = vv
		}
		return out
	}
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
	}{
		{"foreign POST", "POST", "/api/list_sessions", "{}", map[string]string{"Origin": "https://evil.example"}, 403},
		{"foreign GET /mcp", "GET", "/mcp", "", with(mcpGet, "Origin", "https://evil.example"), 403},
		{"foreign GET healthz", "GET", "/healthz", "", map[string]string{"Origin": "https://evil.example"}, 403},
		{"foreign POST /mcp", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Origin": "http://localhost:9999", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, 403},
		{"opaque origin", "POST", "/api/list_sessions", "{}", map[string]string{"Origin": "null"}, 403},
		{"same port, other host", "POST", "/api/list_sessions", "{}", map[string]string{"Origin": strings.Replace(ts.URL, "127.0.0.1", "evil.example", 1)}, 403},
		{"cross-site fetch without Origin", "GET", "/api", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"rebound Host", "GET", "/healthz", "", map[string]string{"Host": "evil.example" + strings.TrimPrefix(ts.URL, "http://127.0.0.1")}, 403},
		{"no Origin", "POST", "/api/list_sessions", "{}", nil, 200},
		{"same origin", "POST", "/api/list_sessions", "{}", map[string]string{"Origin": ts.URL, "Sec-Fetch-Site": "same-origin"}, 200},
		{"allowed origin", "POST", "/api/list_sessions", "{}", map[string]string{"Origin": "http://app.example:3000", "Sec-Fetch-Site": "cross-site"}, 200},
		{"localhost Host", "GET", "/healthz", "", map[string]string{"Host": "localhost" + strings.TrimPrefix(ts.URL, "http://127.0.0.1")}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := do(t, tt.method, ts.URL+tt.path, tt.body, tt.header)
			if status != tt.status {
				t.Errorf("status %d, want %d: %s", status, tt.status, body)
			}
			if tt.status == 403 {
				errorOf(t, body)
			}
		})
	}
}

// bearerTransport adds a token to every request of an SDK client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestToken(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, _ := api(t, svc, Options{Token: "s3cret-token"})
	for _, tt := range []struct {
		name, auth string
		status     int
		says       string
	}{
		{"missing", "", 401, "needs a bearer token"},
		{"wrong", "Bearer wrong", 401, "wrong bearer token"},
		{"prefix of the right one", "Bearer s3cret", 401, "wrong bearer token"},
		{"not bearer", "Basic czNjcmV0LXRva2Vu", 401, "needs a bearer token"},
		{"right", "Bearer s3cret-token", 200, ""},
		{"right, lower-case scheme", "bearer s3cret-token", 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.auth != "" {
				h["Authorization"] = tt.auth
			}
			status, hdr, body := do(t, "POST", ts.URL+"/api/list_sessions", "{}", h)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if tt.status == 401 {
				if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("401 without WWW-Authenticate: Bearer")
				}
				if msg := errorOf(t, body); !strings.Contains(msg, tt.says) || strings.Contains(msg, "s3cret-token") {
					t.Errorf("error %q", msg)
				}
			}
		})
	}
	// MCP clients get in with the token, and not without.
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "token-client"}, nil)
	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil); err == nil {
		t.Errorf("an MCP client connected without the token")
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{"s3cret-token"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callOK(t, cs, "list_sessions", map[string]any{}, nil)
}

func TestBodyCap(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, _ := api(t, svc, Options{})
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", httpx.MaxBodyBytes) + `"}]}`
	before, _, _ := svc.View(sid)

	// With a length, refused before it is read.
	status, _, body := do(t, "POST", ts.URL+"/api/append_messages", big, nil)
	if status != 413 || !strings.Contains(errorOf(t, body), "larger than 8 MB") {
		t.Errorf("big body: %d %s", status, body)
	}
	// Without one (chunked), refused when the cap is reached.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/api/append_messages", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(errorOf(t, b), "larger than 8 MB") {
		t.Errorf("big chunked body: %d %s", resp.StatusCode, b)
	}
	status, _, body = do(t, "POST", ts.URL+"/mcp", big, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	if status != 413 {
		t.Errorf("big MCP body: %d %.200s", status, body)
	}
	// A large body under the cap is taken.
	under := `{"messages":[{"role":"user","content":"` + strings.Repeat("the limiter ", 1<<15) + `"}]}`
	if status, _, body := do(t, "POST", ts.URL+"/api/append_messages", under, nil); status != 200 {
		t.Errorf("400 kB body: %d %.300s", status, body)
	}
	if after, _, _ := svc.View(sid); after.MessageCount != before.MessageCount+1 {
		t.Errorf("%d messages after the refused and the accepted append, want %d", after.MessageCount, before.MessageCount+1)
	}
}
