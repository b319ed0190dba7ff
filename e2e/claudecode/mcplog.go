package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// wireLine is one JSON-RPC message between Claude Code and weft, as the
// MCP log keeps it: who sent it, how (stdio, or the HTTP method that
// carried it), and the message itself.
type wireLine struct {
	Time time.Time       `json:"time"`
	From string          `json:"from"` // client or server
	Via  string          `json:"via"`  // stdio, POST, GET
	Msg  json.RawMessage `json:"msg,omitempty"`
	Note string          `json:"note,omitempty"` // what was not JSON: a status, an error
}

// notPassedOn starts the note of a message the tee or the proxy logged
// but could not hand on: the side it was for had gone.
const notPassedOn = "not passed on:"

// wireLog appends wireLines to a file; it is safe for concurrent use.
type wireLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *wireLog) add(from, via string, msg []byte, note string) {
	line := wireLine{Time: time.Now(), From: from, Via: via, Note: note}
	if msg = bytes.TrimSpace(msg); len(msg) > 0 {
		if json.Valid(msg) {
			line.Msg = msg
		} else {
			line.Note = strings.TrimSpace(line.Note + " not JSON: " + string(msg))
		}
	}
	b, _ := json.Marshal(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}

// teeStdio runs argv as an MCP server over stdio between this process's
// stdin and stdout, logging every line each way to logPath: what Claude
// Code sends to weft and what weft answers, unchanged. It returns the
// server's exit code. A signal to this process goes on to the server, so
// the server ends when Claude Code ends it.
func teeStdio(argv []string, logPath string) int {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		_, _ = os.Stderr.WriteString("tee: " + err.Error() + "\n")
		return 2
	}
	defer func() { _ = f.Close() }()
	log := &wireLog{w: f}
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		_, _ = os.Stderr.WriteString("tee: " + err.Error() + "\n")
		return 2
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		_, _ = os.Stderr.WriteString("tee: " + err.Error() + "\n")
		return 2
	}
	if err := cmd.Start(); err != nil {
		_, _ = os.Stderr.WriteString("tee: " + err.Error() + "\n")
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	go func() {
		copyLines(os.Stdin, in, log, "client")
		_ = in.Close() // the client is gone: the server reads EOF and ends
	}()
	copyLines(out, os.Stdout, log, "server")
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return 2
	}
	return 0
}

// copyLines copies r to w a line at a time, logging each line as sent by
// from, and a line it could not write as not passed on. Lines of any
// length pass: MCP messages are one a line and can be large.
func copyLines(r io.Reader, w io.Writer, log *wireLog, from string) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			log.add(from, "stdio", line, "")
			if _, werr := w.Write(line); werr != nil {
				log.add(from, "stdio", nil, notPassedOn+" "+werr.Error())
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// loggingProxy passes Claude Code's Streamable HTTP requests on to weft
// and logs the JSON-RPC messages both ways: request bodies, JSON answers,
// and each event of an event stream as it passes (the GET stream, where
// notifications come, included).
type loggingProxy struct {
	target string // weft's MCP endpoint: http://127.0.0.1:PORT/mcp
	log    *wireLog
}

// hopHeaders are not passed on by the proxy.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Te", "Trailer", "Host", "Content-Length"}

func (p *loggingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if len(body) > 0 {
		p.log.add("client", r.Method, body, "")
	} else {
		p.log.add("client", r.Method, nil, r.Method+" "+r.URL.RequestURI())
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		p.log.add("server", r.Method, nil, "proxy: "+err.Error())
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	status := ""
	if resp.StatusCode >= 300 {
		status = resp.Status
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		_, _ = w.Write(b)
		if len(b) > 0 || status != "" {
			p.log.add("server", r.Method, b, status)
		}
		return
	}
	// An event stream: pass each line on at once, log each data line.
	flusher, _ := w.(http.Flusher)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(data)) > 0 {
				p.log.add("server", r.Method, data, status)
			}
			if _, werr := w.Write(line); werr != nil {
				p.log.add("server", r.Method, nil, notPassedOn+" "+werr.Error())
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
