package tui

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"weft/model"
)

// A bug behind an edit is a sentence on the status bar, not the Go
// runtime's text; the panic and its stack go to the service's log (the
// TUI's log file).
func TestAnEditThatPanicsIsSaidInWords(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	svc := newService(t)
	sid := newSession(t, svc, "s", []model.NewMessage{{Role: model.RoleUser, Content: "one"}, {Role: model.RoleAssistant, Content: "two"}})
	m := openModel(t, svc, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))}, sid, 80, 24)
	cmd := m.editFrom(nil, m.pick(0, 0), "tag", func(context.Context, editTarget) error {
		var b []byte
		n := 1048583
		_ = b[:n]
		return nil
	})
	done, ok := cmd().(editDoneMsg)
	if !ok || done.err == nil {
		t.Fatalf("the edit's command gave %#v, want a refusal", done)
	}
	for _, internal := range []string{"runtime error", "out of range", "1048583"} {
		if strings.Contains(done.err.Error(), internal) {
			t.Errorf("the status bar shows Go's own text %q: %v", internal, done.err)
		}
	}
	if !strings.Contains(log.String(), "1048583") || !strings.Contains(log.String(), "panic_test.go") {
		t.Errorf("the log does not hold the panic and its stack:\n%s", log.String())
	}
}
