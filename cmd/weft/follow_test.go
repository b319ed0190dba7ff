package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weft/ops/tools"
	"weft/tui"
)

// ccLine is a Claude Code record of a session being written, complete
// as Claude Code 2.1.330 writes it (stop_reason set).
func ccLine(n int, role, text string) string {
	parent := "null"
	if n > 1 {
		parent = fmt.Sprintf(`"r%d"`, n-1)
	}
	msg := fmt.Sprintf(`{"role":"user","content":%q}`, text)
	if role == "assistant" {
		msg = fmt.Sprintf(`{"id":"msg_%d","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":%q}],"stop_reason":"end_turn"}`, n, text)
	}
	return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"5e551071-0000-4000-8000-000000000001","version":"2.1.330","type":%q,"message":%s,"uuid":"r%d","timestamp":"2026-03-01T10:00:%02d.000Z"}`+"\n", parent, role, msg, n, n)
}

// following is weft import --follow running in the background.
type following struct {
	out, errOut *syncBuffer
	stop        func() error
}

func startFollow(t *testing.T, db string, args ...string) *following {
	t.Helper()
	f := &following{out: &syncBuffer{}, errOut: &syncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--db", db, "import", "--follow"}, args...), f.out, f.errOut)
	}()
	var err error
	stopped := false
	f.stop = func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { f.stop() })
	return f
}

// waitFor waits until the output says s.
func (f *following) waitFor(t *testing.T, out *syncBuffer, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), s) {
			return
		}
	}
	t.Fatalf("the follower never said %q\nstdout:\n%s\nstderr:\n%s", s, f.out.String(), f.errOut.String())
}

func writeFile(t *testing.T, path, s string, flag int) {
	t.Helper()
	fh, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// messageCount is how many messages the database's one session has.
func messageCount(t *testing.T, db string) int {
	t.Helper()
	out, code, err := weft(t, db, "ls", "--json")
	var ls struct {
		Sessions []struct {
			MessageCount int `json:"message_count"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &ls) != nil || len(ls.Sessions) != 1 {
		t.Fatalf("ls (%v):\n%s", err, out)
	}
	return ls.Sessions[0].MessageCount
}

// weft import --follow: a Claude Code session written in steps grows in
// the database as it is written, a line at a time and only whole lines;
// a file cut short is said, and the follower goes on until it is
// stopped, which is no error.
func TestImportFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "f.db")
	path := filepath.Join(dir, "session.jsonl")
	writeFile(t, path, ccLine(1, "user", "hello")+ccLine(2, "assistant", "hi"), os.O_TRUNC)
	f := startFollow(t, db, path)
	f.waitFor(t, f.out, "2 messages")

	third := ccLine(3, "user", "a third message")
	writeFile(t, path, third[:50], os.O_APPEND)
	time.Sleep(600 * time.Millisecond)
	if strings.Contains(f.out.String(), "+") {
		t.Fatalf("half a line was imported:\n%s", f.out.String())
	}
	writeFile(t, path, third[50:]+ccLine(4, "assistant", "and a fourth"), os.O_APPEND)
	f.waitFor(t, f.out, "+2 messages")

	writeFile(t, path, ccLine(1, "user", "hello"), os.O_TRUNC)
	f.waitFor(t, f.errOut, "cut short")
	writeFile(t, path, ccLine(2, "assistant", "hi")+ccLine(3, "user", "a third message")+ccLine(4, "assistant", "and a fourth")+ccLine(5, "user", "fifth"), os.O_APPEND)
	f.waitFor(t, f.out, "+1 message")
	if err := f.stop(); err != nil {
		t.Fatalf("stopping the follower: %v\n%s", err, f.errOut.String())
	}
	if n := messageCount(t, db); n != 5 {
		t.Errorf("%d messages, want 5\n%s", n, f.out.String())
	}
}

// While a weft holds the file, the follower imports through it, batch
// by batch, and the holder's session grows.
func TestImportFollowThroughARunningWeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "held.db")
	path := filepath.Join(dir, "session.jsonl")
	writeFile(t, path, ccLine(1, "user", "hello"), os.O_TRUNC)
	svc := holdDB(t, db, "")
	f := startFollow(t, db, path)
	f.waitFor(t, f.out, "1 message")
	writeFile(t, path, ccLine(2, "assistant", "hi")+ccLine(3, "user", "more"), os.O_APPEND)
	f.waitFor(t, f.out, "+2 messages")
	f.stop()
	info, _, err := svc.View("")
	if err != nil || info.MessageCount != 3 {
		t.Fatalf("the running weft's session: %+v (%v)\n%s%s", info, err, f.out.String(), f.errOut.String())
	}
}

func TestImportFollowRefusals(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "f.db")
	if _, _, code, err := runCLI(db, "import", "--follow", "-"); code != 2 || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("--follow -: exit %d (%v)", code, err)
	}
}

// weft --follow FILE opens the TUI on the session the file is imported
// into and keeps importing into it while the TUI runs, through the
// TUI's own service; the follower stops with the TUI.
func TestTUIFollow(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	path := filepath.Join(dir, "session.jsonl")
	writeFile(t, path, ccLine(1, "user", "hello")+ccLine(2, "assistant", "hi"), os.O_TRUNC)
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	var got tui.Options
	grew := false
	runTUI = func(_ context.Context, svc tools.Desk, opts tui.Options) error {
		got = opts
		writeFile(t, path, ccLine(3, "user", "written while the TUI is open"), os.O_APPEND)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !grew; time.Sleep(20 * time.Millisecond) {
			info, _, err := svc.View(opts.Session)
			grew = err == nil && info.MessageCount == 3
		}
		return nil
	}
	if _, code, err := weft(t, db, "--no-mcp", "--follow", path); code != 0 {
		t.Fatalf("weft --follow: exit %d: %v", code, err)
	}
	if got.Session == "" || !strings.Contains(got.Notice, "following") || !grew {
		t.Fatalf("the TUI got session %q, notice %q; the session grew while it ran: %v", got.Session, got.Notice, grew)
	}
	// Stopped with the TUI: what the file gains now stays out.
	writeFile(t, path, ccLine(4, "assistant", "after the TUI closed"), os.O_APPEND)
	time.Sleep(300 * time.Millisecond)
	if n := messageCount(t, db); n != 3 {
		t.Errorf("%d messages after the TUI closed, want 3", n)
	}
}
