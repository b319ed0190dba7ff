package proxy

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/ops/memory"
)

// The proxy's benchmarks: weft's own work per request on a 2,000-message
// thread (the same request sent through weft and straight to the
// stand-in, the difference being weft's), the latency weft adds to the
// first streamed byte, and memory over 10,000 requests.
//
//	go test ./ops/proxy -run XXX -bench Proxy -benchtime 200x
//	go test ./ops/proxy -run XXX -bench ProxyMemory -benchtime 1x

// agentThread is a coding agent's conversation of n messages in the
// Messages API's shape: a question, then rounds of the assistant's text
// and a tool call, each answered by its result, with text the size such
// conversations have (a few hundred bytes; results about a kilobyte).
func agentThread(n int) []string {
	msgs := []string{`{"role":"user","content":[{"type":"text","text":"<system-reminder>context</system-reminder>"},{"type":"text","text":"Find why the rate limiter lets bursts through, and fix it."}]}`}
	for k := 0; len(msgs) < n; k++ {
		if len(msgs)%2 == 1 {
			text := fmt.Sprintf("Step %d: %s", k, strings.Repeat("I will look at the bucket refill and the clock it reads. ", 6))
			msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_use","id":"toolu_%06d","name":"Read","input":{"file_path":"/src/limiter/bucket_%d.go","limit":200}}]}`, text, k, k))
			continue
		}
		result := fmt.Sprintf("%d: %s", k, strings.Repeat("func (b *Bucket) refill(now time.Time) { b.tokens += rate * now.Sub(b.last) }\n", 12))
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%06d","content":%q}]}`, k-1, result))
	}
	return msgs
}

// timed runs fn b.N times and reports the median and 90th percentile
// per run. Between runs it pauses, as an agent does while it runs the
// tool the answer asked for: what weft does after an answer (storing
// it) is not the next request's wait.
func timed(b *testing.B, fn func(i int)) {
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		fn(i)
		durs = append(durs, time.Since(start))
		b.StopTimer()
		time.Sleep(5 * time.Millisecond)
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "ms-p90")
}

// postTo sends body to url, reads the answer whole, checks its status
// is want and returns its headers.
func postTo(b *testing.B, client *http.Client, url, body string, want int) http.Header {
	req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("status %d, want %d", resp.StatusCode, want)
	}
	return resp.Header
}

// BenchmarkProxyRequest2000 sends a 2,000-message conversation (1.3 MB)
// with one new message each time: straight to the stand-in, through weft
// with no operation (the body goes as it came), and through weft with a
// digest over the first 1,500 messages (the effective thread written in
// the request's shape), and through weft with a memory policy whose
// budget the thread passes (compacted, and checked on every request). Answers are not streamed; each is stored. The
// difference between direct and weft is weft's work and the second hop
// of the body over loopback.
func BenchmarkProxyRequest2000(b *testing.B) {
	for _, c := range []string{"direct", "unchanged", "digest", "policy"} {
		b.Run(c, func(b *testing.B) {
			rig := newProxyRig(b, rigOptions{Memory: c == "policy"})
			// Each request carries the answer to the one before and a new
			// question: the conversation goes on, as an agent's does.
			answer := `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`
			growing(b, rig, c, "/v1/messages", agentThread(2000), 0, func(msgs ...string) string { return anBody(false, msgs...) }, func(i int) []string {
				return []string{answer, fmt.Sprintf(`{"role":"user","content":"next %d"}`, i)}
			})
		})
	}
}

// growing times the requests of a thread that goes on by the items next
// gives each time, in bodies body writes: sent to weft at path, or
// straight to the stand-in (c "direct"); with c "digest", the stored
// thread's items from through 1499 are digested first.
func growing(b *testing.B, rig *proxyRig, c, path string, thread []string, from int, body func(msgs ...string) string, next func(i int) []string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	url := rig.weft.URL + path
	if c == "direct" {
		url = rig.up.server.URL + path
	}
	postTo(b, client, url, body(thread...), http.StatusOK)
	switch c {
	case "digest":
		sid := rig.onlySession()
		rig.messages(sid, len(thread)+1)
		digest(b, rig.svc, sid, from, 1499, "The limiter's bucket refill reads the wall clock; bursts pass when it jumps.")
	case "policy":
		// A memory policy with a budget under the thread's size: it is
		// compacted once now, and each request is checked against it
		// (and compacts when it crosses it again).
		sid := rig.onlySession()
		rig.messages(sid, len(thread)+1)
		budget, active := 150_000, 4
		if _, err := memory.SetMemoryPolicy(rig.svc, b.Context(), memory.SetMemoryPolicyArgs{SessionID: sid, BudgetTokens: &budget, MaxActiveTurns: &active}); err != nil {
			b.Fatal(err)
		}
	}
	timed(b, func(i int) {
		thread = append(thread, next(i)...)
		postTo(b, client, url, body(thread...), http.StatusOK)
	})
	b.ReportMetric(float64(len(body(thread...)))/(1<<20), "MB-body")
}

func BenchmarkProxyFirstByte(b *testing.B) {
	for _, c := range []string{"direct", "weft"} {
		b.Run(c, func(b *testing.B) {
			rig := newProxyRig(b, rigOptions{})
			sentAt := make(chan time.Time, 1)
			rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				http.NewResponseController(w).Flush()
				time.Sleep(2 * time.Millisecond) // the model thinks
				sentAt <- time.Now()
				io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n")
				http.NewResponseController(w).Flush()
			})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			url := rig.weft.URL + "/v1/messages"
			if c == "direct" {
				url = rig.up.server.URL + "/v1/messages"
			}
			body := anBody(true, agentThread(20)...)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, url, strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				one := make([]byte, 1)
				if _, err := io.ReadFull(resp.Body, one); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(<-sentAt))
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-first-byte-median")
			b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-first-byte-p90")
		})
	}
}

// BenchmarkProxyMemory sends 10,000 requests through weft and reports
// the heap (after a collection) and the goroutines at 1,000 requests and
// at 10,000. In "conversations", 100 conversations go on a turn at a
// time, streamed, each answer stored: what grows is what the 100
// sessions store and weft keeps of it (20,000 messages; the messages
// remembered, bounded at 64 MB). In "steady", 100 conversations of 50
// messages are sent again and again and the upstream answers 429: every
// request is read, recognised and relayed, and nothing new is stored,
// so nothing may grow. "digested" is "conversations" with the first
// messages of each digested at its sixth turn: every request after it
// is sent from the head weft keeps of its session's thread.
func BenchmarkProxyMemory(b *testing.B) {
	for _, c := range []string{"conversations", "steady", "digested"} {
		b.Run(c, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				proxyMemory(b, c)
			}
		})
	}
}

func proxyMemory(b *testing.B, c string) {
	steady := c == "steady"
	rig := newProxyRig(b, rigOptions{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	threads := make([][]string, 100)
	if steady {
		rig.up.setAnswer(func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
		})
		for k := range threads {
			threads[k] = agentThread(50)
			threads[k][0] = fmt.Sprintf(`{"role":"user","content":"conversation %d"}`, k)
		}
	}
	heap := func() (float64, int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapInuse) / (1 << 20), runtime.NumGoroutine()
	}
	var heap1k, heap10k float64
	var g1k, g10k int
	for r := 0; r < 10000; r++ {
		k := r % len(threads)
		if !steady {
			if len(threads[k]) > 0 {
				threads[k] = append(threads[k], `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`)
			}
			threads[k] = append(threads[k], fmt.Sprintf(`{"role":"user","content":"conversation %d, turn %d"}`, k, r/len(threads)))
		}
		want := http.StatusOK
		if steady {
			want = http.StatusTooManyRequests // the upstream's answer, relayed
		}
		header := postTo(b, client, rig.weft.URL+"/v1/messages", anBody(!steady, threads[k]...), want)
		if c == "digested" && r/len(threads) == 5 {
			// The answer is stored in the background: wait for it.
			sid := header.Get(SessionHeader)
			rig.messages(sid, len(threads[k])+1)
			digest(b, rig.svc, sid, 0, 4, fmt.Sprintf("Conversation %d began.", k))
		}
		switch r + 1 {
		case 1000:
			heap1k, g1k = heap()
		case 10000:
			heap10k, g10k = heap()
		}
	}
	if n := rig.sessions(); n != len(threads) {
		b.Fatalf("%d sessions, want %d", n, len(threads))
	}
	b.ReportMetric(heap1k, "MB-heap-at-1k")
	b.ReportMetric(heap10k, "MB-heap-at-10k")
	b.ReportMetric(float64(g10k-g1k), "goroutines-added")
}

// BenchmarkProxyWork2000 is weft's own work for one request of a
// 2,000-message conversation, in process, without the network. The
// request: reading the body, recognising the session, writing the
// effective thread in the request's shape (with a digest over the first
// 1,500 messages; none for unchanged); the new question is stored
// meanwhile. After: waiting for that write, and storing the answer.
func BenchmarkProxyWork2000(b *testing.B) {
	for _, c := range []string{"unchanged", "digest"} {
		b.Run(c, func(b *testing.B) {
			rig := newProxyRig(b, rigOptions{})
			svc := rig.svc
			engine := EngineOf(svc)
			thread := strings.Join(agentThread(2000), ",")
			// request is what stands between the client's request and
			// the upstream; after, what weft does once the answer is in.
			var out []byte // reused, as the handler reuses its buffers
			request := func(body []byte) Turn {
				req, err := parseProxyBody(Anthropic, body)
				if err != nil {
					b.Fatal(err)
				}
				turn, err := engine.Take(b.Context(), Request{API: Anthropic, Messages: req.messages})
				if err != nil {
					b.Fatal(err)
				}
				if !turn.Unchanged {
					if out, err = req.rewrite(out[:0], &turn); err != nil {
						b.Fatal(err)
					}
				}
				return turn
			}
			after := func(turn Turn) {
				stored, err := turn.Wait()
				if err != nil {
					b.Fatal(err)
				}
				_, err = engine.RecordAnswer(b.Context(), Answer{API: Anthropic, SessionID: stored.SessionID, After: stored.Stored,
					Message: []byte(`{"role":"assistant","content":[{"type":"text","text":"Done."}]}`)})
				if err != nil {
					b.Fatal(err)
				}
			}
			work := func(body []byte) Turn {
				turn := request(body)
				after(turn)
				return turn
			}
			first := work([]byte(anBody(false, thread)))
			if c == "digest" {
				digest(b, svc, first.SessionID, 0, 1499, "The limiter's bucket refill reads the wall clock; bursts pass when it jumps.")
			}
			thread += `,{"role":"assistant","content":[{"type":"text","text":"Done."}]}`
			durs := make([]time.Duration, 0, b.N)
			afters := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				thread += fmt.Sprintf(`,{"role":"user","content":"next %d"}`, i)
				body := []byte(anBody(false, thread))
				thread += `,{"role":"assistant","content":[{"type":"text","text":"Done."}]}`
				b.StartTimer()
				start := time.Now()
				turn := request(body)
				mid := time.Now()
				after(turn)
				durs = append(durs, mid.Sub(start))
				afters = append(afters, time.Since(mid))
				if turn.SessionID != first.SessionID || turn.Unchanged != (c == "unchanged") {
					b.Fatalf("request %d: %+v", i, turn)
				}
			}
			b.StopTimer()
			for _, d := range [][]time.Duration{durs, afters} {
				slices.Sort(d)
			}
			b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "ms-request-median")
			b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "ms-request-p90")
			b.ReportMetric(float64(afters[len(afters)/2].Microseconds())/1000, "ms-after-median")
		})
	}
}
