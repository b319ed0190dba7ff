package relay

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/reads"
	"weft/ops/tools"
)

// The whole-thread and whole-file endpoints sit behind the same guard as
// the tools: a foreign Origin is refused, the token is wanted, and an
// import too large for the listener is refused before it is read.
func TestFileEndpointsAreGuarded(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	ts, _ := api(t, svc, apiOptions{Token: "tok"})
	auth := map[string]string{"Authorization": "Bearer tok"}
	for _, path := range []string{"/outline", "/export", "/import"} {
		if status, _, _ := do(t, "POST", ts.URL+path, "{}", nil); status != 401 {
			t.Errorf("%s without the token: %d", path, status)
		}
		if status, _, _ := do(t, "POST", ts.URL+path, "{}", map[string]string{"Authorization": "Bearer tok", "Origin": "http://evil.example"}); status != 403 {
			t.Errorf("%s from a foreign origin: %d", path, status)
		}
		if status, _, _ := do(t, "GET", ts.URL+path, "", auth); status != 405 {
			t.Errorf("GET %s: %d", path, status)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/import", io.LimitReader(zeros{}, MaxImportBytes+1))
	req.ContentLength = MaxImportBytes + 1
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(errorOf(t, b), "larger than 4 GB") {
		t.Errorf("an import over the cap: %d %s", resp.StatusCode, b)
	}
	// A body over the tools' cap is taken by /import.
	big := `[{"messages":[{"role":"user","content":"` + strings.Repeat("x", httpx.MaxBodyBytes) + `"}]}]`
	status, _, body := do(t, "POST", ts.URL+"/import?format=openai&session="+sid, big, auth)
	if status != 200 || !strings.Contains(string(body), `"added":1`) {
		t.Errorf("a 8 MB import: %d %.300s", status, body)
	}
	// A session that is not there is refused before anything is sent.
	status, _, body = do(t, "POST", ts.URL+"/export", `{"session_id":"nosuch","format":"openai"}`, auth)
	if status != 404 || !strings.Contains(errorOf(t, body), "nosuch") {
		t.Errorf("export of a missing session: %d %s", status, body)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Remote does through a listener what tools.Local does in-process.
func TestRemoteFilesMatchLocal(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0"})
	r, err := Dial(l.Addr(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := tools.Local{Service: svc}
	local, err := in.Outline(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := r.Outline(ctx, sid[:6])
	if err != nil || remote.SessionID != local.SessionID || len(remote.Markers) != len(local.Markers) || remote.Tokens != local.Tokens {
		t.Errorf("outline: %+v (%v), want %+v", remote, err, local)
	}
	for _, format := range tools.ExportFormats {
		var here, there bytes.Buffer
		args := tools.ExportArgs{SessionID: sid, Format: format}
		if format == "claude-code" { // a new session ID each time, unless it is given
			args.ClaudeCode = &tools.ClaudeCodeArgs{SessionID: "0f3c2a55-6b1e-4c8e-9d2a-3b4c5d6e7f80", Cwd: "/w"}
		}
		ln, lerr := in.Export(ctx, &here, args)
		rn, rerr := r.Export(ctx, &there, args)
		if lerr != nil || rerr != nil || here.String() != there.String() || strings.Join(ln, "\n") != strings.Join(rn, "\n") {
			t.Errorf("%s: %d bytes, %d notes (%v) here; %d bytes, %d notes (%v) there", format, here.Len(), len(ln), lerr, there.Len(), len(rn), rerr)
		}
	}
	if _, err := r.Export(ctx, io.Discard, tools.ExportArgs{SessionID: "nosuch", Format: "jsonl"}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("remote export of a missing session: %v", err)
	}
	rep, err := r.Import(ctx, strings.NewReader(`{"role":"user","content":"one"}`+"\n{broken\n"), tools.ImportArgs{Session: sid}, nil)
	if err != nil || rep.Format != "openai" || len(rep.Problems) != 1 || rep.Problems[0].Line != 2 || len(rep.Sessions) != 1 || rep.Sessions[0].Added != 1 {
		t.Errorf("remote import: %+v (%v)", rep, err)
	}
	var list reads.ListSessionsResult
	if err := r.Invoke(ctx, mustTool(t, "list_sessions"), reads.ListSessionsArgs{}, &list); err != nil || list.Total != 1 {
		t.Errorf("remote list_sessions: %+v (%v)", list, err)
	}
}

func mustTool(t *testing.T, name string) *tools.Tool {
	t.Helper()
	tool, ok := tools.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tool
}
