package relay

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/internal/facetest"
	"weft/ops/listen"
	"weft/ops/mcpserver"
	"weft/ops/reads"
	"weft/store"
	"weft/store/boltstore"
)

// TestRelaySurvivesARestart: a relay follows the weft that holds the file
// across a restart on another port, and serves the file itself once no
// weft holds it; its subscribers hear edits all along.
func TestRelaySurvivesARestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "weft.db")
	open := func() (store.Store, *ops.Service) {
		st, err := boltstore.Open(path, boltstore.Options{Timeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return st, ops.New(st)
	}
	st1, svc1 := open()
	created, err := svc1.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.SessionID
	l1 := listening(t, svc1, listen.Options{Addr: "127.0.0.1:0", AddrFile: listen.AddrFileOf(path)})

	var taken store.Store
	t.Cleanup(func() {
		if taken != nil {
			taken.Close()
		}
	})
	relay, err := relayServerWith(listen.ReadAddrFile(path), Options{
		Rediscover: func() string { return listen.ReadAddrFile(path) },
		// The watch tries the broken stream again soon: how soon is not
		// what this test checks, only that it follows the second weft.
		EventsRetry: 50 * time.Millisecond,
		Takeover: func() (*ops.Service, error) {
			st, err := boltstore.Open(path, boltstore.Options{Timeout: 100 * time.Millisecond})
			if err != nil {
				return nil, err
			}
			taken = st
			return ops.New(st), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := facetest.NewHearing()
	cs, _ := connectAt(t, relay, "relayed", legacyVersion, h.Options())
	uri := mcpserver.URISessions + "/" + sid
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 MCP logging tells clients of others' edits; the SDK has no successor to it
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	appendOne := func(content string) ops.AppendResult {
		t.Helper()
		var res ops.AppendResult
		callOK(t, cs, "append_messages", map[string]any{"session_id": sid, "messages": []map[string]string{{"role": "user", "content": content}}}, &res)
		return res
	}
	appendOne("through the first weft")
	h.Await(t, "the relay's own append", func() bool { return facetest.Count(h.Updated, uri) == 1 })
	// The operator's edit on the holder reaches the relay's clients.
	start, end := 0, 0
	if _, err := svc1.TagMessages(context.Background(), ops.TagArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end}, Tags: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	h.Await(t, "the holder's operator's tag", func() bool {
		return facetest.Count(h.Updated, uri) == 2 && len(h.Logs) == 1 && h.Logs[0]["author"] == "operator"
	})

	// The first weft stops; another starts on another port.
	l1.Close()
	st1.Close()
	st2, svc2 := open()
	l2 := listening(t, svc2, listen.Options{Addr: "127.0.0.1:0", AddrFile: listen.AddrFileOf(path)})
	if l2.URL() == l1.URL() {
		t.Fatalf("the second weft listens where the first did (%s)", l2.URL())
	}
	appendOne("through the second weft")
	// The relay's watch finds the second weft at its next retry; what
	// was written meanwhile it announces as an update of everything.
	h.Await(t, "the update after the break", func() bool { return facetest.Count(h.Updated, uri) >= 3 })
	for i := 0; ; i++ {
		if _, err := svc2.TagMessages(context.Background(), ops.TagArgs{Selection: ops.Selection{SessionID: sid, StartIdx: &start, EndIdx: &end}, Tags: []string{fmt.Sprint("y", i)}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		var heard bool
		h.Locked(func() { heard = len(h.Logs) >= 2 })
		if heard {
			break
		}
		if i == 50 {
			t.Fatal("the relay never heard the second weft's edits")
		}
	}
	var heard int
	h.Locked(func() { heard = len(h.Logs) })

	// That one stops too, and the file is free: the relay opens it.
	l2.Close()
	st2.Close()
	res := appendOne("in the relay itself")
	if taken == nil {
		t.Fatal("the relay did not open the free file")
	}
	if res.Version == 0 {
		t.Fatalf("append in-process: %+v", res)
	}
	var list reads.ListSessionsResult
	callOK(t, cs, "list_sessions", map[string]any{}, &list)
	if list.Total != 1 || list.Sessions[0].MessageCount != 3 {
		t.Fatalf("after the takeover: %+v, want the one session with its 3 messages", list)
	}
	// Its own watch now reads the file's events; its own edits are not
	// logged to it.
	n := h.Heard(uri)
	appendOne("heard in-process")
	h.Await(t, "the edit in-process", func() bool { return facetest.Count(h.Updated, uri) > n })
	h.Quiet(t, "a log of the relay's own edit", func() bool { return len(h.Logs) != heard })
	for _, l := range h.LogsSoFar() {
		if l["author"] != "operator" {
			t.Fatalf("logged %v, want the operators' tags only", l)
		}
	}
}
