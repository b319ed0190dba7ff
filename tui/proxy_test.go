package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"weft/ops/proxy"
)

// A conversation going through the context proxy shows in the TUI as it
// goes: each request is announced with its raw → sent tokens, in the
// session open and in others, and its messages land in the thread.
func TestProxiedRequestsShowLive(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 120, 30)
	announced := events(t, svc)
	demoSession := m.sid
	ctx := context.Background()
	engine := proxy.EngineOf(svc)
	send := func(msgs string) proxy.Turn {
		t.Helper()
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(msgs), &raw); err != nil {
			t.Fatal(err)
		}
		turn, err := engine.Take(ctx, proxy.Request{API: proxy.Anthropic, Messages: raw})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
		deliver(t, m, announced())
		return turn
	}

	// A new conversation, while the demo's session is open: a notice
	// names it.
	turn := send(`[{"role":"user","content":"Why do bursts pass the limiter?"}]`)
	if s := screen(m); !strings.Contains(s, "Why do bursts pass the limiter?") || !strings.Contains(s, "tokens sent by proxy") {
		t.Errorf("no notice of the proxied session:\n%s", s)
	}

	// Opened, its next request shows in the thread, with its tokens.
	run(t, m, m.openSession(turn.SessionID))
	if m.sid == demoSession {
		t.Fatal("the proxied session did not open")
	}
	send(`[{"role":"user","content":"Why do bursts pass the limiter?"},{"role":"assistant","content":"The refill reads the wall clock."},{"role":"user","content":"Use the monotonic clock then."}]`)
	s := screen(m)
	if !strings.Contains(s, "Use the monotonic clock then.") || !strings.Contains(s, "2 messages new") || !strings.Contains(s, "tokens sent") {
		t.Errorf("the request does not show in the open thread:\n%s", s)
	}
}
