package listen

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/store"
	"weft/store/boltstore"
)

// freePort returns a port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}

func TestListenNeedsTokenOffLoopback(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	addrFile := filepath.Join(t.TempDir(), "x.addr")
	port := freePort(t)
	for _, addr := range []string{"0.0.0.0:" + port, ":" + port, "[::]:" + port, "example.com:" + port} {
		_, err := Listen(faced(svc, Options{Addr: addr, AddrFile: addrFile}))
		if !errors.Is(err, ErrNeedsToken) || !strings.Contains(err.Error(), addr+" can be reached from other machines") {
			t.Errorf("Listen(%s) without a token: %v", addr, err)
		}
	}
	if _, err := os.Stat(addrFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused listener wrote its address file")
	}
	// Nothing was bound: the port is still free.
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "0.0.0.0:"+port)
	if err != nil {
		t.Fatalf("the port was bound by a refused listener: %v", err)
	}
	ln.Close()

	// With a token it starts, and wants the token.
	l := listen(t, svc, Options{Addr: "0.0.0.0:" + port, Token: "tok", AddrFile: addrFile})
	if !strings.HasPrefix(l.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s: an unspecified host is reached over loopback", l.URL())
	}
	if status, _, _ := do(t, "GET", l.URL()+"/healthz", "", nil); status != 401 {
		t.Errorf("healthz without the token: %d", status)
	}
	if status, _, _ := do(t, "GET", l.URL()+"/healthz", "", map[string]string{"Authorization": "Bearer tok"}); status != 200 {
		t.Errorf("healthz with the token: %d", status)
	}
}

func TestListenBadAddress(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	for _, addr := range []string{"nonsense", "127.0.0.1:99999", "127.0.0.1:http8"} {
		if l, err := Listen(faced(svc, Options{Addr: addr})); err == nil {
			l.Close()
			t.Errorf("Listen(%q) started", addr)
		} else if !strings.Contains(err.Error(), addr) {
			t.Errorf("Listen(%q): %v does not name the address", addr, err)
		}
	}
}

func TestListenFallsBackWhenPortTaken(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	taken, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, port, _ := net.SplitHostPort(taken.Addr().String())

	l := listen(t, svc, Options{Addr: taken.Addr().String()})
	_, got, _ := net.SplitHostPort(strings.TrimPrefix(l.URL(), "http://"))
	if got == port || got == "0" {
		t.Fatalf("listening on %s, the taken port", l.URL())
	}
	if n := l.Notice(); !strings.Contains(n, "port "+port+" was taken") || !strings.Contains(n, got) {
		t.Errorf("notice %q", n)
	}
	if status, _, _ := do(t, "GET", l.URL()+"/healthz", "", nil); status != 200 {
		t.Errorf("healthz on the fallback port: %d", status)
	}
	// A free port needs no notice.
	l2 := listen(t, svc, Options{Addr: "127.0.0.1:0"})
	if l2.Notice() != "" {
		t.Errorf("notice %q on a free port", l2.Notice())
	}
}

func TestListenAddrFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := ops.New(st)
	l, err := Listen(faced(svc, Options{Addr: "127.0.0.1:0", AddrFile: AddrFileOf(db)}))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(db + ".addr")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("address file mode %v, want 0600", fi.Mode().Perm())
	}
	if got := ReadAddrFile(db); got != l.Addr() || !strings.HasSuffix(got, "/mcp") {
		t.Errorf("address file says %q, listener %q", got, l.Addr())
	}
	// A second opener is told where the running weft listens.
	if _, err := boltstore.Open(db, boltstore.Options{Timeout: 50 * time.Millisecond}); !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), l.Addr()) {
		t.Errorf("second open: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(db + ".addr"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("address file left after Close: %v", err)
	}
	if ReadAddrFile(db) != "" {
		t.Errorf("ReadAddrFile after Close")
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestListenCloseEndsSessions(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	o, srv := withFaces(svc, Options{Addr: "127.0.0.1:0"})
	l, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The standalone event stream stays open until the server ends it.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "streamer"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.Addr(), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callOK(t, cs, "list_sessions", map[string]any{}, nil)
	if n := srv.Agents(); n != 1 {
		t.Errorf("%d agents", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("Close returned while still serving")
	}
	if l.Err() != nil || srv.Agents() != 0 {
		t.Errorf("after Close: err %v, %d agents", l.Err(), srv.Agents())
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Errorf("the client still gets answers after Close")
	}
}

func TestServeStopsWithContext(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan *Listener, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, faced(svc, Options{Addr: "127.0.0.1:0"}), func(l *Listener) { started <- l })
	}()
	l := <-started
	if status, _, _ := do(t, "GET", l.URL()+"/healthz", "", nil); status != 200 {
		t.Errorf("healthz: %d", status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", strings.TrimPrefix(l.URL(), "http://")); err == nil {
		t.Errorf("still listening after Serve returned")
	}
}

// A token of nothing but blanks would be accepted, and then no client
// could send it (bearer values are trimmed): Listen refuses it, binding
// nothing, whatever the address.
func TestListenRefusesBlankToken(t *testing.T) {
	t.Parallel()
	svc, _ := seeded(t)
	addrFile := filepath.Join(t.TempDir(), "x.addr")
	for _, tok := range []string{" ", "  \t", "\n"} {
		for _, addr := range []string{"0.0.0.0:0", "127.0.0.1:0"} {
			l, err := Listen(faced(svc, Options{Addr: addr, Token: tok, AddrFile: addrFile}))
			if err == nil {
				l.Close()
			}
			if !errors.Is(err, ErrBlankToken) {
				t.Errorf("Listen(%s) with token %q: %v, want ErrBlankToken", addr, tok, err)
			}
		}
	}
	if _, err := os.Stat(addrFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused listener wrote its address file")
	}
	// A token with blanks around it is the token without them, as the
	// client's Authorization header is read.
	l := listen(t, svc, Options{Addr: "127.0.0.1:0", Token: " tok ", AddrFile: addrFile})
	if status, _, _ := do(t, "GET", l.URL()+"/healthz", "", map[string]string{"Authorization": "Bearer tok"}); status != 200 {
		t.Errorf("healthz with the token: %d", status)
	}
}
