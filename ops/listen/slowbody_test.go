package listen

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"weft/ops"
	"weft/ops/summary"
)

// slowBody sends a request's headers and the first byte of a body it
// says is longer, then nothing, and returns how long the server took to
// answer or close the connection, and what it answered.
func slowBody(t *testing.T, addr, path string) (time.Duration, string) {
	t.Helper()
	conn, err := new(net.Dialer).DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", path, addr)
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, _ := io.ReadAll(bufio.NewReader(conn))
	return time.Since(start), string(b)
}

// A body that trickles in is cut off after the listener's read timeout,
// on /api and on /mcp alike, with a 408 that says why; headers that
// trickle are cut too; and a request whose body came in time is served
// however long its answer takes.
func TestSlowBodiesAreCut(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(600 * time.Millisecond) // a summary model that takes its time
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"slow but sure"}}]}`)
	}))
	t.Cleanup(slow.Close) // after the parallel subtests
	svc, _ := seeded(t, ops.WithSummaryEndpoint(summary.Endpoint{URL: slow.URL + "/v1"}))
	const limit = 200 * time.Millisecond
	l := listen(t, svc, Options{Addr: "127.0.0.1:0", ReadTimeout: limit})
	addr := strings.TrimPrefix(l.URL(), "http://")

	// Each cut is its own connection: they wait out the limit side by
	// side, and all of them are over before the requests below.
	t.Run("cut", func(t *testing.T) {
		for _, path := range []string{"/api/list_sessions", "/mcp", "/import"} {
			t.Run("slow body "+path, func(t *testing.T) {
				t.Parallel()
				took, answer := slowBody(t, addr, path)
				if took < limit || took > limit+3*time.Second {
					t.Errorf("%s: a body that stopped coming was held %v (limit %v)", path, took, limit)
				}
				if !strings.Contains(answer, " 408 ") || !strings.Contains(answer, "too slowly") {
					t.Errorf("%s: answered %q, want a 408 saying the body came too slowly", path, answer)
				}
			})
		}
		// A request answered without its body being read (nothing there, or
		// refused before it is read) does not wait for the body either.
		for _, path := range []string{"/nosuch", "/healthz"} {
			t.Run("unread body "+path, func(t *testing.T) {
				t.Parallel()
				if took, answer := slowBody(t, addr, path); took > limit+3*time.Second {
					t.Errorf("%s: a body nobody reads held the connection %v (answered %.40q)", path, took, answer)
				}
			})
		}
		t.Run("without the token", func(t *testing.T) {
			t.Parallel()
			tl := listen(t, svc, Options{Addr: "127.0.0.1:0", ReadTimeout: limit, Token: "tok"})
			if took, answer := slowBody(t, strings.TrimPrefix(tl.URL(), "http://"), "/api/list_sessions"); took > limit+3*time.Second || !strings.Contains(answer, " 401 ") {
				t.Errorf("a slow body without the token held the connection %v (answered %.40q)", took, answer)
			}
		})

		// Headers that never end are cut as well.
		t.Run("slow headers", func(t *testing.T) {
			t.Parallel()
			conn, err := new(net.Dialer).DialContext(t.Context(), "tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			fmt.Fprintf(conn, "POST /api/list_sessions HTTP/1.1\r\nHost: %s\r\n", addr)
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			io.ReadAll(conn)
			conn.Close()
			if took := time.Since(start); took > limit+3*time.Second {
				t.Errorf("headers that never ended were held %v", took)
			}
		})
	})

	// Normal requests go on, a large body sent briskly is taken even when
	// it takes longer than the limit, and an answer that takes longer
	// than the limit is not cut.
	if status, _, body := do(t, "POST", l.URL()+"/api/list_sessions", "{}", nil); status != 200 {
		t.Errorf("list_sessions after the slow bodies: %d %s", status, body)
	}
	t.Run("brisk body", func(t *testing.T) {
		t.Parallel()
		pr, pw := io.Pipe()
		go func() {
			pw.Write([]byte(`{"messages":[{"role":"user","content":"`))
			chunk := strings.Repeat("x", 64<<10)
			for range 40 { // 2.5 MB over about 0.4 s: well over the limit, at a good rate
				pw.Write([]byte(chunk))
				time.Sleep(10 * time.Millisecond)
			}
			pw.Write([]byte(`"}]}`))
			pw.Close()
		}()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", l.URL()+"/api/append_messages", pr)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("a brisk 2.5 MB body: %d %.300s", resp.StatusCode, b)
		}
	})
	t.Run("slow answer", func(t *testing.T) {
		t.Parallel()
		status, _, body := do(t, "POST", l.URL()+"/api/summarize_message_range", `{"start_idx":0,"end_idx":5,"source":"endpoint"}`, nil)
		if status != 200 || !strings.Contains(string(body), "slow but sure") {
			t.Errorf("a tool call answering after the limit: %d %s", status, body)
		}
	})
}
