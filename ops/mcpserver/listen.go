package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/tools"
)

const (
	// DefaultPort is where the embedded listener and weft serve listen
	// unless told otherwise: agents can be configured once.
	DefaultPort = 7433
	// DefaultAddr is the default listening address: loopback only.
	DefaultAddr = "127.0.0.1:7433"
	// shutdownGrace bounds how long Close waits for requests in flight.
	shutdownGrace = 3 * time.Second
)

// ListenOptions configure Listen.
type ListenOptions struct {
	// Addr is host:port; empty means DefaultAddr. Port 0 picks a free one.
	Addr string
	// Token is the bearer token clients must send. It is required when
	// Addr is not loopback.
	Token string
	// Origins are the browser origins (scheme://host[:port]) allowed to
	// call, with CORS (cors.go); each must be an origin (ErrBadOrigin).
	Origins []string
	// AddrFile is where the listener's URL is written for other wefts to
	// find (removed on Close). Empty means the database path + ".addr";
	// "-" writes none.
	AddrFile string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// SessionTimeout overrides SessionTimeout for idle MCP sessions.
	SessionTimeout time.Duration
	// ReadTimeout overrides httpx.ReadTimeout: how long a request's headers
	// may take, and its body beyond what its size explains.
	ReadTimeout time.Duration
	// Upstreams are where the context proxy sends requests.
	Upstreams Upstreams
}

// Listener is a running HTTP listener serving a Server's Handler.
type Listener struct {
	server   *Server
	http     *http.Server
	ln       net.Listener
	url      string
	addrFile string
	notice   string

	done      chan struct{}
	serveErr  error
	closeOnce sync.Once
	closeErr  error
}

// ErrNeedsToken refuses a listener reachable from other machines without
// a bearer token.
var ErrNeedsToken = errors.New("a listener on a non-loopback address needs a bearer token")

// ErrBlankToken refuses a bearer token of nothing but blanks: clients'
// tokens are read without the blanks around them, so nobody could send
// it, and off loopback it would pass for a token.
var ErrBlankToken = errors.New("the bearer token is blank")

// Listen starts serving svc over HTTP. It binds loopback at DefaultAddr by
// default; when the port is taken it binds a free one instead and says so
// in Notice. It refuses, binding nothing, an address other machines can
// reach unless a token is set. The listener's URL is written next to the
// database so a second weft on the same file can relay to it.
func Listen(svc *ops.Service, o ListenOptions) (*Listener, error) {
	addr := o.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q is not host:port (e.g. %s): %v", addr, DefaultAddr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("listen address %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if o.Token != "" && strings.TrimSpace(o.Token) == "" {
		return nil, fmt.Errorf("%w: give a token with something in it, or none to listen on loopback without one", ErrBlankToken)
	}
	for _, origin := range o.Origins {
		if _, err := CheckOrigin(origin); err != nil {
			return nil, err
		}
	}
	if !isLoopbackHost(host) && o.Token == "" {
		return nil, fmt.Errorf("%w: %s can be reached from other machines; give a token, or listen on 127.0.0.1", ErrNeedsToken, addr)
	}

	ln, err := net.Listen("tcp", addr)
	notice := ""
	if err != nil && errors.Is(err, syscall.EADDRINUSE) && port != "0" {
		ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err == nil {
			notice = fmt.Sprintf("port %s was taken; listening on %s instead", port, ln.Addr())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}

	s := New(tools.Local{Service: svc}, Options{Logger: o.Logger})
	l := &Listener{
		server: s, ln: ln, notice: notice, done: make(chan struct{}),
		url: "http://" + urlHost(host, ln.Addr()),
	}
	l.http = &http.Server{
		Handler:           s.Handler(HandlerOptions{Token: o.Token, Origins: o.Origins, SessionTimeout: o.SessionTimeout, ReadTimeout: o.ReadTimeout, Upstreams: o.Upstreams}),
		ReadHeaderTimeout: cmp.Or(o.ReadTimeout, httpx.ReadTimeout),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}

	switch o.AddrFile {
	case "-":
	case "":
		l.addrFile = svc.Store().Path() + ".addr"
	default:
		l.addrFile = o.AddrFile
	}
	if l.addrFile != "" {
		if err := writeAddrFile(l.addrFile, l.MCPURL()); err != nil {
			ln.Close()
			return nil, err
		}
	}

	go func() {
		defer close(l.done)
		if err := l.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			l.serveErr = err
			s.logger.Error("listener stopped", "error", err)
		}
	}()
	return l, nil
}

// urlHost is the host:port clients should dial: the bound port, with the
// host as asked for (an unspecified host is reached over loopback).
func urlHost(host string, bound net.Addr) string {
	_, port, _ := net.SplitHostPort(bound.String())
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		if ip.To4() != nil {
			host = "127.0.0.1"
		} else {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}

// writeAddrFile writes the URL readable by the owner only, replacing the
// file whole so a reader never sees half of it.
func writeAddrFile(path, url string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write the listener address next to the database: %w", err)
	}
	_, werr := tmp.WriteString(url + "\n")
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o600)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadAddrFile returns the MCP URL a running weft left next to the
// database at dbPath, or "" when there is none.
func ReadAddrFile(dbPath string) string {
	b, err := os.ReadFile(dbPath + ".addr")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Addr is where MCP clients connect (the /mcp URL); with Agents it is what
// the TUI's status bar shows.
func (l *Listener) Addr() string { return l.MCPURL() }

// MCPURL is the Streamable HTTP endpoint, e.g. http://127.0.0.1:7433/mcp.
func (l *Listener) MCPURL() string { return l.url + "/mcp" }

// URL is the listener's base URL, e.g. http://127.0.0.1:7433.
func (l *Listener) URL() string { return l.url }

// Agents counts the MCP sessions connected now.
func (l *Listener) Agents() int { return l.server.Agents() }

// Notice says what the caller should tell the user about how the listener
// started (a port fallback), or "".
func (l *Listener) Notice() string { return l.notice }

// Server is the MCP server the listener serves.
func (l *Listener) Server() *Server { return l.server }

// Done is closed when the listener has stopped serving.
func (l *Listener) Done() <-chan struct{} { return l.done }

// Err is why the listener stopped on its own, once Done is closed; nil
// after Close.
func (l *Listener) Err() error {
	select {
	case <-l.done:
		return l.serveErr
	default:
		return nil
	}
}

// Close stops the listener: it ends the MCP sessions (their event streams
// would otherwise hold the shutdown open), lets requests in flight finish
// for a moment, and removes the address file.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		if l.addrFile != "" {
			// Only our own file: another weft may have written its own
			// since, for another database at the same path.
			if b, err := os.ReadFile(l.addrFile); err == nil && strings.TrimSpace(string(b)) == l.MCPURL() {
				os.Remove(l.addrFile)
			}
		}
		l.server.closeOnce.Do(func() { close(l.server.closing) })
		for ss := range l.server.mcp.Sessions() {
			l.server.closeSession(ss)
		}
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := l.http.Shutdown(ctx); err != nil {
			l.closeErr = l.http.Close()
		}
		<-l.done
		l.server.background.Wait() // the proxy's answers being stored
	})
	return l.closeErr
}

// Serve runs a listener until ctx ends, then closes it. started, when not
// nil, is called once the listener is up (to log its address).
func Serve(ctx context.Context, svc *ops.Service, o ListenOptions, started func(*Listener)) error {
	l, err := Listen(svc, o)
	if err != nil {
		return err
	}
	if started != nil {
		started(l)
	}
	select {
	case <-ctx.Done():
		return l.Close()
	case <-l.Done():
		l.Close()
		return l.Err()
	}
}
