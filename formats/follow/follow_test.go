package follow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/formats"
)

// watched runs Watch on file in the background, handing out what it
// reports.
type watched struct {
	updates chan Update
	mu      sync.Mutex
	notes   []string
	stop    func()
	fail    chan error // fn answers the next update with this, when set
}

func watch(t *testing.T, file string, opts Options) *watched {
	t.Helper()
	w := &watched{updates: make(chan Update, 16), fail: make(chan error, 1)}
	if opts.Debounce == 0 {
		opts.Debounce = 20 * time.Millisecond
	}
	if opts.Poll == 0 {
		opts.Poll = 50 * time.Millisecond
	}
	if opts.Settle == 0 {
		opts.Settle = 400 * time.Millisecond
	}
	opts.Notify = func(s string) {
		w.mu.Lock()
		w.notes = append(w.notes, s)
		w.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, file, opts, func(u Update) error {
			select {
			case err := <-w.fail:
				return err
			default:
			}
			u.Data = append([]byte(nil), u.Data...)
			w.updates <- u
			return nil
		})
	}()
	w.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	}
	t.Cleanup(w.stop)
	return w
}

// next waits for the next update.
func (w *watched) next(t *testing.T) Update {
	t.Helper()
	select {
	case u := <-w.updates:
		return u
	case <-time.After(5 * time.Second):
		t.Fatalf("no update within 5 s; notes: %q", w.said())
		return Update{}
	}
}

// none checks that no update comes for a while.
func (w *watched) none(t *testing.T, why string) {
	t.Helper()
	select {
	case u := <-w.updates:
		t.Fatalf("%s: an update came: %q", why, u.Data)
	case <-time.After(300 * time.Millisecond):
	}
}

func (w *watched) said() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.notes...)
}

// waitNote waits until a note containing s was made.
func (w *watched) waitNote(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, n := range w.said() {
			if strings.Contains(n, s) {
				return
			}
		}
	}
	t.Fatalf("no note saying %q; notes: %q", s, w.said())
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

const (
	prompt = `{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"hello"}}` + "\n"
	answer = `{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:01.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}}` + "\n"
	again  = `{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"more"}}` + "\n"
)

// What is appended after Watch starts is handed out as it comes, whole
// lines only: a half-written line waits until it is complete. With file
// events and without (a file system where none come).
func TestWatchFollowsAGrowingFile(t *testing.T) {
	t.Parallel()
	for _, pollOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "events", true: "polling"}[pollOnly], func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "s.jsonl")
			appendTo(t, path, prompt)
			w := watch(t, path, Options{PollOnly: pollOnly})
			if u := w.next(t); string(u.Data) != prompt || u.Format != formats.ClaudeCode || u.Restarted {
				t.Fatalf("first update %+v", u)
			}
			appendTo(t, path, answer[:40])
			w.none(t, "half a line")
			appendTo(t, path, answer[40:])
			if u := w.next(t); string(u.Data) != prompt+answer {
				t.Fatalf("update %q", u.Data)
			}
			appendTo(t, path, again)
			if u := w.next(t); string(u.Data) != prompt+answer+again {
				t.Fatalf("update %q", u.Data)
			}
		})
	}
}

// A response that may still grow (Claude Code writing it a block at a
// time) is held back until what follows shows it complete, or until the
// file has been quiet for Settle.
func TestWatchHoldsAnUnfinishedResponse(t *testing.T) {
	t.Parallel()
	streamed := strings.Replace(answer, `"end_turn"`, "null", 1)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	appendTo(t, path, prompt+streamed)
	start := time.Now()
	w := watch(t, path, Options{Settle: 500 * time.Millisecond})
	if u := w.next(t); string(u.Data) != prompt {
		t.Fatalf("first update %q: the unfinished response is in it", u.Data)
	}
	if u := w.next(t); string(u.Data) != prompt+streamed || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("after %v: %q", time.Since(start), u.Data)
	}
	appendTo(t, path, again)
	if u := w.next(t); string(u.Data) != prompt+streamed+again {
		t.Fatalf("update %q", u.Data)
	}
}

// A file cut short, replaced by another, or removed is said, and read
// again from its start; nothing stops.
func TestWatchTruncatedReplacedRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	appendTo(t, path, prompt+answer)
	w := watch(t, path, Options{})
	w.next(t)

	if err := os.WriteFile(path, []byte(again), 0o600); err != nil { // shorter: truncated in place
		t.Fatal(err)
	}
	w.waitNote(t, "cut short")
	if u := w.next(t); string(u.Data) != again || !u.Restarted {
		t.Fatalf("after truncation: %+v", u)
	}

	other := filepath.Join(dir, "new.jsonl")
	os.WriteFile(other, []byte(prompt+answer+again), 0o600)
	if err := os.Rename(other, path); err != nil { // rotated: a new file in its place
		t.Fatal(err)
	}
	w.waitNote(t, "replaced")
	if u := w.next(t); string(u.Data) != prompt+answer+again || !u.Restarted {
		t.Fatalf("after replacement: %+v", u)
	}

	os.Remove(path)
	w.waitNote(t, "removed")
	appendTo(t, path, prompt)
	if u := w.next(t); string(u.Data) != prompt || !u.Restarted {
		t.Fatalf("after it came back: %+v", u)
	}
}

// A file that is not there yet is waited for; an update fn refuses is
// offered again.
func TestWatchWaitsAndRetries(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "later.jsonl")
	w := watch(t, path, Options{})
	w.waitNote(t, "does not exist yet")
	w.fail <- errors.New("the database is busy")
	appendTo(t, path, prompt)
	w.waitNote(t, "the database is busy")
	if u := w.next(t); string(u.Data) != prompt {
		t.Fatalf("retried update %q", u.Data)
	}
}

// A file whose format cannot be told is said once, and waited on.
func TestWatchUnknownFormat(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.jsonl")
	appendTo(t, path, `{"what":"ever"}`+"\n")
	w := watch(t, path, Options{})
	w.waitNote(t, "format")
	w.none(t, "unknown format")
	if n := len(w.said()); n != 1 {
		t.Errorf("%d notes, want 1: %q", n, w.said())
	}
}

// A file written over in place with more than it had, between two looks
// (an editor saving it), is not taken for a file that grew: it is said,
// and read again from its start.
func TestWatchWrittenOverInPlace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	appendTo(t, path, prompt+answer)
	w := watch(t, path, Options{PollOnly: true})
	w.next(t)
	// One write from the start, of more than the file had: a look sees
	// the file before it or after it, never cut short in between (as it
	// could between a truncation and a write), so the looks may come often.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(again+answer+prompt), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	w.waitNote(t, "written over")
	if u := w.next(t); string(u.Data) != again+answer+prompt || !u.Restarted {
		t.Fatalf("after it was written over: %+v", u)
	}
}
