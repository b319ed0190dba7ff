package tui

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"weft/formats/claudecode"
	"weft/ops"
	"weft/ops/ingest"
)

// followLine is a Claude Code record of a session being written.
func followLine(n int, role, text string) string {
	parent := "null"
	if n > 1 {
		parent = fmt.Sprintf(`"r%d"`, n-1)
	}
	msg := fmt.Sprintf(`{"role":"user","content":%q}`, text)
	if role == "assistant" {
		msg = fmt.Sprintf(`{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":%q}],"stop_reason":"end_turn"}`, n, text)
	}
	return fmt.Sprintf(`{"parentUuid":%s,"sessionId":"5e551071-0000-4000-8000-000000000001","type":%q,"message":%s,"uuid":"r%d","timestamp":"2026-03-01T10:00:%02d.000Z"}`+"\n", parent, role, msg, n, n)
}

// importTranscript imports a Claude Code session file as it is now, as
// weft import --follow does at each batch: the whole file again.
func importTranscript(t *testing.T, svc *ops.Service, data string) string {
	t.Helper()
	im := ingest.New(context.Background(), svc, ingest.Options{})
	if _, err := claudecode.Read(bytes.NewReader([]byte(data)), im); err != nil {
		t.Fatal(err)
	}
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	return im.Sessions[0].SessionID
}

// A followed session, open in the TUI, shows what the transcript gains
// as each batch lands: the follower's import is a write like any other,
// and the TUI follows the service's events.
func TestFollowedSessionGrowsLive(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	file := followLine(1, "user", "Follow me") + followLine(2, "assistant", "The first answer")
	sid := importTranscript(t, svc, file)
	announced := events(t, svc)
	m := openModel(t, svc, Options{Theme: "dark", Session: sid}, sid, 100, 30)
	if s := screen(m); !strings.Contains(s, "The first answer") {
		t.Fatalf("the session is not shown:\n%s", s)
	}

	file += followLine(3, "user", "A question written later") + followLine(4, "assistant", "An answer that lands live")
	if again := importTranscript(t, svc, file); again != sid {
		t.Fatalf("the grown file went into session %s, not %s", again, sid)
	}
	evs := announced()
	if len(evs) == 0 {
		t.Fatal("the batch announced nothing")
	}
	deliver(t, m, evs)
	press(t, m, "G")
	if s := screen(m); !strings.Contains(s, "An answer that lands live") || !strings.Contains(s, "A question written later") {
		t.Errorf("the new messages do not show:\n%s", s)
	}
}
