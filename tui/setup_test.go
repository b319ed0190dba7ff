package tui

import (
	"context"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
	"weft/ops/tools"
	"weft/store/boltstore"
)

// The tests' fixtures share their setup: a new file, a session with the
// messages a test needs, and the TUI open on it at a size.

// newService opens a new file in the test's temporary folder and a
// service on it; the file is closed when the test ends.
func newService(t testing.TB, opts ...ops.Option) *ops.Service {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "test.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return ops.New(st, opts...)
}

// newSession makes a session titled title holding msgs and returns its ID.
func newSession(t testing.TB, svc *ops.Service, title string, msgs []model.NewMessage) string {
	t.Helper()
	ctx := context.Background()
	res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: res.SessionID, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	return res.SessionID
}

// openModel opens the TUI with opts on session sid (the latest for "")
// and sizes it w×h, as the program does at its start.
func openModel(t testing.TB, svc *ops.Service, opts Options, sid string, w, h int) *Model {
	t.Helper()
	m := New(tools.Local{Service: svc}, opts)
	run(t, m, m.loadView(sid))
	_, cmd := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	run(t, m, cmd)
	return m
}
