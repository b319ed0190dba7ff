package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"weft/model"
)

// Keys that come in one read (a paste, a slow link) act on the screens
// the keys before them open, whatever the program reads meanwhile: the
// sessions list opens, its filter picks a session, enter opens it, and
// again; the keys meant for the list never reach the thread, where s
// would snip.
func TestKeysTypedAheadInTheSessionsList(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	newThread(t, db, "Average response times", model.NewMessage{Role: model.RoleUser, Content: "how slow is it on average?"})
	newThread(t, db, "Start phoenix deploy", model.NewMessage{Role: model.RoleUser, Content: "start the phoenix deploy"})
	first := newThread(t, db, "Shown first", model.NewMessage{Role: model.RoleUser, Content: "the first thread shown"}, model.NewMessage{Role: model.RoleAssistant, Content: "an answer"})
	s := startScreen(t, TerminalOptions{Width: 110, Height: 30, Env: []string{"TZ=UTC"}}, bin, "--no-mcp", "--db", db, first)
	s.see("the first thread shown")

	// One send-keys: tmux writes them to the terminal at once.
	if err := s.term.SendKeys("Tab", "Average", "Enter", "Tab", "start phoenix", "Enter"); err != nil {
		t.Fatal(err)
	}
	s.see("start the phoenix deploy")
	s.gone("filter ›")
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d", code)
	}
	if out := weftCLI(t, "--db", db, "call", "list_operations", "session_id="+first); strings.Contains(out, "snip") {
		t.Fatalf("the keys snipped the session shown first:\n%s", out)
	}
}
