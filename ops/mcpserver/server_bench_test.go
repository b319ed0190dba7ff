package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/model"
	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/tools"
	"weft/store"
	"weft/store/boltstore"
)

// The protocol faces' overhead, measured over a big session: in-process
// MCP (in-memory transports), the HTTP API on loopback, and MCP over
// Streamable HTTP.
//
//	go test ./ops/mcpserver -run XXX -bench . -benchtime 3s

var benchWords = strings.Fields(`the a of to and in is for on that with as it be this are by from at or
limiter token bucket redis gateway request burst quota window retry header latency test deploy`)

var benchT0 = time.Date(2026, 1, 20, 9, 0, 0, 0, time.UTC)

// benchDir holds the benchmark file once it is built.
var benchDir atomic.Value

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, ok := benchDir.Load().(string); ok {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// benchFile is a file with one session of 100k messages of about 650
// bytes, one a second, written straight through the store (the service's
// append path is measured elsewhere). It is built once per run.
var benchFile = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "weft-mcpbench-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "bench.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return "", err
	}
	defer st.Close()
	const n = 100_000
	r := rand.New(rand.NewPCG(n, 650))
	info := model.Session{ID: "bench", Title: "bench", CreatedAt: benchT0, UpdatedAt: benchT0}
	for seq := 1; seq <= n; {
		batch := make([]model.Message, 0, 20_000)
		for ; seq <= n && len(batch) < cap(batch); seq++ {
			role := model.RoleUser
			if seq%2 == 0 {
				role = model.RoleAssistant
			}
			var sb strings.Builder
			for sb.Len() < 650 {
				sb.WriteString(benchWords[r.IntN(len(benchWords))])
				sb.WriteByte(' ')
			}
			content := sb.String()
			batch = append(batch, model.Message{
				ID: model.MessageID(uint64(seq)), Seq: uint64(seq), Role: role, Content: content,
				CreatedAt: benchT0.Add(time.Duration(seq) * time.Second), Tokens: 160,
				Digest: model.ContentDigest(role, content),
			})
		}
		info.MessageCount += len(batch)
		info.Tokens += len(batch) * 160
		if err := st.Update(func(tx store.Tx) error {
			if err := tx.PutSession(info); err != nil {
				return err
			}
			return tx.AppendMessages(info.ID, batch)
		}); err != nil {
			return "", err
		}
	}
	return path, nil
})

// benchService opens the benchmark file; the session is "bench".
func benchService(b *testing.B) (*ops.Service, string) {
	b.Helper()
	path, err := benchFile()
	if err != nil {
		b.Fatal(err)
	}
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return ops.New(st), "bench"
}

// benchLatencies reports the median and 99th percentile of ds.
func benchLatencies(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkToolCallTurnsAround100k is get_turns_around (count 40) on a
// 100k-message session through the registry, as weft call and the HTTP
// API run it: decode the arguments, call, encode the result.
func BenchmarkToolCallTurnsAround100k(b *testing.B) {
	svc, sid := benchService(b)
	tool, _ := tools.Lookup("get_turns_around")
	backend := tools.Local{Service: svc}
	args := []byte(fmt.Sprintf(`{"session_id":%q,"timestamp":%q,"count":40}`, sid, benchT0.Add(50_000*time.Second).Format(time.RFC3339)))
	ctx := context.Background()
	if _, _, err := backend.Call(ctx, tool, args); err != nil {
		b.Fatal(err)
	}
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t := time.Now()
		if _, _, err := backend.Call(ctx, tool, args); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t))
	}
	benchLatencies(b, ds)
}

// BenchmarkMCPInProcessTurnsAround100k is one tools/call of
// get_turns_around (count 40) on a 100k-message session, through an SDK
// client over in-memory transports.
func BenchmarkMCPInProcessTurnsAround100k(b *testing.B) {
	svc, sid := benchService(b)
	cs := connect(b, New(tools.Local{Service: svc}, Options{}), "bench", nil)
	args := map[string]any{"session_id": sid, "timestamp": benchT0.Add(50_000 * time.Second).Format(time.RFC3339), "count": 40}
	callOK(b, cs, "get_turns_around", args, nil) // warm the view
	benchCalls(b, cs, "get_turns_around", args)
}

// BenchmarkMCPInProcessMessageRange40 is one tools/call of
// get_message_range returning 40 messages of a 100k-message session,
// through an SDK client over in-memory transports: the SDK's encoding,
// decoding and output validation of a typical read, with weft's call
// between them.
func BenchmarkMCPInProcessMessageRange40(b *testing.B) {
	svc, sid := benchService(b)
	cs := connect(b, New(tools.Local{Service: svc}, Options{}), "bench", nil)
	args := map[string]any{"session_id": sid, "start_idx": 50000, "end_idx": 50039}
	callOK(b, cs, "get_message_range", args, nil) // warm the view
	benchCalls(b, cs, "get_message_range", args)
}

// benchConcurrent runs op from clients goroutines until b.N calls are
// made, and reports calls per second and latencies.
func benchConcurrent(b *testing.B, clients int, op func(client int) error) {
	var mu sync.Mutex
	var all []time.Duration
	var next sync.WaitGroup
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		next.Go(func() {
			var ds []time.Duration
			for range work {
				t := time.Now()
				if err := op(c); err != nil {
					b.Error(err)
					return
				}
				ds = append(ds, time.Since(t))
			}
			mu.Lock()
			all = append(all, ds...)
			mu.Unlock()
		})
	}
	next.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	benchLatencies(b, all)
}

// BenchmarkHTTPMessageRange is POST /api/get_message_range (20 messages)
// over loopback from 8 concurrent clients.
func BenchmarkHTTPMessageRange(b *testing.B) {
	svc, sid := benchService(b)
	ts := httptest.NewServer(listen.Handler(listen.Options{Faces: []httpx.Face{New(tools.Local{Service: svc}, Options{}).Face()}}))
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	body := []byte(fmt.Sprintf(`{"session_id":%q,"start_idx":50000,"end_idx":50019}`, sid))
	benchConcurrent(b, 8, func(int) error {
		req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, ts.URL+"/api/get_message_range", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d: %s", resp.StatusCode, buf.Bytes())
		}
		return nil
	})
}

// BenchmarkStreamableHTTPToolCalls is tools/call over MCP Streamable
// HTTP, 8 sessions calling at once: get_message_range of 20 messages
// (about 16 kB of JSON, twice: as text and as structured content), and of
// one message, where the protocol's own cost dominates.
func BenchmarkStreamableHTTPToolCalls(b *testing.B) {
	svc, sid := benchService(b)
	srv := New(tools.Local{Service: svc}, Options{})
	ts := httptest.NewServer(listen.Handler(listen.Options{Faces: []httpx.Face{srv.Face()}}))
	defer ts.Close()
	ctx := context.Background()
	var sessions []*mcp.ClientSession
	for i := range 8 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("bench-%d", i)}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}},
			&mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	for _, n := range []int{20, 1} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			args := map[string]any{"session_id": sid, "start_idx": 50000, "end_idx": 50000 + n - 1}
			benchConcurrent(b, len(sessions), func(c int) error {
				res, err := sessions[c].CallTool(ctx, &mcp.CallToolParams{Name: "get_message_range", Arguments: args})
				if err != nil {
					return err
				}
				if res.IsError {
					return fmt.Errorf("%s", text(res))
				}
				return nil
			})
		})
	}
}

// benchCalls times b.N tools/call of name with args through cs and
// reports their latencies.
func benchCalls(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) {
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, text(res))
		}
		ds = append(ds, time.Since(t))
	}
	benchLatencies(b, ds)
}
