package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"weft/e2e/internal/rig"
	"weft/store/pgstore/pgtest"
)

// TestPostgresTwoServeProcesses: two weft serve processes on one
// PostgreSQL database, as a team runs them. 8 clients append through
// both at once (half through each), 500 each: every message is stored once, each
// client's in its order, none lost; and a client of either listening to
// its /events hears every write of both.
func TestPostgresTwoServeProcesses(t *testing.T) {
	url := pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv))
	weft := weftBinary(t)
	var bases [2]string
	for i := range bases {
		dir := filepath.Join(t.TempDir(), fmt.Sprint("serve", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		bases[i], _ = rig.Serve(t, weft, dir, filepath.Join(dir, "unused.db"), "", "--store", url)
	}
	call := func(base, tool string, args map[string]any, out any) {
		t.Helper()
		b, _ := json.Marshal(args)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/"+tool, bytes.NewReader(b))
		if err != nil {
			t.Error(err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			var msg bytes.Buffer
			_, _ = msg.ReadFrom(resp.Body)
			t.Errorf("%s through %s: %d %s", tool, base, resp.StatusCode, msg.String())
			return
		}
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
	}
	var created struct {
		SessionID string `json:"session_id"`
	}
	call(bases[0], "create_session", map[string]any{"title": "shared"}, &created)
	sid := created.SessionID
	if sid == "" {
		t.Fatal("no session made")
	}

	// A listener on each process's /events.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type heard struct {
		mu       sync.Mutex
		versions map[uint64]int
	}
	var listeners [2]*heard
	for i, base := range bases {
		h := &heard{versions: map[uint64]int{}}
		listeners[i] = h
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				var ev struct {
					SessionID string `json:"session_id"`
					Version   uint64 `json:"version"`
					Kind      string `json:"kind"`
				}
				if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.SessionID == sid && ev.Kind == "appended" {
					h.mu.Lock()
					h.versions[ev.Version]++
					h.mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // both listening before the writes

	clients, appends := 8, 500
	if testing.Short() {
		appends = 60
	}
	var wg sync.WaitGroup
	for c := range clients {
		base := bases[c%2]
		wg.Go(func() {
			for k := range appends {
				call(base, "append_messages", map[string]any{"session_id": sid, "messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("client %d, append %d", c, k)}}}, nil)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	type message struct {
		Content string `json:"content"`
	}
	var stored []message
	for start := 0; start < clients*appends; start += 2000 { // a call gives 2,000 at most
		var rng struct {
			Messages []message `json:"messages"`
		}
		call(bases[1], "get_message_range", map[string]any{"session_id": sid, "start_idx": start, "end_idx": min(start+1999, clients*appends-1), "max_tokens": 0}, &rng)
		stored = append(stored, rng.Messages...)
	}
	next := map[int]int{}
	for _, m := range stored {
		var c, k int
		if _, err := fmt.Sscanf(m.Content, "client %d, append %d", &c, &k); err != nil {
			t.Fatalf("a message not made by a client: %q", m.Content)
		}
		if k != next[c] {
			t.Fatalf("client %d's append %d stands where its append %d belongs", c, k, next[c])
		}
		next[c] = k + 1
	}
	if len(stored) != clients*appends {
		t.Fatalf("%d messages stored, want %d", len(stored), clients*appends)
	}
	deadline := time.Now().Add(10 * time.Second)
	for i, h := range listeners {
		for {
			h.mu.Lock()
			n, twice := len(h.versions), 0
			for _, k := range h.versions {
				if k > 1 {
					twice++
				}
			}
			h.mu.Unlock()
			if n >= clients*appends || time.Now().After(deadline) {
				if n != clients*appends || twice > 0 {
					t.Errorf("the /events of weft serve %d heard %d of the %d appends (%d twice)", i, n, clients*appends, twice)
				}
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("two weft serve on one PostgreSQL: %d clients × %d appends, all stored in order, each process's /events heard all %d", clients, appends, clients*appends)
}
