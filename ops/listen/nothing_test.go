package listen

import (
	"net/http"
	"strings"
	"testing"
)

// A path nothing serves is answered with what the faces serve, as their
// mounts say it, and what is not said (the relays' own paths) is not
// listed.
func TestNothingThereSaysWhatIsServed(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ts, _ := api(t, svc, Options{})
	status, _, body := do(t, "GET", ts.URL+"/nothing", "", nil)
	want := "nothing at /nothing: weft serves /mcp (MCP), POST /api/TOOL, GET /api, GET /healthz, POST /outline, /export and /import, and the context proxy at /v1/messages and /v1/chat/completions"
	if got := errorOf(t, body); status != http.StatusNotFound || got != want {
		t.Errorf("%d %q\nwant %q", status, got, want)
	}
	if strings.Contains(string(body), "/events") || strings.Contains(string(body), "/sessions/") || strings.Contains(string(body), "/desk/") {
		t.Errorf("the relays' own paths are listed: %s", body)
	}
}
