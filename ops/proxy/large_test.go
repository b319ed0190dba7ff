package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"weft/ops"
)

// A large message through the proxy: what weft allocates for it, at
// most, and the heap it takes at its peak, measured around weft's own
// work (the body read, the thread recognised and stored, the body sent
// written, the answer stored), without the client's or the upstream's.

// largeBody is a request bringing one message of about size bytes of
// text, written as a JavaScript client writes JSON, in api's shape.
func largeBody(api API, size int) []byte {
	line := "func (b *Bucket) refill(now time.Time) {\n\tb.tokens += \"rate\" * now.Sub(b.last) // <a & b> café\n}\n"
	text := strings.Repeat(line, size/len(line)+1)[:size]
	var q bytes.Buffer
	e := json.NewEncoder(&q)
	e.SetEscapeHTML(false)
	_ = e.Encode(text)
	quoted := strings.TrimSuffix(q.String(), "\n")
	switch api {
	case OpenAI:
		return []byte(`{"model":"m","messages":[{"role":"user","content":` + quoted + `}]}`)
	case Responses:
		return []byte(`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":` + quoted + `}]}]}`)
	}
	return []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":` + quoted + `}]}`)
}

// largeAnswer is the answer to a request in api's shape.
func largeAnswer(api API) json.RawMessage {
	switch api {
	case OpenAI:
		return json.RawMessage(`{"role":"assistant","content":"Done."}`)
	case Responses:
		return json.RawMessage(`[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}]`)
	}
	return json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"Done."}]}`)
}

// largeUsage is what proxying one request costs: the bytes allocated,
// and the heap at its peak above the heap before (sampled every
// millisecond).
type largeUsage struct {
	allocated, peak uint64
}

// proxyLarge sends body through engine as the handler does, storing the
// request and its answer, and says what it cost.
func proxyLarge(tb testing.TB, engine *Engine, api API, body []byte) largeUsage {
	tb.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	req, err := parseProxyBody(api, body)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := ops.WithAuthor(context.Background(), proxyAuthor)
	turn, err := engine.Take(ctx, Request{API: api, Messages: req.messages})
	if err != nil {
		tb.Fatal(err)
	}
	if !turn.Unchanged {
		if _, err := req.rewrite(nil, &turn); err != nil {
			tb.Fatal(err)
		}
	}
	stored, err := turn.Wait()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := engine.RecordAnswer(ctx, Answer{API: api, SessionID: stored.SessionID, After: stored.Stored, Message: largeAnswer(api)}); err != nil {
		tb.Fatal(err)
	}
	close(done)
	<-sampled
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	u := largeUsage{allocated: after.TotalAlloc - before.TotalAlloc}
	if p := peak.Load(); p > before.HeapInuse {
		u.peak = p - before.HeapInuse
	}
	return u
}

// The memory a large message takes while it is proxied is bounded at 3
// bytes a byte of the message (issue: an 8 MB message took 9.2, then
// 7.2): its text decoded once, into the content; bbolt's pages for it,
// written from that content; little else. The bound is on allocations,
// which bound the heap's peak too (the heap grows above where it was
// only by what is allocated), and which, unlike the peak, do not depend
// on when the collector runs.
func TestProxyLargeMessageAllocations(t *testing.T) {
	if testing.Short() {
		// 15 MB through the engine, its allocations counted (more of
		// them under the race detector): the full run holds it.
		t.Skip("a size measure: not with -short")
	}
	const (
		size = 4 << 20
		// maxAllocated bounds the bytes weft allocates per byte of the
		// message: 2.1 measured for every API (2.2 under the race
		// detector). Before: 8.6 for the Messages and Responses APIs
		// and 5.4 for Chat Completions, while a plain text was stored
		// with its part and its source block, its record was a copy,
		// bbolt copied the write's values each time it mapped the file
		// again, and a chunk took five pages for four pages of bytes;
		// 33.5 and 45.1 before the text was stored once.
		maxAllocated = 3
	)
	for _, api := range []API{Anthropic, OpenAI, Responses} {
		t.Run(string(api), func(t *testing.T) {
			rig := newProxyRig(t, rigOptions{})
			engine := EngineOf(rig.svc)
			// The tokenizer's tables, loaded once for the process (for
			// a text of a megabyte or more).
			proxyLarge(t, engine, api, largeBody(api, 1<<20+1))
			u := proxyLarge(t, engine, api, largeBody(api, size))
			per := float64(u.allocated) / size
			t.Logf("%s: %.1f bytes allocated a byte of the message; the heap's peak %.1f MB above the heap before", api, per, float64(u.peak)/(1<<20))
			if per > maxAllocated {
				t.Errorf("%.1f bytes allocated a byte of the message, at most %d", per, maxAllocated)
			}
		})
	}
}

// largeToolResult is a Messages API request whose last message is a
// tool's output of about size bytes, as Claude Code sends one: a
// tool_result block after the call it answers.
func largeToolResult(size int) []byte {
	body := largeBody(Anthropic, size)
	start := bytes.Index(body, []byte(`"content":`)) + len(`"content":`)
	text := body[start : len(body)-len(`}]}`)]
	return fmt.Appendf(nil, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"Read it."},`+
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"bucket.go"}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":%s}]}]}`, text)
}

// BenchmarkProxyLargeMessage is one request bringing an 8 MB message in
// each API's shape, and a Messages API request bringing an 8 MB tool
// result (anthropic-tool_result), weft's own work for it as the handler
// does it: it reports the bytes allocated and the heap's peak (above the
// heap before), per byte of the message. A tool result is a block, kept
// with its part and the part's JSON, and is not yet held at 3 as plain
// text is (TestProxyLargeMessageAllocations).
//
//	go test ./ops/proxy -run XXX -bench ProxyLargeMessage -benchtime 3x
func BenchmarkProxyLargeMessage(b *testing.B) {
	const size = 8 << 20
	cases := []struct {
		name string
		api  API
		body func(size int) []byte
	}{
		{string(Anthropic), Anthropic, func(n int) []byte { return largeBody(Anthropic, n) }},
		{string(OpenAI), OpenAI, func(n int) []byte { return largeBody(OpenAI, n) }},
		{string(Responses), Responses, func(n int) []byte { return largeBody(Responses, n) }},
		{string(Anthropic) + "-tool_result", Anthropic, largeToolResult},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rig := newProxyRig(b, rigOptions{})
			engine := EngineOf(rig.svc)
			proxyLarge(b, engine, c.api, c.body(1<<20+1))
			var alloc, peak float64
			for i := 0; i < b.N; i++ {
				body := c.body(size)
				// Each request a conversation of its own.
				body = bytes.Replace(body, []byte("func (b"), fmt.Appendf(nil, "func%03d(b", i), 1)
				body = bytes.Replace(body, []byte("Read it."), fmt.Appendf(nil, "Read it, %d.", i), 1)
				u := proxyLarge(b, engine, c.api, body)
				alloc += float64(u.allocated) / size
				peak += float64(u.peak) / size
			}
			b.ReportMetric(alloc/float64(b.N), "B-alloc/B")
			b.ReportMetric(peak/float64(b.N), "B-peak/B")
		})
	}
}
