package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"weft/demo"
	"weft/model"
	"weft/ops"
	"weft/ops/reads"
	"weft/store/boltstore"
)

// editsThread is the effective thread as `weft show --json` prints it.
type editsThread struct {
	SessionID string             `json:"session_id"`
	Total     int                `json:"total"`
	Messages  []reads.MessageOut `json:"messages"`
}

// editsSeed writes the demo thread into a new file, exactly as `weft demo`
// seeds its scratch file, and returns the session's ID.
func editsSeed(t *testing.T, path string) string {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sid, err := demo.Seed(context.Background(), ops.New(st))
	if err != nil {
		t.Fatal(err)
	}
	return sid
}

func editsShow(t *testing.T, db, sid string) editsThread {
	t.Helper()
	var th editsThread
	if err := json.Unmarshal([]byte(weftCLI(t, "--db", db, "show", sid, "--json")), &th); err != nil {
		t.Fatalf("weft show --json: %v", err)
	}
	return th
}

func editsOps(t *testing.T, db, sid string) []reads.OperationOut {
	t.Helper()
	var res reads.ListOperationsResult
	out := weftCLI(t, "--db", db, "call", "list_operations", "session_id="+sid)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("weft call list_operations: %v\n%s", err, out)
	}
	return res.Operations
}

// index finds the first message of the thread whose content has sub.
func (th editsThread) index(t *testing.T, sub string) int {
	t.Helper()
	for _, m := range th.Messages {
		if strings.Contains(m.Content, sub) {
			return m.Index
		}
	}
	t.Fatalf("no message of the thread contains %q", sub)
	return -1
}

// at is the status bar's position for the cursor on item i (0-based) of
// a thread of n items.
func at(i, n int) string { return fmt.Sprintf("at %s/%s", thousandsE2E(i), thousandsE2E(n)) }

func thousandsE2E(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestTUIEdits opens a prepared file in a real terminal, performs every
// edit the TUI offers by keyboard, checks each one on the screen, and
// then checks the file through the CLI after the TUI has quit.
func TestTUIEdits(t *testing.T) {
	needTmux(t)
	t.Parallel()
	bin := weftBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	sid := editsSeed(t, db)
	// A second, more recent session: the TUI must open the one named on
	// the command line, and the sessions list has two to choose from.
	newThread(t, db, "Scratch notes", model.NewMessage{Role: model.RoleUser, Content: "Lunch order: two falafel wraps."})

	// What the CLI says before the TUI opens the file (bbolt lets one
	// process have it at a time).
	before := editsShow(t, db, sid)
	seeded := editsOps(t, db, sid)
	raw, eff := editsTokens(t, db, sid)
	n := before.Total

	editor := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf 'Checked in the editor.\\n' >> \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"TZ=UTC", "HOME=" + dir, "EDITOR=" + editor, "VISUAL=" + editor}
	s := startScreen(t, TerminalOptions{Width: 120, Height: 40, Env: env},
		bin, "--db", db, sid)
	if w, h, err := s.term.Size(); err != nil || w != 120 || h != 40 {
		t.Fatalf("the pane is %dx%d (%v), want 120x40", w, h, err)
	}

	// Open: the thread opens at its latest message, and the status bar
	// counts the tokens as the CLI does.
	s.see(at(n-1, n), tokens(raw, eff), "The limiter is at 100%")

	// Moving: g and G go to the ends, j and k a row, ctrl+d and ctrl+u
	// half a page.
	s.keys("g")
	s.until("the cursor on the first marker", func(text string) bool {
		return strings.Contains(cursorRow(text), "digest of")
	})
	s.keys("j")
	s.see(at(0, n))
	s.keys("j", "j")
	s.see(at(2, n))
	s.keys("k")
	s.see(at(1, n))
	s.keys("G")
	s.see(at(n-1, n), "The limiter is at 100%")
	s.keys("C-u")
	up := editsMoved(s, n-1)
	if up < n-1-30 || up > n-1-5 {
		t.Fatalf("ctrl+u moved from item %d to %d, want half a page (5 to 30 items) up", n, up)
	}
	s.keys("C-d")
	s.see(at(n-1, n))

	// Search: / opens it, results come as we type, enter jumps to the
	// best, n and N step through the matches in thread order.
	s.keys("/")
	s.text("Retry-After")
	s.match(regexp.MustCompile(`(?m)^▸\s+\d+ .*Retry-After`))
	s.keys("Enter")
	hit := editsMoved(s, n-1)
	before.has(t, hit, "Retry-After")
	s.gone("/ Retry-After")
	s.keys("n")
	next := editsMoved(s, hit)
	before.has(t, next, "Retry-After")
	s.keys("N")
	if back := editsMoved(s, next); back != hit {
		t.Fatalf("n went from item %d to %d, and N back to %d, want %d", hit, next, back, hit)
	}

	// Time: T asks for a time and jumps to the first message at or after
	// it: day 4 starts at 08:55.
	day4 := before.index(t, "How did the 10% ramp go overnight?")
	s.keys("T")
	s.see("Jump to a time")
	s.text("2026-03-05 08:00")
	s.keys("Enter")
	s.see(at(day4, n), "How did the 10% ramp go overnight?")
	s.gone("Jump to a time")
	// A time that is none: the dialog stays with the text and names it,
	// and the cursor stays.
	s.keys("T")
	s.see("Jump to a time")
	s.text("sometime")
	s.keys("Enter")
	s.see(`cannot read "sometime" as a time`, "› sometime", at(day4, n))
	s.keys("Escape")
	s.gone("Jump to a time")
	// Without a date a time is on the cursor's day: day 4 again, not
	// the end of the thread (today has no messages).
	// The dialog is seen open with the time in it before enter, so that
	// seeing it gone means the jump was made (the cursor is on day 4
	// already: its place alone proves nothing), and the keys after it
	// reach the thread, not the dialog still waiting for its answer.
	s.keys("T")
	s.see("Jump to a time")
	s.text("08:00")
	s.see("› 08:00")
	s.keys("Enter")
	s.gone("Jump to a time")
	s.see(at(day4, n), "How did the 10% ramp go overnight?")

	// A range: v starts it, j extends it, esc cancels it.
	s.keys("v", "j")
	s.see(at(day4+1, n))
	s.until("rows marked as selected", func(text string) bool { return editsSelected(text) > 0 })
	s.keys("Escape")
	s.until("the selection cancelled", func(text string) bool { return editsSelected(text) == 0 })
	s.keys("k")
	s.see(at(day4, n))

	// t tags a range.
	s.keys("v", "j", "j")
	s.see(at(day4+2, n))
	s.keys("t")
	s.see(fmt.Sprintf("Tag items %d–%d", day4, day4+2))
	s.text("ramp")
	s.keys("Enter")
	s.gone("Tag items")
	s.until("the tag reported in the status line", func(text string) bool {
		return strings.Contains(strings.ToLower(lastLine(text)), "tag")
	})
	// The tagged items' headers must show the new tag once the edit is
	// done.
	s.expect("the three tagged items to show #ramp", 3*time.Second, func(text string) bool { return strings.Count(text, "#ramp") == 3 })

	// Digest the next three: d opens a textarea, ctrl+s submits.
	s.keys("j", "v", "j", "j")
	s.see(at(day4+5, n))
	s.keys("d")
	s.see(fmt.Sprintf("Digest items %d–%d", day4+3, day4+5))
	s.text("Traced the enterprise rejections to one key.")
	s.keys("C-s")
	s.see("digest of 3 messages by operator", "Traced the enterprise rejections to one key.")
	n = editsLen(s, n-2)
	// The cursor was on the last message digested: it must now be on what
	// replaced the range, the marker or the summary, not on a message
	// after it (with a longer range, far after it and off the screen).
	s.expect("the cursor on the new digest's marker or summary", 3*time.Second, func(text string) bool {
		row := cursorRow(text)
		return strings.Contains(row, "digest of 3 messages by operator") || strings.Contains(row, "Traced the enterprise rejections")
	})

	// The marker expands in place to show the originals, and collapses
	// again.
	editsCursorTo(s, "k", "digest of 3 messages by operator")
	s.keys("Enter")
	s.see("▾ digest of 3 messages by operator", "That's odd. Which keys?", "Free-plan rejections look normal.")
	s.keys("Space")
	s.see("▸ digest of 3 messages by operator")
	s.gone("That's odd. Which keys?")

	// Snip the tool result under the digest.
	editsCursorTo(s, "j", "key=ent_7f3a")
	s.keys("s")
	s.see("snipped 1 message by operator")
	n = editsLen(s, n-1)
	s.gone("key=ent_7f3a…  8990")

	// Revise the next message in the textarea.
	editsCursorTo(s, "j", "Almost all from one key")
	s.keys("r")
	s.see("Revise item")
	s.keys("Enter")
	s.text("Checked twice.")
	s.see("Checked twice.")
	// ctrl+e hands the text to $EDITOR (a script that adds a line) and
	// takes back what it saved.
	s.keys("C-e")
	s.see("Checked in the editor.", "Checked twice.", "Revise item")
	s.keys("C-s")
	s.see("revision of 1 message into 1 by operator")
	s.gone("Revise item")
	s.see("Checked in the editor.")

	// Insert after the revised message: the dialog starts with a role's
	// line; make it a user message.
	editsCursorTo(s, "j", "Checked in the editor.")
	revised := editsCursor(s.last)
	s.keys("i")
	s.see(fmt.Sprintf("Insert after item %d", revised), "--- assistant")
	for range len("\nassistant") {
		s.keys("BSpace")
	}
	s.gone("--- assistant")
	s.text("user")
	s.keys("Enter")
	s.text("Inserted from the terminal.")
	s.see("--- user", "Inserted from the terminal.")
	s.keys("C-s")
	n = editsLen(s, n+1)
	s.gone("Insert after item")
	// The insertion is right below the cursor, which stays put.
	editsCursorTo(s, "j", "inserted 1 message by operator")
	editsCursorTo(s, "j", "Inserted from the terminal.")
	if row := cursorRow(s.last); !strings.Contains(row, "user") || editsCursor(s.last) != revised+1 {
		t.Fatalf("item %d is not the inserted user message:\n%s", revised+1, s.last)
	}

	// J and K move the selection; enter makes the whole move one
	// resequence.
	ins := revised + 1
	s.keys("J")
	s.see(fmt.Sprintf("moving item %d down by 1", ins))
	s.keys("J")
	s.see(fmt.Sprintf("moving item %d down by 2", ins))
	s.keys("K")
	s.see(fmt.Sprintf("moving item %d down by 1", ins))
	s.keys("Enter")
	s.see("moved 1 message by 1 place by operator", at(ins+1, n))
	s.gone("moving item")

	// u reverts the latest operation, ctrl+r restores it; the cursor
	// stays on the message it was on.
	s.keys("u")
	s.gone("moved 1 message by 1 place by operator")
	s.see(at(ins, n), "Inserted from the terminal.")
	s.keys("C-r")
	s.see("moved 1 message by 1 place by operator", at(ins+1, n))

	// The operations panel: space switches one off and on, x reverts
	// one, enter jumps to one's marker.
	s.keys("o")
	s.see(fmt.Sprintf("Operations (%d)", len(seeded)+6))
	s.keys("G")
	s.match(panelLine("resequence", "active"))
	s.keys("Space")
	s.match(panelLine("resequence", "inactive"))
	s.see(at(ins, n)) // the inserted message is back in its place
	s.keys("Space")
	s.match(panelLine("resequence", "active"))
	s.see(at(ins+1, n))
	s.keys("k", "k", "k")
	s.match(panelLine("snip", "active"))
	s.keys("x")
	s.see("Revert your snip of 1 item", "y revert · n keep it")
	s.keys("y")
	s.match(panelLine("snip", "reverted"))
	n = editsLen(s, n+1)
	s.keys("k")
	s.match(panelLine("digest", "active"))
	s.keys("Enter")
	s.gone("Operations (")
	s.until("the cursor on the digest's marker", func(text string) bool {
		return strings.Contains(cursorRow(text), "digest of 3 messages by operator")
	})

	// tab lists the sessions with a fuzzy filter; enter opens one.
	s.keys("Tab")
	s.see("Sessions (2)", "Scratch notes")
	s.text("scratch")
	s.until("the filter to leave only Scratch notes", func(text string) bool {
		rows := sessionRows(text)
		return len(rows) == 1 && strings.Contains(rows[0], "Scratch notes")
	})
	s.keys("Enter")
	s.see("Lunch order: two falafel wraps.", at(0, 1))
	s.gone("Sessions (2)")
	s.keys("Tab")
	s.see("Sessions (2)")
	s.text("limiter")
	s.until("the filter to leave only the demo session", func(text string) bool {
		rows := sessionRows(text)
		return len(rows) == 1 && strings.Contains(rows[0], "Rate limiter")
	})
	s.keys("Enter")
	s.see(at(n-1, n), "The limiter is at 100%")
	s.gone("Lunch order")

	// The status bar's tokens agree with the file's, once the TUI has
	// quit.
	last := posRE.FindString(s.last)
	shown := tokensRE.FindString(s.last)

	// ? shows every key, and hides them again.
	s.keys("?")
	s.see("half page down", "jump to a time", "revise", "operations")
	s.keys("?")
	s.gone("half page down")

	// q quits, cleanly.
	s.keys("q")
	if code := s.exited(); code != 0 {
		t.Fatalf("weft exited with status %d; the last screen was:\n%s", code, s.capture())
	}

	if raw, eff := editsTokens(t, db, sid); shown != tokens(raw, eff) {
		t.Errorf("the status bar showed %q (%s); the file has %d → %d tokens", shown, last, raw, eff)
	}

	// The file, read after the TUI has gone: every edit is an operation
	// by the operator, in the order made, with the statuses left.
	got := editsOps(t, db, sid)
	if len(got) != len(seeded)+6 {
		t.Fatalf("list_operations has %d operations, want the %d seeded and 6 made in the TUI:\n%+v", len(got), len(seeded), got)
	}
	for i, op := range seeded {
		if g := got[i]; g.OperationID != op.OperationID || g.Status != op.Status || g.Author != op.Author {
			t.Errorf("seeded operation %d changed: was %s %s by %s, now %s %s by %s", i, op.OpType, op.Status, op.Author, g.OpType, g.Status, g.Author)
		}
	}
	want := []struct {
		typ, status string
		targets     int
	}{
		{"tag", "active", 3},
		{"digest", "active", 3},
		{"snip", "reverted", 1},
		{"revise", "active", 1},
		{"insert", "active", 0},
		{"resequence", "active", 2},
	}
	mine := got[len(seeded):]
	for i, w := range want {
		op := mine[i]
		if string(op.OpType) != w.typ || string(op.Status) != w.status || op.Author != "operator" || len(op.Targets) != w.targets {
			t.Errorf("operation %d made in the TUI is %s %s by %s on %d targets, want %s %s by operator on %d", i, op.OpType, op.Status, op.Author, len(op.Targets), w.typ, w.status, w.targets)
		}
	}
	if tags := mine[0].Tags; len(tags) != 1 || tags[0] != "ramp" {
		t.Errorf("the tag operation has tags %q, want [ramp]", tags)
	}
	if sum := mine[1].Summary; sum != "Traced the enterprise rejections to one key." {
		t.Errorf("the digest's summary is %q", sum)
	}
	if m := mine[3].Messages; len(m) != 1 || m[0].Role != "assistant" || !strings.Contains(m[0].Content, "Checked twice.") || !strings.Contains(m[0].Content, "Checked in the editor.") {
		t.Errorf("the revision is %+v, want one assistant message with the typed and the edited lines", m)
	}
	if m := mine[4].Messages; len(m) != 1 || m[0].Role != "user" || m[0].Content != "Inserted from the terminal." {
		t.Errorf("the insertion is %+v, want one user message", m)
	}

	// The effective thread agrees: the summary stands where the three
	// messages were, the snipped message is back, and the inserted
	// message sits one place lower than where it was inserted, and one
	// more for the snipped message before it.
	after := editsShow(t, db, sid)
	if after.Total != n {
		t.Errorf("the thread has %d items after the TUI quit; the TUI showed %d", after.Total, n)
	}
	if i := after.index(t, "Traced the enterprise rejections to one key."); i != day4+3 {
		t.Errorf("the digest's summary is item %d, want %d", i, day4+3)
	}
	after.has(t, day4+4, "key=ent_7f3a")
	if i := after.index(t, "Inserted from the terminal."); i != ins+2 {
		t.Errorf("the inserted message is item %d, want %d", i, ins+2)
	}
	_ = seeded
}

// has fails unless item i's content contains sub.
func (th editsThread) has(t *testing.T, i int, sub string) {
	t.Helper()
	if i < 0 || i >= len(th.Messages) || !strings.Contains(th.Messages[i].Content, sub) {
		t.Fatalf("the cursor is on item %d, which does not contain %q", i, sub)
	}
}

// editsTokens reads the raw and effective token counts from weft show.
func editsTokens(t *testing.T, db, sid string) (raw, eff int) {
	t.Helper()
	out := weftCLI(t, "--db", db, "show", sid)
	m := regexp.MustCompile(`([\d,]+) → ([\d,]+) tokens`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("weft show prints no token counts in its first line:\n%s", strings.SplitN(out, "\n", 2)[0])
	}
	fmt.Sscan(strings.ReplaceAll(m[1], ",", ""), &raw)
	fmt.Sscan(strings.ReplaceAll(m[2], ",", ""), &eff)
	return raw, eff
}

// tokens is the status bar's token counts.
func tokens(raw, eff int) string {
	return fmt.Sprintf("tokens %s → %s", thousandsE2E(raw), thousandsE2E(eff))
}

var tokensRE = regexp.MustCompile(`tokens [\d,]+ → [\d,]+`)

// selectGlyph marks the rows of a range selection.
const selectGlyph = "┃"

// editsSelected counts the screen's lines marked as selected.
func editsSelected(text string) int {
	n := 0
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, selectGlyph) {
			n++
		}
	}
	return n
}

// cursorGlyph marks the first line of the cursor's row in the thread,
// cursorMore the row's other lines.
const (
	cursorGlyph = "▌"
	cursorMore  = "▏"
)

// cursorRow returns the lines of the row under the cursor.
func cursorRow(text string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(text) {
		switch {
		case strings.HasPrefix(line, cursorGlyph):
			in = true
		case in && strings.HasPrefix(line, cursorMore):
		default:
			if in {
				return b.String()
			}
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

var posRE = regexp.MustCompile(`at ([\d,]+)/([\d,]+)`)

// editsCursor reads the cursor's item (0-based) from the status bar; -1
// when the status bar shows no position.
func editsCursor(text string) int {
	sub := posRE.FindStringSubmatch(text)
	if sub == nil {
		return -1
	}
	var i int
	if _, err := fmt.Sscan(strings.ReplaceAll(sub[1], ",", ""), &i); err != nil {
		return -1
	}
	return i
}

// panelLine matches the operations panel's selected line when it shows
// an operation of this type and status, made by the operator.
func panelLine(typ, status string) *regexp.Regexp {
	return regexp.MustCompile(`▸ ` + typ + `\s+` + status + `\s+operator\s`)
}

// editsCursorTo presses key until the cursor's row shows sub.
func editsCursorTo(s *screen, key, sub string) {
	s.t.Helper()
	for range 20 {
		text := s.capture()
		if strings.Contains(cursorRow(text), sub) {
			return
		}
		s.keys(key)
		s.until("the screen to change after "+key, func(now string) bool { return now != text })
	}
	s.t.Fatalf("pressed %s 20 times and the cursor never reached a row showing %q; the last screen was:\n%s", key, sub, s.last)
}

// editsLen waits for the thread to have n items, and returns n.
func editsLen(s *screen, n int) int {
	s.t.Helper()
	s.until(fmt.Sprintf("the thread to have %d items", n), func(text string) bool {
		sub := posRE.FindStringSubmatch(text)
		return sub != nil && sub[2] == thousandsE2E(n)
	})
	return n
}

// editsMoved waits for the cursor to leave item from, and returns where
// it went.
func editsMoved(s *screen, from int) int {
	s.t.Helper()
	text := s.until(fmt.Sprintf("the cursor to move from item %d", from), func(text string) bool {
		i := editsCursor(text)
		return i >= 0 && i != from
	})
	return editsCursor(text)
}

// sessionRows is the rows of the sessions list on the screen: the lines
// counting a session's messages (" msg " for one, " msgs " for more).
func sessionRows(text string) []string {
	var rows []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, " msgs ") || strings.Contains(l, " msg ") {
			rows = append(rows, l)
		}
	}
	return rows
}
