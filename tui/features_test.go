package tui

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/model"
	"weft/ops"
	"weft/tui/dialog"
	"weft/tui/handoff"
	"weft/tui/rows"
)

// collect runs a command as run does, feeding what it returns back into
// the model, and returns every message it saw: the clipboard's, the
// suspend, a process to run, which the model itself ignores.
func collect(t *testing.T, m *Model, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	if cmd == nil {
		return nil
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil, statusTimerMsg, agentsWatchMsg:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, collect(t, m, c)...)
		}
		return out
	}
	_, next := m.Update(msg)
	return append([]tea.Msg{msg}, collect(t, m, next)...)
}

// pressCollect presses a key and returns every message that follows.
func pressCollect(t *testing.T, m *Model, k tea.KeyPressMsg) []tea.Msg {
	t.Helper()
	_, cmd := m.Update(k)
	return collect(t, m, cmd)
}

// clipboard is the text a set-clipboard message among msgs carries.
func clipboard(msgs []tea.Msg) (string, bool) {
	for _, msg := range msgs {
		// tea.SetClipboard's message type is unexported: it is a string
		// named setClipboardMsg.
		if v := reflect.ValueOf(msg); v.Kind() == reflect.String && strings.HasSuffix(v.Type().Name(), "setClipboardMsg") {
			return v.String(), true
		}
	}
	return "", false
}

func keyText(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }

func TestCopyPutsTheMessagesOnTheClipboard(t *testing.T) {
	t.Parallel()
	m, _ := plainThread(t, 12)
	press(t, m, "g", "j", "j") // m3
	text, ok := clipboard(pressCollect(t, m, keyText("y")))
	if !ok || text != "--- user\nmessage 3\n" {
		t.Fatalf("y put %q (%v) on the clipboard", text, ok)
	}
	if !strings.Contains(screen(m), "copied 1 message, 19 bytes") {
		t.Errorf("y did not say what it copied:\n%s", lastLine(screen(m)))
	}
	// A range: one block a message, as the revise dialog writes them.
	press(t, m, "v", "j", "j")
	text, _ = clipboard(pressCollect(t, m, keyText("y")))
	if want := "--- user\nmessage 3\n--- user\nmessage 4\n--- user\nmessage 5\n"; text != want {
		t.Fatalf("y on a range put %q, want %q", text, want)
	}
	if !strings.Contains(screen(m), "copied 3 messages, 57 bytes") {
		t.Errorf("y on a range said:\n%s", lastLine(screen(m)))
	}
}

func TestCopySaysItsSizeInKilobytes(t *testing.T) {
	t.Parallel()
	if got := byteSize(1234); got != "1.2 kB" {
		t.Errorf("byteSize(1234) = %q", got)
	}
	if got := byteSize(3_400_000); got != "3.4 MB" {
		t.Errorf("byteSize(3.4e6) = %q", got)
	}
}

func TestCopyOnAMarkerSaysWhy(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 100, 30)
	press(t, m, "g") // the digest's marker
	if _, ok := clipboard(pressCollect(t, m, keyText("y"))); ok {
		t.Fatal("y on a marker copied something")
	}
	if !m.statusErr || !strings.Contains(m.status, "a marker") {
		t.Errorf("y on a marker said %q", m.status)
	}
}

func TestPagerGetsTheMessageOnAFileAndCtrlZSuspends(t *testing.T) {
	t.Parallel()
	m, _ := plainThread(t, 5)
	m.opts.Pager = "less -R"
	press(t, m, "g")
	var file handoff.File
	var exec tea.Msg
	for _, msg := range pressCollect(t, m, keyText("p")) {
		switch msg := msg.(type) {
		case handoff.File:
			file = msg
		default:
			if strings.HasSuffix(fmt.Sprintf("%T", msg), "execMsg") {
				exec = msg
			}
		}
	}
	if file.Path() == "" || file.Command() != "less -R" || exec == nil {
		t.Fatalf("p: file %+v, exec %v", file, exec)
	}
	b, err := os.ReadFile(file.Path())
	os.Remove(file.Path())
	if err != nil || string(b) != "--- user\nmessage 1\n" {
		t.Fatalf("the pager's file holds %q (%v)", b, err)
	}
	msgs := pressCollect(t, m, tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl})
	if len(msgs) != 1 || msgs[0] != (tea.SuspendMsg{}) {
		t.Fatalf("ctrl+z sent %v", msgs)
	}
}

// click sends a left click at screen line y.
func click(t *testing.T, m *Model, y int) {
	t.Helper()
	_, cmd := m.Update(tea.MouseClickMsg{X: 10, Y: y, Button: tea.MouseLeft})
	run(t, m, cmd)
}

// screenLineOf is the screen line that shows text, or -1.
func screenLineOf(m *Model, text string) int {
	for i, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, text) {
			return i
		}
	}
	return -1
}

func TestClickSelectsAndExpands(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 100, 30)
	press(t, m, "g")
	if m.rows.At(m.cursor).Kind != rows.Marker {
		t.Fatal("the thread does not start with a marker")
	}
	// A click on a message's row puts the cursor on it.
	y := screenLineOf(m, " m11")
	if y < 0 {
		t.Fatalf("m11 is not on the screen:\n%s", screen(m))
	}
	click(t, m, y)
	if id := cursorID(m); id != "m11" {
		t.Fatalf("the click on m11's header put the cursor on %q", id)
	}
	// A click on the marker expands it, as enter does.
	click(t, m, screenLineOf(m, "▸ digest of 10 messages"))
	if !strings.Contains(screen(m), "▾ digest of 10 messages") || m.rows.At(m.cursor).Kind != rows.Marker {
		t.Fatalf("a click on the marker did not expand it:\n%s", screen(m))
	}
	// Clicks off the thread (the timeline strip, the status bar) do
	// nothing.
	was := m.cursor
	click(t, m, 0)
	click(t, m, m.height-2)
	if m.cursor != was {
		t.Errorf("a click off the thread moved the cursor from %d to %d", was, m.cursor)
	}
}

func TestClickOnAFoldUnfoldsTheMessage(t *testing.T) {
	t.Parallel()
	m, svc := plainThread(t, 3)
	long := strings.Repeat("a line\n", 30)
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: m.sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: long}, {Role: model.RoleUser, Content: "after"}}})
		return err
	})
	press(t, m, "g")
	y := screenLineOf(m, "more lines (enter)")
	if y < 0 {
		t.Fatalf("no fold on the screen:\n%s", screen(m))
	}
	click(t, m, y)
	if id := cursorID(m); id != "m4" || !m.open["m4"] {
		t.Fatalf("a click on the fold: cursor on %q, unfolded %v", id, m.open["m4"])
	}
	// A second click on the row the cursor is on folds it again.
	click(t, m, screenLineOf(m, " m4"))
	if m.open["m4"] {
		t.Error("a click on the cursor's row did not fold it")
	}
}

func TestViewAsksForTheMouse(t *testing.T) {
	t.Parallel()
	m, _ := plainThread(t, 3)
	if v := m.View(); v.MouseMode != tea.MouseModeCellMotion {
		t.Errorf("the view's mouse mode is %v", v.MouseMode)
	}
}

func TestExactSearchMarksHitsInTheThreadAndCountsThem(t *testing.T) {
	t.Parallel()
	m, _ := plainThread(t, 30)
	press(t, m, "/")
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	if !m.search.Exact() || !strings.Contains(screen(m), "ctrl+s fuzzy") {
		t.Fatalf("ctrl+s did not switch to the exact mode:\n%s", screen(m))
	}
	typeText(t, m, "message 2")
	// Exact: message 2 and 20–29, in thread order.
	if len(m.search.Hits()) != 11 || m.search.Hits()[0].Index != 1 || m.search.Hits()[1].Index != 19 {
		t.Fatalf("exact hits: %+v", m.search.Hits())
	}
	if !strings.Contains(screen(m), "exact: 11 matches") {
		t.Errorf("the panel does not count the exact hits:\n%s", screen(m))
	}
	send(t, m, keyEsc)
	press(t, m, "g", "n", "n", "n")
	if id := cursorID(m); id != "m21" {
		t.Fatalf("n n n from the top went to %q", id)
	}
	if s := lineWith(screen(m), "tokens"); !strings.Contains(s, "match 3/11") {
		t.Errorf("the status bar does not say the hit's place:\n%s", s)
	}
	// The hits on the screen are marked, in the thread itself.
	mark := m.styles.Search.Match.Render("message 2")
	if !strings.Contains(m.render(), mark) {
		t.Errorf("no hit marked in the thread")
	}
	// Back to fuzzy: the same query, ranked.
	press(t, m, "/")
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	if m.search.Exact() || m.search.HitsExact() {
		t.Fatal("ctrl+s did not switch back to fuzzy")
	}
	send(t, m, keyEsc)
	press(t, m, "k")
	if strings.Contains(lineWith(screen(m), "tokens"), "match") {
		t.Error("the hit's place stays on the status bar off the hit")
	}
}

func TestFuzzyHitsAreMarkedInTheThread(t *testing.T) {
	t.Parallel()
	m, _ := plainThread(t, 30)
	searchFor(t, m, "mssg 17")
	send(t, m, keyEnter)
	if id := cursorID(m); id != "m17" {
		t.Fatalf("enter went to %q", id)
	}
	// The matched characters of the hit's line, each marked.
	var line string
	for _, l := range strings.Split(m.render(), "\n") {
		if strings.Contains(ansi.Strip(l), "message 17") {
			line = l
		}
	}
	for _, c := range []string{"m", "s", "g", "1", "7"} {
		if !strings.Contains(line, m.styles.Search.Match.Render(c)) {
			t.Errorf("%q of the fuzzy hit is not marked: %q", c, line)
		}
	}
	if strings.Contains(line, m.styles.Search.Match.Render("a")) {
		t.Errorf("a character the query does not have is marked: %q", line)
	}
	if !strings.Contains(screen(m), "match 1/") {
		t.Errorf("the status bar does not place the hit:\n%s", lastLines(screen(m), 2))
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(len(l)-n, 0):], "\n")
}

// roleThread is a session of 20 messages of alternating roles (user
// first), m2 and m3 tagged db.
func roleThread(t *testing.T) (*Model, *ops.Service) {
	t.Helper()
	svc := newService(t)
	var msgs []model.NewMessage
	for i := 1; i <= 20; i++ {
		role := model.RoleUser
		if i%2 == 0 {
			role = model.RoleAssistant
		}
		msgs = append(msgs, model.NewMessage{Role: role, Content: fmt.Sprintf("turn %d", i)})
	}
	sid := newSession(t, svc, "Roles", msgs)
	if _, err := svc.TagMessages(context.Background(), ops.TagArgs{Selection: ops.Selection{SessionID: sid, IDs: []model.ItemID{"m2", "m3"}}, Tags: []string{"db"}}); err != nil {
		t.Fatal(err)
	}
	return openModel(t, svc, Options{Theme: "dark"}, sid, 100, 40), svc
}

func TestFilterShowsOnlyWhatItPicks(t *testing.T) {
	t.Parallel()
	m, svc := roleThread(t)
	press(t, m, "F")
	if m.dialogs.Front() == nil || !strings.Contains(screen(m), "role:user · tag:db · author:claude") {
		t.Fatalf("F opened no dialog saying the syntax:\n%s", screen(m))
	}
	typeText(t, m, "role:assistant")
	_, cmd := m.Update(keyEnter)
	if m.rows.Len() != 20 {
		t.Fatal("the filter picked the items in Update")
	}
	run(t, m, cmd)
	if m.rows.Len() != 10 {
		t.Fatalf("role:assistant shows %d rows, want 10", m.rows.Len())
	}
	for r := range m.rows.Len() {
		if rw := m.rows.At(r); rw.Kind != rows.Item || rw.Item%2 != 1 {
			t.Fatalf("row %d shows %+v", r, rw)
		}
	}
	if s := screen(m); !strings.Contains(s, "filter role:assistant: 10/20") || strings.Contains(s, "turn 1\n") {
		t.Errorf("the screen with the filter:\n%s", s)
	}
	// A range would take in what the filter hides between its rows.
	if m.keys.Select.Enabled() {
		t.Error("v stays on under a filter")
	}
	press(t, m, "v")
	if m.anchor >= 0 || !strings.Contains(m.status, "v does nothing while a filter is on (esc clears it)") {
		t.Errorf("v under a filter: anchor %d, said %q", m.anchor, m.status)
	}
	// An agent's edit: the filter picks again, from the new view.
	agentEdit(t, m, svc, func(ctx context.Context) error {
		_, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: m.sid, Messages: []model.NewMessage{{Role: model.RoleAssistant, Content: "turn 21"}}})
		return err
	})
	if m.rows.Len() != 11 || !strings.Contains(screen(m), "filter role:assistant: 11/21") {
		t.Fatalf("after an append, %d rows:\n%s", m.rows.Len(), screen(m))
	}
	// esc shows everything again, the cursor on its item.
	id := cursorID(m)
	send(t, m, keyEsc)
	if m.rows.Len() != 21 || cursorID(m) != id || strings.Contains(lineWith(screen(m), "tokens"), "filter") {
		t.Fatalf("esc: %d rows, cursor on %s (was %s)", m.rows.Len(), cursorID(m), id)
	}
}

func TestFilterByTagAndAuthor(t *testing.T) {
	t.Parallel()
	m, svc := roleThread(t)
	press(t, m, "F")
	typeText(t, m, "tag:db role:user")
	send(t, m, keyEnter)
	if m.rows.Len() != 1 || cursorID(m) != "m3" {
		t.Fatalf("tag:db role:user: %d rows, cursor on %s", m.rows.Len(), cursorID(m))
	}
	press(t, m, "F") // F again clears it
	if m.feat.filter.on() || m.rows.Len() != 20 {
		t.Fatal("F did not clear the filter")
	}
	agentEdit(t, m, svc, func(ctx context.Context) error {
		after := 4
		_, err := svc.InsertMessages(ctx, ops.InsertArgs{SessionID: m.sid, AfterIdx: &after, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "the agent's note"}}})
		return err
	})
	press(t, m, "F")
	// the last filter is offered dimmed: typing starts a new one
	typeText(t, m, "author:claude")
	send(t, m, keyEnter)
	if m.rows.Len() != 1 || !strings.Contains(screen(m), "the agent's note") {
		t.Fatalf("author:claude: %d rows:\n%s", m.rows.Len(), screen(m))
	}
}

func TestFilterRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	m, _ := roleThread(t)
	press(t, m, "F")
	typeText(t, m, "role:robot")
	send(t, m, keyEnter)
	if m.dialogs.Front() == nil || !strings.Contains(screen(m), "a role is user, assistant, system or tool") {
		t.Fatalf("a bad role:\n%s", screen(m))
	}
	send(t, m, tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	typeText(t, m, "tag:nothing")
	send(t, m, keyEnter)
	if m.feat.filter.on() || !strings.Contains(screen(m), "nothing in the thread matches tag:nothing") {
		t.Fatalf("a filter matching nothing:\n%s", screen(m))
	}
}

// otherSession adds a second session to a plain thread's file.
func otherSession(t *testing.T) (*Model, *ops.Service, string) {
	t.Helper()
	m, svc := plainThread(t, 5)
	ctx := context.Background()
	res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "Other work", Source: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: res.SessionID, Messages: []model.NewMessage{
		{Role: model.RoleUser, Content: "one", CreatedAt: day}, {Role: model.RoleAssistant, Content: "two", CreatedAt: day.Add(72 * time.Hour)},
	}}); err != nil {
		t.Fatal(err)
	}
	return m, svc, res.SessionID
}

func TestSessionsListShowsSourceDatesAndSize(t *testing.T) {
	t.Parallel()
	m, _, _ := otherSession(t)
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	s := screen(m)
	line := lineWith(s, "Other work")
	for _, want := range []string{"codex", "Feb 01 – Feb 04", "2 msgs", "tokens"} {
		if !strings.Contains(line, want) {
			t.Errorf("the row %q does not show %q", line, want)
		}
	}
}

func TestSessionsRename(t *testing.T) {
	t.Parallel()
	m, svc, other := otherSession(t)
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	p := m.dialogs.Front().(*dialog.Sessions)
	for cur, _ := p.Current(); cur.SessionID != other; cur, _ = p.Current() {
		send(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	send(t, m, tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	if !strings.Contains(screen(m), "Rename the session") || !strings.Contains(screen(m), "enter renames") {
		t.Fatalf("ctrl+r:\n%s", screen(m))
	}
	send(t, m, tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	typeText(t, m, "Renamed work")
	send(t, m, keyEnter)
	info, _, err := svc.View(other)
	if err != nil || info.Title != "Renamed work" {
		t.Fatalf("title %q (%v)", info.Title, err)
	}
	if s := screen(m); !strings.Contains(s, "Renamed work") || m.dialogs.Front() == nil {
		t.Fatalf("the list was not read again:\n%s", s)
	}
}

func TestSessionsDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	m, svc, other := otherSession(t)
	shown := m.sid
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	p := m.dialogs.Front().(*dialog.Sessions)
	for cur, _ := p.Current(); cur.SessionID != shown; cur, _ = p.Current() {
		send(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	send(t, m, tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl})
	if s := screen(m); !strings.Contains(s, "Delete “Plain”, 5 messages") || !strings.Contains(s, "y deletes it · n keeps it") {
		t.Fatalf("ctrl+x does not ask, naming the session and its size:\n%s", s)
	}
	press(t, m, "n")
	if _, _, err := svc.View(shown); err != nil {
		t.Fatalf("n deleted the session: %v", err)
	}
	send(t, m, tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl})
	press(t, m, "y")
	if _, _, err := svc.View(shown); err == nil {
		t.Fatal("y did not delete the session")
	}
	// The session shown is gone: the other one opens.
	if m.sid != other || m.view == nil || !strings.Contains(screen(m), "Other work") {
		t.Fatalf("after deleting the session shown, %q is open:\n%s", m.sid, screen(m))
	}
	// Deleting the last one leaves the empty file's screen.
	p = m.dialogs.Front().(*dialog.Sessions)
	if len(p.Shown()) != 1 {
		t.Fatalf("the list holds %d sessions after the delete", len(p.Shown()))
	}
	send(t, m, tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl})
	press(t, m, "y")
	if !m.empty || m.err != nil {
		t.Fatalf("after deleting the last session: empty %v, err %v", m.empty, m.err)
	}
}

func TestAnotherSessionsChangeIsNoticed(t *testing.T) {
	t.Parallel()
	m, svc, other := otherSession(t)
	view := m.view
	announced := events(t, svc)
	ctx := ops.WithAuthor(context.Background(), "claude-code")
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: other, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "three"}}}); err != nil {
		t.Fatal(err)
	}
	// The event the service announces names the session: the notice is
	// made of it, with no look-up of its own.
	deliver(t, m, announced())
	if !strings.Contains(m.status, "in “Other work”: ") || !strings.Contains(m.status, " by claude-code") {
		t.Fatalf("the notice of the service's event: %q", m.status)
	}
	_, cmd := m.Update(eventMsg(ops.Event{SessionID: other, Title: "Other work", Kind: ops.EventAppended, What: "appended 1 message", Author: "claude-code"}))
	run(t, m, cmd)
	if m.view != view {
		t.Error("a change to another session loaded the thread shown again")
	}
	if !strings.Contains(m.status, "in “Other work”: appended 1 message by claude-code") {
		t.Fatalf("the notice: %q", m.status)
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	if line := lineWith(screen(m), "Other work"); !strings.Contains(line, "●") {
		t.Errorf("the list does not mark the session written to: %q", line)
	}
	// Opening it takes the mark away.
	p := m.dialogs.Front().(*dialog.Sessions)
	for cur, _ := p.Current(); cur.SessionID != other; cur, _ = p.Current() {
		send(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	send(t, m, keyEnter)
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	if line := lineWith(screen(m), "Other work"); strings.Contains(line, "●") {
		t.Errorf("the mark stays after the session was opened: %q", line)
	}
}

func TestNewKeysAreInTheHelp(t *testing.T) {
	t.Parallel()
	m, _ := plainThread(t, 5)
	press(t, m, "?")
	s := screen(m)
	for _, k := range [][2]string{{"y", "copy"}, {"p", "open in $PAGER"}, {"F", "filter by role/tag/author"}, {"ctrl+z", "suspend"}} {
		if !helpShows(s, k[0], k[1]) {
			t.Errorf("? does not list %s %s:\n%s", k[0], k[1], s)
		}
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return ansi.Strip(l[len(l)-1])
}

func TestSearchUnderAFilterGoesOnlyToWhatItShows(t *testing.T) {
	t.Parallel()
	m, _ := roleThread(t)
	press(t, m, "F")
	typeText(t, m, "role:assistant")
	send(t, m, keyEnter)
	press(t, m, "/")
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	typeText(t, m, "turn 1")
	send(t, m, keyEsc)
	// Exact hits: turns 1 and 10–19; the filter shows 10, 12, 14, 16, 18.
	press(t, m, "g", "n")
	if id := cursorID(m); id != "m10" || !strings.Contains(lineWith(screen(m), "tokens"), "match 1/5") {
		t.Fatalf("n under the filter: on %s\n%s", id, screen(m))
	}
	press(t, m, "N")
	if id := cursorID(m); id != "m18" {
		t.Fatalf("N from the first went to %s, want the last shown (m18)", id)
	}
}

// A filter that picks what fits on one screen shows all of it, and the
// last of a longer pick ends at the screen's foot: the rows are not left
// a third down with blank lines under them.
func TestFilterFillsTheScreen(t *testing.T) {
	t.Parallel()
	m, _ := roleThread(t)
	press(t, m, "F")
	typeText(t, m, "role:assistant")
	_, cmd := m.Update(keyEnter)
	run(t, m, cmd)
	s := screen(m)
	shown := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[len(f)-2] == "turn" {
			shown[f[len(f)-1]] = true
		}
	}
	for i := 2; i <= 20; i += 2 {
		if !shown[fmt.Sprint(i)] {
			t.Fatalf("turn %d is not shown though all 10 picks fit:\n%s", i, s)
		}
	}
}

func TestSessionsListCountsOneInTheSingular(t *testing.T) {
	t.Parallel()
	m, svc, _ := otherSession(t)
	ctx := context.Background()
	res, err := svc.CreateSession(ctx, ops.CreateSessionArgs{Title: "Short one"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendMessages(ctx, ops.AppendMessagesArgs{SessionID: res.SessionID, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	line := lineWith(screen(m), "Short one")
	if !strings.Contains(line, "1 msg ") || !strings.Contains(line, "1 token ") {
		t.Errorf("the row of a one-message session: %q", line)
	}
}

// A refused title keeps the rename line open with the reason, to be
// corrected rather than typed again.
func TestSessionsRenameRefusedStaysOpen(t *testing.T) {
	t.Parallel()
	m, svc, other := otherSession(t)
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	p := m.dialogs.Front().(*dialog.Sessions)
	for cur, _ := p.Current(); cur.SessionID != other; cur, _ = p.Current() {
		send(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	send(t, m, tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	send(t, m, tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	typeText(t, m, "   ")
	send(t, m, keyEnter)
	s := screen(m)
	if !strings.Contains(s, "Rename the session") || !strings.Contains(s, "title is empty") {
		t.Fatalf("a blank title closed the rename line or said nothing:\n%s", s)
	}
	send(t, m, tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	typeText(t, m, "Second try")
	send(t, m, keyEnter)
	if info, _, err := svc.View(other); err != nil || info.Title != "Second try" {
		t.Fatalf("title %q (%v)", info.Title, err)
	}
	if s := screen(m); strings.Contains(s, "Rename the session") || strings.Contains(s, "title is empty") {
		t.Fatalf("after a good rename:\n%s", s)
	}
}

// After a rename the list keeps its highlight on the session renamed,
// wherever the list now puts it: ctrl+x next offers to delete that one.
func TestSessionsRenameKeepsTheHighlight(t *testing.T) {
	t.Parallel()
	m, svc, _ := otherSession(t)
	newSession(t, svc, "A third thread", []model.NewMessage{{Role: model.RoleUser, Content: "third"}})
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	p := m.dialogs.Front().(*dialog.Sessions)
	send(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	send(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	renamed, _ := p.Current()
	send(t, m, tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	typeText(t, m, " again")
	send(t, m, keyEnter)
	if cur, _ := p.Current(); cur.SessionID != renamed.SessionID || cur.Title != renamed.Title+" again" {
		t.Fatalf("the highlight is on %q (%s), want the session renamed, %s", cur.Title, cur.SessionID, renamed.SessionID)
	}
}

// TestFilterOffersTheLastWithoutAppending: F offers the last filter
// without putting it in the way: typing starts a new one, enter on
// nothing applies the one offered, and tab takes it in to edit.
func TestFilterOffersTheLastWithoutAppending(t *testing.T) {
	t.Parallel()
	m, _ := roleThread(t)
	press(t, m, "F")
	typeText(t, m, "tag:db role:user")
	send(t, m, keyEnter)
	press(t, m, "F") // clears it
	press(t, m, "F")
	if !strings.Contains(screen(m), "tag:db role:user") {
		t.Fatalf("the last filter is not offered:\n%s", screen(m))
	}
	typeText(t, m, "role:user")
	send(t, m, keyEnter)
	if m.dialogs.Front() != nil || m.feat.filter.expr != "role:user" {
		t.Fatalf("typing after F: filter %q, dialog open %v:\n%s", m.feat.filter.expr, m.dialogs.Front() != nil, screen(m))
	}
	press(t, m, "F") // clears it
	press(t, m, "F")
	send(t, m, keyEnter) // nothing typed: the filter offered
	if m.feat.filter.expr != "role:user" {
		t.Fatalf("enter on the offered filter: %q", m.feat.filter.expr)
	}
	press(t, m, "F")
	press(t, m, "F")
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	typeText(t, m, " tag:db")
	send(t, m, keyEnter)
	if m.feat.filter.expr != "role:user tag:db" {
		t.Fatalf("tab, then more: %q", m.feat.filter.expr)
	}
}
