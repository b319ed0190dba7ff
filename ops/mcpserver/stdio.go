package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops/httpx"
)

// ServeStdio serves MCP over stdin and stdout until the client hangs up or
// ctx ends. Nothing else may write to stdout meanwhile.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.ServeIO(ctx, os.Stdin, os.Stdout)
}

// ServeIO serves MCP as newline-delimited JSON-RPC, reading r and writing
// w, until r ends or ctx does.
//
// The SDK's stream transport stops at the first line it cannot decode, so
// every line is checked here first (jsonrpcProblem, as for HTTP): a good
// one goes on to the SDK, a bad one is answered here with a JSON-RPC error
// and the session goes on. Both write through one lock, a line at a time.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lineWriter{w: w, pending: map[string]bool{}, answered: make(chan struct{}, 1)}
	pr, pw := io.Pipe()
	go filterLines(r, pw, out)
	err := s.serve(ctx, codedTransport{&mcp.IOTransport{Reader: pr, Writer: out}})
	// Stop the filter: its next line has nowhere to go.
	pr.CloseWithError(errors.New("the MCP session ended"))
	return err
}

// lineWriter serialises writes: each Write is one whole line, from the SDK
// or from the filter, never interleaved. It also keeps the ids of the
// requests passed on and not yet answered, so that when the input ends
// (a client that writes its requests and closes, as a shell pipe does)
// their answers are still written before the session closes.
type lineWriter struct {
	mu       sync.Mutex
	w        io.Writer
	pending  map[string]bool
	answered chan struct{} // a token when an answer was written
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range messageIDs(p, false) {
		delete(l.pending, id)
	}
	select {
	case l.answered <- struct{}{}:
	default:
	}
	return l.w.Write(p)
}

// sent records the requests of a line passed on to the SDK.
func (l *lineWriter) sent(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range messageIDs(line, true) {
		l.pending[id] = true
	}
}

// drain waits until every request passed on is answered, or for at most
// limit.
func (l *lineWriter) drain(limit time.Duration) {
	deadline := time.After(limit)
	for {
		l.mu.Lock()
		n := len(l.pending)
		l.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-l.answered:
		case <-deadline:
			return
		}
	}
}

// messageIDs are the ids of a line's requests (requests true: messages
// with a method) or of its responses (false: without one), compacted.
func messageIDs(line []byte, requests bool) []string {
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	var list []msg
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		if json.Unmarshal(line, &list) != nil {
			return nil
		}
	} else {
		var m msg
		if json.Unmarshal(line, &m) != nil {
			return nil
		}
		list = []msg{m}
	}
	var ids []string
	for _, m := range list {
		if len(m.ID) == 0 || string(m.ID) == "null" || (m.Method != nil) != requests {
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, m.ID) == nil {
			ids = append(ids, b.String())
		}
	}
	return ids
}

// Close leaves w open: it belongs to the caller (stdout).
func (l *lineWriter) Close() error { return nil }

// drainLimit is how long the end of the input waits for the answers to
// requests already passed on.
const drainLimit = 30 * time.Second

// filterLines copies r's good lines to the SDK through pw and answers the
// bad ones on out, until r ends or the SDK stops reading.
func filterLines(r io.Reader, pw *io.PipeWriter, out *lineWriter) {
	br := bufio.NewReaderSize(r, 64<<10)
	// Batches are JSON-RPC's, but MCP dropped them in 2025-06-18: the SDK
	// stops at one under a later version, so they pass only once the
	// client has asked for an earlier one.
	batches := false
	answer := func(id json.RawMessage, code int, msg string) bool {
		_, err := out.Write(append(jsonrpcError(id, code, msg), '\n'))
		return err == nil
	}
	for {
		line, tooLong, id, err := readLine(br, httpx.MaxBodyBytes)
		line = bytes.TrimSpace(line)
		switch {
		case tooLong:
			if !answer(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line longer than %d MB: send less at once (append_messages takes batches)", httpx.MaxBodyBytes>>20)) {
				_ = pw.Close()
				return
			}
		case len(line) == 0:
		default:
			if p := jsonrpcProblem(line); p != nil {
				if !answer(p.id, p.code, p.msg) {
					_ = pw.Close()
					return
				}
				break
			}
			if line[0] == '[' && !batches {
				if !answer(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batching is not supported in 2025-06-18 and later, nor before initialize") {
					_ = pw.Close()
					return
				}
				break
			}
			if v, ok := initializeVersion(line); ok {
				batches = batchVersion(v)
			}
			out.sent(line)
			if _, err := pw.Write(append(line, '\n')); err != nil {
				return // the SDK is done
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
				out.drain(drainLimit)
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line of at most max bytes, without its newline. A
// longer one is read to its end and dropped (tooLong), but for its id,
// found as it goes by (idFinder), or nil.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, id json.RawMessage, err error) {
	var f *idFinder
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case tooLong:
			f.write(chunk)
		case len(line)+len(chunk) > max+1: // +1: the newline
			f = &idFinder{}
			f.write(line)
			f.write(chunk)
			tooLong, line = true, nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			id = f.id()
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, id, err
	}
}

// initializeVersion is the protocol version an initialize request asks
// for.
func initializeVersion(line []byte) (string, bool) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if line[0] != '{' || json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return "", false
	}
	return m.Params.ProtocolVersion, true
}

// batchVersion reports whether a session at the version a client asks for
// takes batches: the SDK agrees to a version it supports and otherwise
// picks its latest, and versions from 2025-06-18 on have none.
func batchVersion(v string) bool {
	return v < "2025-06-18" && slices.Contains(mcp.SupportedProtocolVersions(), v)
}
