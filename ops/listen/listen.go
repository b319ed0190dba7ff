// Package listen is weft's one listener: it binds an address (loopback
// by default, elsewhere only with a token), writes where it listens next
// to the database for other wefts to find, guards every request (Host
// and Origin, the bearer token, body caps and read timeouts, CORS for
// the origins allowed), and serves the faces its caller hands it
// (httpx.Face) on one mux. It knows no face: cmd/weft composes them.
package listen

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

	"weft/ops/httpx"
)

// DefaultAddr is the default listening address: loopback only, at
// httpx.DefaultPort.
var DefaultAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(httpx.DefaultPort))

// shutdownGrace bounds how long Close waits for requests in flight.
const shutdownGrace = 3 * time.Second

// Options configure Listen and Handler.
type Options struct {
	// Addr is host:port; empty means DefaultAddr. Port 0 picks a free one.
	Addr string
	// Token is the bearer token clients must send. It is required when
	// Addr is not loopback.
	Token string
	// Origins are the browser origins (scheme://host[:port]) allowed to
	// call, with CORS (cors.go); each must be an origin (ErrBadOrigin).
	Origins []string
	// AddrFile is where the listener's address (Addr) is written for
	// other wefts to find, removed on Close: AddrFileOf the database.
	// Empty writes none.
	AddrFile string
	// Entry is the path clients are pointed at (the MCP endpoint,
	// "/mcp"): Addr, and so the address file, is the listener's URL with
	// it.
	Entry string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// ReadTimeout overrides httpx.ReadTimeout: how long a request's
	// headers may take, and its body beyond what its size explains.
	ReadTimeout time.Duration
	// Faces are what the listener serves, each behind the guard.
	Faces []httpx.Face
}

// Listener is a running HTTP listener serving its faces.
type Listener struct {
	http     *http.Server
	ln       net.Listener
	url      string
	entry    string
	addrFile string
	notice   string
	faces    []httpx.Face
	logger   *slog.Logger

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

// Listen starts serving o.Faces over HTTP. It binds loopback at
// DefaultAddr by default; when the port is taken it binds a free one
// instead and says so in Notice. It refuses, binding nothing, an address
// other machines can reach unless a token is set. The listener's address
// is written to o.AddrFile, so a second weft on the same file can relay
// to it.
func Listen(o Options) (*Listener, error) {
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

	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	notice := ""
	if err != nil && errors.Is(err, syscall.EADDRINUSE) && port != "0" {
		ln, err = (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(host, "0"))
		if err == nil {
			notice = fmt.Sprintf("port %s was taken; listening on %s instead", port, ln.Addr())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}

	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Listener{
		ln: ln, notice: notice, done: make(chan struct{}), faces: o.Faces, logger: logger,
		url: "http://" + urlHost(host, ln.Addr()), entry: o.Entry, addrFile: o.AddrFile,
	}
	l.http = &http.Server{
		Handler:           Handler(o),
		ReadHeaderTimeout: cmp.Or(o.ReadTimeout, httpx.ReadTimeout),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if l.addrFile != "" {
		if err := writeAddrFile(l.addrFile, l.Addr()); err != nil {
			_ = ln.Close()
			return nil, err
		}
	}

	go func() {
		defer close(l.done)
		if err := l.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			l.serveErr = err
			logger.Error("listener stopped", "error", err)
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

// AddrFileOf is where the weft that holds the database at dbPath writes
// its listener's address: next to it, as <db>.addr (the store names it
// when it refuses a second opener).
func AddrFileOf(dbPath string) string { return dbPath + ".addr" }

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
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadAddrFile returns the address a running weft left next to the
// database at dbPath, or "" when there is none.
func ReadAddrFile(dbPath string) string {
	b, err := os.ReadFile(AddrFileOf(dbPath))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Addr is where clients connect: the listener's URL with its Entry
// (http://127.0.0.1:7433/mcp); the address file holds it.
func (l *Listener) Addr() string { return l.url + l.entry }

// URL is the listener's base URL, e.g. http://127.0.0.1:7433.
func (l *Listener) URL() string { return l.url }

// Notice says what the caller should tell the user about how the listener
// started (a port fallback), or "".
func (l *Listener) Notice() string { return l.notice }

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

// Close stops the listener: it tells the faces (whose streams would
// otherwise hold the shutdown open), lets requests in flight finish for
// a moment, removes the address file, and waits for what the faces
// still do after their answers.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		if l.addrFile != "" {
			// Only our own file: another weft may have written its own
			// since, for another database at the same path.
			if b, err := os.ReadFile(l.addrFile); err == nil && strings.TrimSpace(string(b)) == l.Addr() {
				_ = os.Remove(l.addrFile)
			}
		}
		for _, f := range l.faces {
			if f.Closing != nil {
				f.Closing()
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := l.http.Shutdown(ctx); err != nil {
			l.closeErr = l.http.Close()
		}
		<-l.done
		for _, f := range l.faces {
			if f.Closed != nil {
				f.Closed()
			}
		}
	})
	return l.closeErr
}

// Serve runs a listener until ctx ends, then closes it. started, when not
// nil, is called once the listener is up (to log its address).
func Serve(ctx context.Context, o Options, started func(*Listener)) error {
	l, err := Listen(o)
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
		_ = l.Close()
		return l.Err()
	}
}
