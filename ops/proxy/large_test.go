package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/benchdata"
	"weft/ops"
)

// A large message through the proxy: what weft allocates for it, at
// most, and the heap it takes at its peak, measured around weft's own
// work (the body read, the thread recognised and stored, the body sent
// written, the answer stored), without the client's or the upstream's.

// largeCases are the large messages measured: a message of text in each
// API's shape (and a Messages API one of a reminder block and a block of
// the text, as Claude Code sends a paste), and a tool's output in each (a Messages API tool_result
// block, as Claude Code sends one, its content a string or a list of a
// text block, as an MCP tool's output comes; a Chat Completions tool
// message and a Responses function_call_output, each of a string or a
// list of one text block). A tool's output is said twice in what
// is read, as its part's text and in its block: the store writes the
// parts as read, packed over the content (never as JSON first), the text
// is decoded once after the content's prefix, and the block is kept
// where it lies in the body given to the engine.
var largeCases = []struct {
	name  string
	api   API
	shape string
}{
	{string(Anthropic), Anthropic, benchdata.Messages},
	{string(Anthropic) + "-pasted", Anthropic, benchdata.MessagesPasted},
	{string(OpenAI), OpenAI, benchdata.Chat},
	{string(Responses), Responses, benchdata.Responses},
	{string(Anthropic) + "-tool_result", Anthropic, benchdata.MessagesToolOut},
	{string(Anthropic) + "-tool_result-blocks", Anthropic, benchdata.MessagesToolList},
	{string(OpenAI) + "-tool", OpenAI, benchdata.ChatToolOut},
	{string(OpenAI) + "-tool-blocks", OpenAI, benchdata.ChatToolList},
	{string(Responses) + "-function_call_output", Responses, benchdata.ResponsesToolOut},
	{string(Responses) + "-function_call_output-blocks", Responses, benchdata.ResponsesToolList},
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
	// The body is given to the engine as the handler gives it.
	turn, err := engine.Take(ctx, Request{API: api, Messages: req.messages, Lend: lendOf(body, req.messages)})
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
		// 30 MB through the engine, its allocations counted (more of
		// them under the race detector): the full run holds it.
		t.Skip("a size measure: not with -short")
	}
	const (
		// size is half the issue's: a body the pool keeps, given to
		// the engine because it is mostly one message
		// (BenchmarkProxyLargeMessage sends the 8 MB, a body
		// the pool does not keep).
		size = 4 << 20
		// maxAllocated bounds the bytes weft allocates per byte of the
		// message: 2.1 measured for every case (2.2 under the race
		// detector). A tool's output took 4.25 (Messages API), 8.4
		// (Chat Completions) and 5.2 (Responses) while its parts were
		// written out as JSON (its text twice), its block copied and
		// its content rendered as another copy. Before: 8.6 for the Messages and Responses APIs
		// and 5.4 for Chat Completions, while a plain text was stored
		// with its part and its source block, its record was a copy,
		// bbolt copied the write's values each time it mapped the file
		// again, and a chunk took five pages for four pages of bytes;
		// 33.5 and 45.1 before the text was stored once.
		maxAllocated = 3
	)
	for _, c := range largeCases {
		t.Run(c.name, func(t *testing.T) {
			api := c.api
			rig := newProxyRig(t, rigOptions{})
			engine := EngineOf(rig.svc)
			// The tokenizer's tables, loaded once for the process (for
			// a text of a megabyte or more).
			proxyLarge(t, engine, api, benchdata.LargeRequest(c.shape, 0, 1<<20+1))
			u := proxyLarge(t, engine, api, benchdata.LargeRequest(c.shape, 1, size))
			per := float64(u.allocated) / size
			t.Logf("%s: %.1f bytes allocated a byte of the message; the heap's peak %.1f MB above the heap before", c.name, per, float64(u.peak)/(1<<20))
			if per > maxAllocated {
				t.Errorf("%.1f bytes allocated a byte of the message, at most %d", per, maxAllocated)
			}
		})
	}
}

// BenchmarkProxyLargeMessage is one request bringing an 8 MB message in
// each API's shape, and one bringing an 8 MB tool output in each (a
// Messages API tool_result, a Chat Completions tool message, a
// Responses function_call_output), weft's own work for it as the handler
// does it: it reports the bytes allocated and the heap's peak (above the
// heap before), per byte of the message
// (TestProxyLargeMessageAllocations holds each at 3).
//
//	go test ./ops/proxy -run XXX -bench ProxyLargeMessage -benchtime 3x
func BenchmarkProxyLargeMessage(b *testing.B) {
	const size = 8 << 20
	for _, c := range largeCases {
		b.Run(c.name, func(b *testing.B) {
			rig := newProxyRig(b, rigOptions{})
			engine := EngineOf(rig.svc)
			proxyLarge(b, engine, c.api, benchdata.LargeRequest(c.shape, 0, 1<<20+1))
			var alloc, peak float64
			for i := 0; i < b.N; i++ {
				// Each request a conversation of its own.
				u := proxyLarge(b, engine, c.api, benchdata.LargeRequest(c.shape, i+1, size))
				alloc += float64(u.allocated) / size
				peak += float64(u.peak) / size
			}
			b.ReportMetric(alloc/float64(b.N), "B-alloc/B")
			b.ReportMetric(peak/float64(b.N), "B-peak/B")
		})
	}
}

// A body is given to the engine when the pool would not keep it, or
// when it is mostly one message of a megabyte or more; an agent's usual
// body (a long conversation, a message or two new) and a small one stay
// pooled.
func TestGivenBody(t *testing.T) {
	msgs := func(sizes ...int) ([]byte, []json.RawMessage) {
		var body []byte
		var out []json.RawMessage
		for _, n := range sizes {
			at := len(body)
			body = append(body, bytes.Repeat([]byte("x"), n)...)
			out = append(out, body[at:])
		}
		return body, out
	}
	for _, c := range []struct {
		name  string
		sizes []int
		cap   int
		want  bool
	}{
		{"a small body of one message", []int{300}, 0, false},
		{"a small body in a large pooled buffer", []int{300}, maxKeptBuffer, false},
		{"a long conversation", slices.Repeat([]int{750}, 2000), 0, false},
		{"a tool's output of 4 MB", []int{200, 300, 4 << 20}, 0, true},
		{"two outputs of 1 MB, neither half", []int{1 << 20, 1 << 20, 1 << 20}, 0, false},
		{"a buffer the pool does not keep", []int{300}, maxKeptBuffer + 1, true},
	} {
		body, raw := msgs(c.sizes...)
		if c.cap > cap(body) {
			body = append(make([]byte, 0, c.cap), body...)
		}
		if got := lendOf(body, raw) > 0; got != c.want {
			t.Errorf("%s: given %v, want %v", c.name, got, c.want)
		}
	}
}
