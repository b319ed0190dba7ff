package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/demo"
	"weft/model"
	"weft/ops"
	"weft/ops/tools"
	"weft/tui/dialog"
	"weft/tui/rows"
)

// run executes a command and feeds what it returns back into the model,
// the way the program would.
func run(t testing.TB, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		// The TUI starts no timer but the status message's (below), and
		// cursors do not blink: a command this slow is stuck.
		t.Fatalf("a command did not return in 10 s")
	}
	switch msg.(type) {
	case statusTimerMsg, agentsWatchMsg:
		return // the timer that clears a message, the agents' watch: not wanted in tests
	}
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			run(t, m, c)
		}
		return
	}
	if msg == nil {
		return
	}
	_, next := m.Update(msg)
	run(t, m, next)
}

func demoModel(t *testing.T, w, h int) (*Model, *ops.Service) {
	t.Helper()
	svc := newService(t)
	if _, err := demo.Seed(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	return openModel(t, svc, Options{Theme: "dark"}, "", w, h), svc
}

func press(t testing.TB, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "ctrl+d":
			msg = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
		case "ctrl+u":
			msg = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
		case "esc":
			msg = keyEsc
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		_, cmd := m.Update(msg)
		run(t, m, cmd)
	}
}

func screen(m *Model) string { return ansi.Strip(m.render()) }

func TestOpensAtTheLatestMessage(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 100, 30)
	s := screen(m)
	if !strings.Contains(s, "Rollout is at 100%") && !strings.Contains(s, "The limiter is at 100%") {
		t.Fatalf("first screen is not the end of the thread:\n%s", s)
	}
	if lines := strings.Count(s, "\n") + 1; lines != 30 {
		t.Errorf("%d lines, want 30", lines)
	}
	if !strings.Contains(s, "Rate limiter for the API gateway") || !strings.Contains(s, "tokens") {
		t.Errorf("status bar:\n%s", s)
	}
}

func TestNavigateAndExpandMarker(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 100, 30)
	press(t, m, "g")
	s := screen(m)
	if !strings.Contains(s, "▸ digest of 10 messages by claude-code") {
		t.Fatalf("top of the thread has no digest marker:\n%s", s)
	}
	press(t, m, "enter")
	s = screen(m)
	if !strings.Contains(s, "▾ digest of 10 messages") || !strings.Contains(s, "Morning! I want to add rate limiting") {
		t.Fatalf("expanded marker does not show the originals:\n%s", s)
	}
	press(t, m, "enter")
	if s = screen(m); strings.Contains(s, "Morning! I want to add rate limiting") {
		t.Fatalf("collapsed marker still shows the originals:\n%s", s)
	}
	press(t, m, "j", "j", "ctrl+d", "ctrl+u", "G")
	if m.cursor != m.rows.Len()-1 {
		t.Errorf("G: cursor %d, want %d", m.cursor, m.rows.Len()-1)
	}
}

func TestLiveEditKeepsCursor(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 100, 30)
	press(t, m, "g", "j", "j", "j", "j")
	before := m.view.ID(m.view.Items[m.rows.At(m.cursor).Item])
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	start, end := 0, 1
	if _, err := svc.SnipMessages(ctx, ops.SnipArgs{Selection: ops.Selection{StartIdx: &start, EndIdx: &end}}); err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(eventMsg(ops.Event{SessionID: m.sid, What: "snip of 0–1", Author: "claude-code"}))
	run(t, m, cmd)
	after := m.view.ID(m.view.Items[m.rows.At(m.cursor).Item])
	if before != after {
		t.Errorf("cursor moved from %s to %s", before, after)
	}
	if !strings.Contains(screen(m), "snip of 0–1 by claude-code") {
		t.Errorf("the edit was not announced:\n%s", screen(m))
	}
}

func typeText(t *testing.T, m *Model, s string) {
	t.Helper()
	for _, r := range s {
		var msg tea.KeyPressMsg
		switch r {
		case '\n':
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case ' ':
			msg = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		default:
			msg = tea.KeyPressMsg{Code: r, Text: string(r)}
		}
		_, cmd := m.Update(msg)
		run(t, m, cmd)
	}
}

func send(t testing.TB, m *Model, msg tea.KeyPressMsg) {
	t.Helper()
	_, cmd := m.Update(msg)
	run(t, m, cmd)
}

var (
	keyEsc   = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyEnter = tea.KeyPressMsg{Code: tea.KeyEnter}
	keySave  = tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	keyRedo  = tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
)

func lastOp(t *testing.T, svc *ops.Service, sid string) model.Op {
	t.Helper()
	list, err := svc.Operations(sid)
	if err != nil || len(list) == 0 {
		t.Fatalf("no operations (%v)", err)
	}
	return list[len(list)-1]
}

func TestEditsByKeyboard(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 100, 30)
	press(t, m, "g", "j") // the first stored message after the digest marker
	start := m.rows.At(m.cursor).Item

	// v j j d: digest three items.
	press(t, m, "v", "j", "j", "d")
	if m.dialogs.Front() == nil {
		t.Fatal("d opened no dialog")
	}
	typeText(t, m, "Design: token bucket.")
	send(t, m, keySave)
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpDigest || op.Payload.Summary != "Design: token bucket." || len(op.Targets) != 3 || op.Author != "operator" {
		t.Fatalf("digest: %+v", op)
	}
	if !strings.Contains(screen(m), "digested") {
		t.Errorf("no confirmation:\n%s", screen(m))
	}

	// u undoes it, ctrl+r redoes it.
	press(t, m, "u")
	if op2 := lastOp(t, svc, m.sid); op2.ID != op.ID || !op2.Reverted() {
		t.Fatalf("u did not revert the digest: %+v", op2)
	}
	send(t, m, keyRedo)
	if op2 := lastOp(t, svc, m.sid); op2.Reverted() {
		t.Fatalf("ctrl+r did not restore the digest")
	}

	// t tags the cursor's item.
	press(t, m, "G", "t")
	typeText(t, m, "ramp, final")
	send(t, m, keyEnter)
	if op := lastOp(t, svc, m.sid); op.Type != model.OpTag || strings.Join(op.Payload.Tags, ",") != "ramp,final" {
		t.Fatalf("tag: %+v", op)
	}

	// s snips, i inserts, r revises.
	press(t, m, "k", "s")
	if op := lastOp(t, svc, m.sid); op.Type != model.OpSnip || len(op.Targets) != 1 {
		t.Fatalf("snip: %+v", op)
	}
	press(t, m, "g", "j", "i")
	typeText(t, m, "note: inserted by hand")
	send(t, m, keySave) // "--- assistant" then the note: the prefilled role stays
	if op := lastOp(t, svc, m.sid); op.Type != model.OpInsert || op.Payload.Messages[0].Content != "note: inserted by hand" {
		t.Fatalf("insert: %+v", op)
	}
	press(t, m, "r")
	if m.dialogs.Front() == nil {
		t.Fatal("r opened no dialog")
	}
	typeText(t, m, " (revised)")
	send(t, m, keySave)
	if op := lastOp(t, svc, m.sid); op.Type != model.OpRevise || len(op.Payload.Messages) != 1 {
		t.Fatalf("revise: %+v", op)
	}

	// J J enter: one resequence moving the cursor's item down two places.
	m.cursor = m.rows.RowOfItem(30)
	press(t, m, "J", "J")
	if !strings.Contains(screen(m), "down by 2") {
		t.Fatalf("no move hint:\n%s", screen(m))
	}
	send(t, m, keyEnter)
	if op := lastOp(t, svc, m.sid); op.Type != model.OpResequence || len(op.Targets) != 3 {
		t.Fatalf("move: %+v", op)
	}
	_ = start

	// esc in a dialog changes nothing.
	n := len(mustOps(t, svc, m.sid))
	press(t, m, "d")
	send(t, m, keyEsc)
	if m.dialogs.Front() != nil || len(mustOps(t, svc, m.sid)) != n {
		t.Fatal("esc did not cancel the digest")
	}
}

func mustOps(t *testing.T, svc *ops.Service, sid string) []model.Op {
	t.Helper()
	list, err := svc.Operations(sid)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestRefusedEditShowsError(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 100, 30)
	press(t, m, "g") // the marker row: not a message
	n := len(mustOps(t, svc, m.sid))
	press(t, m, "s")
	if !strings.Contains(screen(m), "put the cursor on a message") || len(mustOps(t, svc, m.sid)) != n {
		t.Fatalf("snip on a marker:\n%s", screen(m))
	}
	press(t, m, "j", "d")
	send(t, m, keySave) // an empty summary is refused by the service
	if !strings.Contains(screen(m), "summary is empty") || len(mustOps(t, svc, m.sid)) != n {
		t.Fatalf("empty digest:\n%s", screen(m))
	}
}

func TestOperationsPanel(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	press(t, m, "o")
	s := screen(m)
	for _, want := range []string{"Operations (4)", "digest", "claude-code", "snip", "#design on 8 items"} {
		if !strings.Contains(s, want) {
			t.Fatalf("panel does not show %q:\n%s", want, s)
		}
	}
	press(t, m, "j")
	send(t, m, tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}) // the digest: switch it off
	list := mustOps(t, svc, m.sid)
	if list[1].Type != model.OpDigest || list[1].Active {
		t.Fatalf("space did not switch the digest off: %+v", list[1])
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	press(t, m, "x", "y") // x asks first
	if list = mustOps(t, svc, m.sid); !list[1].Reverted() {
		t.Fatalf("x did not revert: %+v", list[1])
	}
	press(t, m, "j") // the snip
	send(t, m, keyEnter)
	if m.dialogs.Front() != nil || m.rows.At(m.cursor).Kind != rows.Marker || m.view.Markers[m.rows.At(m.cursor).Marker].OpType != model.OpSnip {
		t.Fatalf("enter did not jump to the snip marker")
	}
}

func TestSearchJumpsAndSteps(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	press(t, m, "/")
	typeText(t, m, "retryafter")
	s := screen(m)
	if !strings.Contains(s, "matches") || len(m.search.Hits()) == 0 {
		t.Fatalf("no results:\n%s", s)
	}
	first := m.search.Hits()[0]
	if !strings.Contains(strings.ToLower(first.Line), "retry") {
		t.Fatalf("best hit %q", first.Line)
	}
	send(t, m, keyEnter)
	if m.search.IsOpen() || m.rows.At(m.cursor).Item != first.Index {
		t.Fatalf("enter did not jump to item %d", first.Index)
	}
	at := m.rows.At(m.cursor).Item
	press(t, m, "n")
	if next := m.rows.At(m.cursor).Item; len(m.search.Hits()) > 1 && next == at {
		t.Errorf("n did not move")
	}
	press(t, m, "N")
	if back := m.rows.At(m.cursor).Item; back != at {
		t.Errorf("N went to %d, want %d", back, at)
	}
}

func TestTimelineStripAndJump(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	strip := ansi.Strip(m.timelineStrip())
	if !strings.Contains(strip, "Mar 02") || !strings.Contains(strip, "Mar 05") || !strings.Contains(strip, "┃") {
		t.Fatalf("strip %q", strip)
	}
	press(t, m, "T")
	typeText(t, m, "2026-03-04 10:00Z")
	send(t, m, keyEnter)
	rw := m.rows.At(m.cursor)
	if rw.Kind != rows.Item {
		t.Fatalf("T landed on row kind %d", rw.Kind)
	}
	at, ok := m.cursorTime()
	if !ok || at.Before(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)) || at.After(time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("T 2026-03-04 10:00 landed at %v", at)
	}
	// A jump off the screen puts the target a third of the way down, so
	// what follows it shows.
	above := 0
	for r := m.top; r < m.cursor; r++ {
		above += len(m.rowLines(r))
	}
	if h := m.threadHeight(); above < h/4 || above > h/2 {
		t.Errorf("after the jump %d of %d lines stand above the target", above, h)
	}
	press(t, m, "T")
	typeText(t, m, "whenever")
	send(t, m, keyEnter)
	if !strings.Contains(screen(m), `cannot read "whenever" as a time`) {
		t.Fatalf("a bad time is not explained:\n%s", screen(m))
	}
}

func TestSessionsList(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	other, err := svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "Another thread"})
	if err != nil {
		t.Fatal(err)
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	if !strings.Contains(screen(m), "Sessions (2)") {
		t.Fatalf("tab did not list the sessions:\n%s", screen(m))
	}
	typeText(t, m, "anoth")
	s := screen(m)
	if !strings.Contains(s, "Another thread") || strings.Contains(s, "Rate limiter for the API") && strings.Contains(s, "▸ Rate") {
		t.Fatalf("filter:\n%s", s)
	}
	send(t, m, keyEnter)
	if m.sid != other.SessionID || !strings.Contains(screen(m), "this session has no messages yet") {
		t.Fatalf("enter did not open the other session:\n%s", screen(m))
	}
}

func TestOperationsPanelFollowsAgentsEdits(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 100, 30)
	// Before the list arrives the panel claims nothing.
	m.Update(tea.KeyPressMsg{Code: 'o', Text: "o"})
	if s := screen(m); !strings.Contains(s, "loading…") || strings.Contains(s, "no operations yet") {
		t.Fatalf("panel before its list arrived:\n%s", s)
	}
	press(t, m, "esc", "o", "G")
	p := m.dialogs.Front().(*dialog.Operations)
	cur, _ := p.Current()
	n, atOp := p.Len(), cur.OperationID
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	start, end := 3, 4
	if _, err := svc.SnipMessages(ctx, ops.SnipArgs{Selection: ops.Selection{StartIdx: &start, EndIdx: &end}}); err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(eventMsg(ops.Event{SessionID: m.sid, What: "snip of 3–4", Author: "claude-code"}))
	run(t, m, cmd)
	if p.Len() != n+1 {
		t.Fatalf("panel lists %d operations after an agent's edit, want %d", p.Len(), n+1)
	}
	if got, _ := p.Current(); got.OperationID != atOp {
		t.Errorf("panel cursor moved from %s to %s", atOp, got.OperationID)
	}
	if s := screen(m); !strings.Contains(s, fmt.Sprintf("Operations (%d)", n+1)) {
		t.Errorf("panel title after an agent's edit:\n%s", s)
	}
}

func TestNewFileWaitsForASession(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	m := New(tools.Local{Service: svc}, Options{Theme: "dark"})
	run(t, m, m.loadView(""))
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab}) // nothing to list yet, and no panic
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, k := range []string{"j", "k", "g", "G", "v", "d", "s", "/", "T", "o", "R", "u", "enter"} {
		press(t, m, k)
	}
	if s := screen(m); !strings.Contains(s, "No sessions in this file yet") || !strings.Contains(s, "weft import FILE") {
		t.Fatalf("a new file's screen:\n%s", s)
	}
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "Made by an agent"})
	if err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(eventMsg(ops.Event{SessionID: res.SessionID, Kind: ops.EventSessionCreated, What: "session created", Author: "claude-code"}))
	run(t, m, cmd)
	if s := screen(m); !strings.Contains(s, "Made by an agent") || strings.Contains(s, "No sessions") {
		t.Fatalf("the agent's session did not open:\n%s", s)
	}
	// An empty session answers every key without a panic.
	for _, k := range []string{"j", "k", "g", "G", "v", "j", "t", "esc", "d", "esc", "s", "r", "esc", "J", "K", "esc", "/", "x", "esc", "T", "esc", "o", "esc", "R", "R", "u", "enter", "?", "?", "ctrl+d", "ctrl+u"} {
		press(t, m, k)
	}
	if s := screen(m); !strings.Contains(s, "no messages yet") {
		t.Errorf("an empty session's screen:\n%s", s)
	}
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd == nil {
		t.Error("q does not quit")
	}
}

// Enter pressed before the hits of what was typed last have come goes to
// the best of those, not to an older query's list still on screen.
func TestEnterBeforeTheLatestHitsWaitsForThem(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	press(t, m, "/")
	typeText(t, m, "retry")
	old := m.search.Hits()
	if len(old) == 0 {
		t.Fatal("no hits for retry")
	}
	// "retryafter" typed, its search not back yet: the list shows retry's.
	m.search.SetValue("retryafter")
	cmd := m.runSearch()
	send(t, m, keyEnter)
	if m.search.IsOpen() {
		t.Fatal("enter left the search open")
	}
	if m.rows.At(m.cursor).Item == old[0].Index && old[0].Index != 0 {
		t.Fatalf("enter went to the older query's best hit (item %d)", old[0].Index)
	}
	run(t, m, cmd) // the hits for retryafter come
	best := m.search.Hits()[0]
	if !strings.Contains(strings.ToLower(best.Line), "retryafter") && !strings.Contains(strings.ToLower(best.Line), "retry-after") {
		t.Logf("best line %q", best.Line)
	}
	if got := m.rows.At(m.cursor).Item; got != best.Index {
		t.Fatalf("after the hits came the cursor is on %d, want the best hit %d", got, best.Index)
	}
}
