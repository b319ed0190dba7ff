package relay

import (
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/internal/facetest"
	"weft/ops/listen"
	"weft/ops/mcpserver"
	"weft/ops/tools"
)

// The relay's tests run it as cmd/weft does: the holder's listener
// serves the MCP face and the holder's side of the whole-file endpoints
// (HolderFace), and a relay's MCP server runs its tools through a
// Remote.

// The helpers the faces' tests share, by the names these tests use.
var (
	seeded  = facetest.Seeded
	do      = facetest.Do
	errorOf = facetest.ErrorOf
	callOK  = facetest.CallOK
	callErr = facetest.CallErr
	text    = facetest.Text
)

// legacyVersion is the protocol version today's clients negotiate.
const legacyVersion = facetest.LegacyVersion

// holderFaces are what the weft that holds the file serves over svc.
func holderFaces(svc *ops.Service) []httpx.Face {
	srv := mcpserver.New(tools.Local{Service: svc}, mcpserver.Options{})
	return []httpx.Face{srv.Face(), HolderFace(svc, nil)}
}

// listening serves the holder's faces over svc on a listener of its
// own; it closes when the test ends.
func listening(t *testing.T, svc *ops.Service, o listen.Options) *listen.Listener {
	t.Helper()
	o.Entry = httpx.MCPPath
	o.Faces = append(o.Faces, holderFaces(svc)...)
	l, err := listen.Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// apiOptions are what a test asks of the holder's listener.
type apiOptions struct {
	Token string
}

// api serves the holder's faces over svc behind the listener's guard
// on a loopback test server.
func api(t *testing.T, svc *ops.Service, o apiOptions) (*httptest.Server, []httpx.Face) {
	t.Helper()
	faces := holderFaces(svc)
	ts := httptest.NewServer(listen.Handler(listen.Options{Token: o.Token, Faces: faces}))
	t.Cleanup(ts.Close)
	return ts, faces
}

// relayServerWith is the MCP server weft mcp runs when the weft at
// target holds the file.
func relayServerWith(target string, o Options) (*mcpserver.Server, error) {
	r, err := Dial(target, o)
	if err != nil {
		return nil, err
	}
	return mcpserver.New(r, mcpserver.Options{}), nil
}

// relayServer is relayServerWith a token only.
func relayServer(target, token string) (*mcpserver.Server, error) {
	return relayServerWith(target, Options{Token: token})
}

// connectAt joins a client to srv at a protocol version.
func connectAt(t testing.TB, srv *mcpserver.Server, name, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	return facetest.Connect(t, srv.MCP(), name, version, opts)
}
