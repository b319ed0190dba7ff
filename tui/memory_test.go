package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops/memory"
)

// A session kept by a memory policy says so in the status bar: what it
// holds, what is sent, and how many summaries stand for the rest.
func TestStatusBarShowsTheMemoryPolicy(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	sid := newSession(t, svc, "limiter", limiterTurns(12))
	m := openModel(t, svc, Options{}, sid, 160, 30)
	if bar := ansi.Strip(m.statusBar()); strings.Contains(bar, "memory") {
		t.Fatalf("no policy, yet the bar says memory: %q", bar)
	}
	if _, err := memory.SetMemoryPolicy(svc, context.Background(), memory.SetMemoryPolicyArgs{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	run(t, m, m.loadView(sid))
	bar := ansi.Strip(m.statusBar())
	want := fmt.Sprintf("memory %d → %d tokens, 1 summary", m.view.RawTokens, m.view.Tokens)
	if !strings.Contains(bar, want) || m.view.Tokens >= m.view.RawTokens {
		t.Errorf("status bar %q, want %q", bar, want)
	}
}

// limiterTurns is n turns of a question and its answer.
func limiterTurns(n int) []model.NewMessage {
	var msgs []model.NewMessage
	for k := range n {
		msgs = append(msgs, model.NewMessage{Role: model.RoleUser, Content: fmt.Sprintf("Question %d about the limiter?", k)},
			model.NewMessage{Role: model.RoleAssistant, Content: fmt.Sprintf("Answer %d: the bucket refills.", k)})
	}
	return msgs
}
