package listen

import (
	"net/http/httptest"
	"testing"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/internal/facetest"
	"weft/ops/mcpserver"
	"weft/ops/proxy"
	"weft/ops/relay"
	"weft/ops/tools"
)

// The listener's tests serve what cmd/weft serves on it, over a seeded
// service: the faces are the listener's caller's to give, and these
// tests give it the real ones.

// The helpers the faces' tests share, by the names these tests use.
var (
	seeded  = facetest.Seeded
	do      = facetest.Do
	errorOf = facetest.ErrorOf
	callOK  = facetest.CallOK
)

// legacyVersion is the protocol version today's clients negotiate.
const legacyVersion = facetest.LegacyVersion

// withFaces is o with the faces cmd/weft serves over svc (the MCP
// server, the holder's side of the relay, the context proxy), and the
// MCP server among them.
func withFaces(svc *ops.Service, o Options) (Options, *mcpserver.Server) {
	srv := mcpserver.New(tools.Local{Service: svc}, mcpserver.Options{Logger: o.Logger})
	px := proxy.New(svc, proxy.Options{Logger: o.Logger})
	o.Entry = httpx.MCPPath
	o.Faces = append(o.Faces, srv.Face(), relay.HolderFace(svc, o.Logger), px.Face())
	return o, srv
}

// faced is withFaces' options.
func faced(svc *ops.Service, o Options) Options {
	o, _ = withFaces(svc, o)
	return o
}

// api serves the faces over svc behind Handler on a loopback test
// server.
func api(t *testing.T, svc *ops.Service, o Options) (*httptest.Server, *mcpserver.Server) {
	t.Helper()
	o, srv := withFaces(svc, o)
	ts := httptest.NewServer(Handler(o))
	t.Cleanup(func() {
		for ss := range srv.MCP().Sessions() {
			ss.Close()
		}
		ts.Close()
	})
	return ts, srv
}

// serving starts a listener serving the faces over svc, closed when the
// test ends, and gives its MCP server too.
func serving(t *testing.T, svc *ops.Service, o Options) (*Listener, *mcpserver.Server) {
	t.Helper()
	o, srv := withFaces(svc, o)
	l, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, srv
}

// listen is serving's listener.
func listen(t *testing.T, svc *ops.Service, o Options) *Listener {
	t.Helper()
	l, _ := serving(t, svc, o)
	return l
}
