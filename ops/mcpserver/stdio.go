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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	out := &lineWriter{w: w}
	pr, pw := io.Pipe()
	go filterLines(r, pw, out)
	err := s.serve(ctx, &mcp.IOTransport{Reader: pr, Writer: out})
	// Stop the filter: its next line has nowhere to go.
	pr.CloseWithError(errors.New("the MCP session ended"))
	return err
}

// lineWriter serialises writes: each Write is one whole line, from the SDK
// or from the filter, never interleaved.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves w open: it belongs to the caller (stdout).
func (l *lineWriter) Close() error { return nil }

// filterLines copies r's good lines to the SDK through pw and answers the
// bad ones on out, until r ends or the SDK stops reading.
func filterLines(r io.Reader, pw *io.PipeWriter, out io.Writer) {
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
		line, tooLong, err := readLine(br, MaxBodyBytes)
		line = bytes.TrimSpace(line)
		switch {
		case tooLong:
			if !answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line longer than %d MB: send less at once (append_messages takes batches)", MaxBodyBytes>>20)) {
				pw.Close()
				return
			}
		case len(line) == 0:
		default:
			if p := jsonrpcProblem(line); p != nil {
				if !answer(p.id, p.code, p.msg) {
					pw.Close()
					return
				}
				break
			}
			if line[0] == '[' && !batches {
				if !answer(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batching is not supported in 2025-06-18 and later, nor before initialize") {
					pw.Close()
					return
				}
				break
			}
			if v, ok := initializeVersion(line); ok {
				batches = batchVersion(v)
			}
			if _, err := pw.Write(append(line, '\n')); err != nil {
				return // the SDK is done
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line of at most max bytes, without its newline. A
// longer one is read to its end and dropped: tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
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
