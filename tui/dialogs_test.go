package tui

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/tui/dialog"
	"weft/tui/handoff"
	"weft/tui/rows"
)

func TestDigestDraft(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	press(t, m, "g", "j", "j", "v", "j", "j", "j", "d")
	d, ok := m.dialogs.Front().(*dialog.Text)
	if !ok || !d.CanDraft() {
		t.Fatalf("digest dialog without a drafter: %T", m.dialogs.Front())
	}
	send(t, m, tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	draft := d.Value()
	if strings.TrimSpace(draft) == "" || !strings.Contains(screen(m), "drafted locally (extractive)") {
		t.Fatalf("no draft:\n%s", screen(m))
	}
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpDigest || op.Payload.Summary != strings.TrimSpace(draft) && op.Payload.Summary != draft {
		t.Fatalf("digest made from the draft: %+v", op)
	}
}

func TestEditorFailureIsShown(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	n := len(mustOps(t, svc, m.sid))
	press(t, m, "d")
	m.Update(handoff.Edited{Err: errors.New(`exec: "nano": executable file not found in $PATH`)})
	if s := screen(m); !strings.Contains(s, "editor: exec") {
		t.Fatalf("editor error not shown:\n%s", s)
	}
	m.Update(handoff.Edited{Text: "From the editor.\n"})
	if v := m.dialogs.Front().(*dialog.Text).Value(); v != "From the editor." {
		t.Fatalf("editor text %q", v)
	}
	send(t, m, keyEsc)
	if len(mustOps(t, svc, m.sid)) != n {
		t.Fatal("esc after the editor made an operation")
	}
}

// A tag shows on the tagged items as soon as it is made: rendered rows are
// kept per session version, not only per item.
func TestTagShowsAtOnce(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	press(t, m, "G", "k", "k")
	_ = screen(m) // the rows are rendered and cached
	press(t, m, "t")
	typeText(t, m, "finale")
	send(t, m, keyEnter)
	if s := screen(m); !strings.Contains(s, "#finale") || !strings.Contains(s, "tagged") {
		t.Fatalf("tag not shown:\n%s", s)
	}
}

// After a digest the cursor stands on its marker, not on whatever item
// now has the old row number.
func TestCursorFollowsDigestedItem(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	press(t, m, "G")
	for range 20 {
		press(t, m, "k")
	}
	press(t, m, "v")
	for range 18 {
		press(t, m, "j")
	}
	press(t, m, "d")
	typeText(t, m, "The rollout, summed up.")
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	rw := m.rows.At(m.cursor)
	if rw.Kind != rows.Marker || m.view.Markers[rw.Marker].OpType != model.OpDigest {
		t.Fatalf("cursor on %+v after the digest:\n%s", rw, screen(m))
	}
	if !strings.Contains(screen(m), "digest of 19 messages by operator") {
		t.Fatalf("marker not on screen:\n%s", screen(m))
	}
}

func TestInsertOnAMarkerGoesWhereItStands(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	press(t, m, "g") // the first row is the setup digest's marker
	if m.rows.At(m.cursor).Kind != rows.Marker {
		t.Fatal("first row is not a marker")
	}
	press(t, m, "i")
	if d, ok := m.dialogs.Front().(*dialog.Text); !ok || !strings.Contains(d.Title(), "at the start") {
		t.Fatalf("insert on the first marker: %+v", m.dialogs.Front())
	}
	send(t, m, keyEsc)
	// A marker further down: the insert goes after the item before it.
	k := len(m.view.Markers) - 1
	if m.view.Markers[k].At == 0 {
		t.Fatal("no marker past the start")
	}
	m.cursor = m.rows.RowOfMarker(k)
	press(t, m, "i")
	if d := m.dialogs.Front().(*dialog.Text); !strings.Contains(d.Title(), fmt.Sprintf("after item %d", m.view.Markers[k].At-1)) {
		t.Fatalf("insert on marker %d (at %d): %q", k, m.view.Markers[k].At, d.Title())
	}
	send(t, m, keyEsc)
	// v on a marker starts a range at the item the status bar says the
	// cursor is at: the one the marker stands before.
	m.cursor = m.rows.RowOfMarker(k)
	press(t, m, "v")
	at := m.view.Markers[k].At
	if first, last, ok := m.selection(); m.anchor < 0 || !ok || first != at || last != at || !strings.Contains(screen(m), fmt.Sprintf("at %d/", at)) {
		t.Fatalf("v on a marker at %d: anchor %d, selection %d–%d (%v)\n%s", at, m.anchor, first, last, ok, screen(m))
	}
}

// Each dialog's hint is made from its own keys, and a key that would do
// nothing now is neither listed nor answered.
func TestDialogHintsFollowState(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 120, 40)
	lastLines := func(n int) string {
		lines := strings.Split(screen(m), "\n")
		return strings.Join(lines[len(lines)-n:], "\n")
	}

	// The operations panel: a reverted operation can be neither switched
	// nor reverted again.
	press(t, m, "o")
	if s := lastLines(6); !strings.Contains(s, "space on/off · x revert (asks first) · enter jump · esc close") {
		t.Fatalf("panel hint on a live operation:\n%s", s)
	}
	press(t, m, "x")
	if s := lastLines(6); !strings.Contains(s, "y revert · n keep it") || strings.Contains(s, "on/off") {
		t.Fatalf("panel hint while it asks:\n%s", s)
	}
	press(t, m, "y")
	n := len(mustOps(t, svc, m.sid))
	s := lastLines(6)
	if strings.Contains(s, "on/off") || strings.Contains(s, "x revert") || !strings.Contains(s, "esc close") {
		t.Fatalf("panel hint on a reverted operation:\n%s", s)
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	if list := mustOps(t, svc, m.sid); len(list) != n || !list[0].Active {
		t.Fatalf("space switched a reverted operation: %+v", list[0])
	}
	send(t, m, keyEsc)

	// Text dialogs: only the digest has a drafter.
	press(t, m, "G", "d")
	if s := lastLines(6); !strings.Contains(s, "ctrl+s to digest · ctrl+g draft one · ctrl+e for $EDITOR · esc to cancel") {
		t.Fatalf("digest hint:\n%s", s)
	}
	send(t, m, keyEsc)
	press(t, m, "r")
	s = boxText(lastLines(8))
	if !strings.Contains(s, "a line “--- role” starts a message") || !strings.Contains(s, "ctrl+s to revise · ctrl+e for $EDITOR · esc to cancel") || strings.Contains(s, "ctrl+g") {
		t.Fatalf("revise hint:\n%s", s)
	}
	send(t, m, tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	if d := m.dialogs.Front().(*dialog.Text); d.Said() != "" {
		t.Fatalf("ctrl+g in the revise dialog: %q", d.Said())
	}
	send(t, m, keyEsc)

	// One-line dialogs.
	press(t, m, "t")
	if s := lastLines(6); !strings.Contains(s, "tags separated by spaces or commas · enter to tag · esc to cancel") {
		t.Fatalf("tag hint:\n%s", s)
	}
	send(t, m, keyEsc)

	// The sessions panel offers enter only while a session is listed.
	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	if s := lastLines(6); !strings.Contains(s, "type to filter · enter open · ctrl+r rename · ctrl+x delete · tab back") {
		t.Fatalf("sessions hint:\n%s", s)
	}
	typeText(t, m, "zzzz")
	s = lastLines(6)
	if !strings.Contains(s, "no session matches") || strings.Contains(s, "enter open") || !strings.Contains(s, "type to filter · tab back") {
		t.Fatalf("sessions hint with nothing listed:\n%s", s)
	}
	send(t, m, keyEnter)
	if m.dialogs.Front() == nil {
		t.Fatal("enter with nothing listed closed the sessions panel")
	}
	send(t, m, keyEsc)

	// The search, while its query is empty: enter has nothing to jump to.
	press(t, m, "/")
	if s := screen(m); !strings.Contains(s, "type to search the whole thread · esc closes") || strings.Contains(s, "enter jumps") {
		t.Fatalf("search hint:\n%s", s)
	}
	send(t, m, keyEnter)
	if m.search.IsOpen() {
		t.Fatal("enter did not close an empty search")
	}
}

// ctrl+e writes the text for the editor in a command, not in Update.
func TestEditorFileIsWrittenInACommand(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 110, 36)
	press(t, m, "i")
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'e', Mod: tea.ModCtrl})
	if cmd == nil {
		t.Fatal("ctrl+e returned no command")
	}
	msg, ok := cmd().(handoff.File)
	if !ok {
		t.Fatalf("ctrl+e's command returned %+v", msg)
	}
	defer os.Remove(msg.Path())
	if b, err := os.ReadFile(msg.Path()); err != nil || string(b) != "--- assistant\n" {
		t.Fatalf("the editor's file holds %q (%v)", b, err)
	}
}

// boxText is the text of a dialog's box as one line: its borders gone
// and its wrapped lines joined, so a hint can be found whatever the
// width wrapped.
func boxText(s string) string {
	var words []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.Trim(line, " │╭╮╰╯─")
		words = append(words, strings.Fields(line)...)
	}
	return strings.Join(words, " ")
}
