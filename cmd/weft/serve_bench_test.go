package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weft/internal/benchdata"
)

// BenchmarkServeLargeMessage is one 8 MB message (a Messages API request
// of one user message, or of a tool's output, a new conversation each)
// through weft serve, a
// process of its own, to a stand-in upstream: the anonymous memory the
// process holds at its peak while it takes the request, above what it
// held before, in MB and in bytes a byte of the message. A 1 MB message
// goes first, to load the tokenizer's tables, which a process loads once.
//
//	go test ./cmd/weft -run XXX -bench ServeLargeMessage -benchtime 3x
func BenchmarkServeLargeMessage(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("no /proc to read memory from")
	}
	b.Run("text", func(b *testing.B) { serveLarge(b, benchdata.Messages) })
	b.Run("tool_result", func(b *testing.B) { serveLarge(b, benchdata.MessagesToolOut) })
}

// serveLarge is BenchmarkServeLargeMessage for requests of shape
// (benchdata.LargeRequest).
func serveLarge(b *testing.B, shape string) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer up.Close()
	db := filepath.Join(b.TempDir(), "weft.db")
	cmd, url, log := startServe(b, db, "--addr", "127.0.0.1:0", "--upstream-anthropic", up.URL)
	base := strings.TrimSuffix(url, "/mcp")
	pid := cmd.Process.Pid
	send := func(body []byte) {
		b.Helper()
		if resp, out := postJSON(b, base+"/v1/messages", body, "X-Api-Key", "k"); resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %s\n%s", resp.StatusCode, out, log.String())
		}
	}
	const size = 8 << 20
	send(benchdata.LargeRequest(shape, 0, 1<<20))
	time.Sleep(200 * time.Millisecond)
	var over float64
	for i := 0; i < b.N; i++ {
		req := benchdata.LargeRequest(shape, i+1, size)
		before := procStatusKB(b, pid, "RssAnon")
		var peak atomic.Int64
		done := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if kb := procStatusKB(b, pid, "RssAnon"); kb > peak.Load() {
					peak.Store(kb)
				}
				select {
				case <-done:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		send(req)
		time.Sleep(50 * time.Millisecond) // the answer is stored after it is sent
		close(done)
		<-sampled
		over += float64(max(peak.Load()-before, 0)) * 1024
		time.Sleep(200 * time.Millisecond)
	}
	b.ReportMetric(over/float64(b.N)/1e6, "MB-over")
	b.ReportMetric(over/float64(b.N)/size, "B-over/B")
}
