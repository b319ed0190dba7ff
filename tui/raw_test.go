package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
	"weft/tui/raw"
	"weft/tui/rows"
)

func TestRawViewShowsStoredThreadWithExtents(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 120, 40)
	press(t, m, "g")
	press(t, m, "R")
	if !m.raw.on {
		t.Fatal("R did not open the raw view")
	}
	s := screen(m)
	// Every stored message is there, the digested ones included (dimmed),
	// and the digest's extent starts at the first message it collapsed.
	if !strings.Contains(s, "raw: stored 0/253") {
		t.Fatalf("raw position not in the status bar:\n%s", s)
	}
	if m.view.Len() != m.info.MessageCount {
		t.Fatalf("raw view has %d items for %d stored messages", m.view.Len(), m.info.MessageCount)
	}
	if !strings.Contains(s, "◆ digest by claude-code") || !strings.Contains(s, "┌") || !strings.Contains(s, "└") {
		t.Fatalf("digest extent not marked:\n%s", s)
	}
	if strings.Contains(s, "▸ digest of") {
		t.Fatalf("the raw view shows markers:\n%s", s)
	}
	// Edit keys do nothing here; the help line says what works.
	press(t, m, "d")
	if m.dialogs.Front() != nil {
		t.Fatal("d opened a dialog in the raw view")
	}
	if help := strings.Split(s, "\n"); !strings.Contains(help[len(help)-1], "raw/effective") || strings.Contains(help[len(help)-1], "digest") {
		t.Errorf("help line in the raw view: %q", help[len(help)-1])
	}
	// Leaving keeps the cursor near the same stored message: m5 is inside
	// the setup digest, so the cursor lands on what hides it.
	m.cursor = 4
	press(t, m, "R")
	if m.raw.on {
		t.Fatal("R did not leave the raw view")
	}
	if idx, _ := m.view.PlaceOfSeq(5); m.rows.At(m.cursor).Item != idx && m.rows.At(m.cursor).Kind == rows.Item {
		t.Errorf("cursor row %+v, want the item hiding m5 (%d)", m.rows.At(m.cursor), idx)
	}
	// esc also leaves, and the cursor follows a visible message exactly.
	press(t, m, "G", "R")
	seq := m.seqAt(m.cursor)
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	run(t, m, cmd)
	if m.raw.on || m.seqAt(m.cursor) != seq {
		t.Fatalf("esc: raw=%v, cursor on m%d, want m%d", m.raw.on, m.seqAt(m.cursor), seq)
	}
}

func TestRawViewFollowsNewMessages(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 120, 40)
	press(t, m, "R")
	n := m.view.Len()
	args := ops.AppendMessagesArgs{SessionID: m.sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "late news"}}}
	if _, err := svc.AppendMessages(ops.WithAuthor(context.Background(), "agent"), args); err != nil {
		t.Fatal(err)
	}
	run(t, m, m.loadView(m.sid))
	if !m.raw.on || m.view.Len() != n+1 {
		t.Fatalf("raw=%v with %d items, want %d", m.raw.on, m.view.Len(), n+1)
	}
}

func TestRawExtentsLanes(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 120, 40)
	press(t, m, "R")
	exts := m.raw.extents
	if len(exts) == 0 {
		t.Fatal("no extents")
	}
	// Overlapping extents never share a lane (below the last).
	for i, a := range exts {
		for _, b := range exts[i+1:] {
			if a.Lane == b.Lane && a.Lane < raw.Lanes-1 && a.Lo <= b.Hi && b.Lo <= a.Hi {
				t.Errorf("%s [%d,%d] and %s [%d,%d] share lane %d", a.Op.Type, a.Lo, a.Hi, b.Op.Type, b.Lo, b.Hi, a.Lane)
			}
		}
	}
}

// R only asks for the raw view: it is laid out in a command (it has an
// item per stored message), and shows when that command's message comes.
func TestRawViewIsBuiltInACommand(t *testing.T) {
	t.Parallel()
	m, _ := demoModel(t, 120, 40)
	eff := m.view
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
	if cmd == nil || m.raw.on || m.view != eff {
		t.Fatalf("R in Update: command %v, raw %v, view swapped %v", cmd != nil, m.raw.on, m.view != eff)
	}
	msg, ok := cmd().(rawViewMsg)
	if !ok || msg.view.Len() != m.info.MessageCount {
		t.Fatalf("R's command returned %T", msg)
	}
	run(t, m, func() tea.Msg { return msg })
	if !m.raw.on || m.view != msg.view || m.raw.eff != eff {
		t.Fatal("the built raw view was not shown")
	}
}

// A raw view built from an effective view that a reload replaced is
// dropped; the reload builds it again from the new one.
func TestStaleRawViewIsDropped(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 120, 40)
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
	stale := cmd()
	args := ops.AppendMessagesArgs{SessionID: m.sid, Messages: []model.NewMessage{{Role: model.RoleUser, Content: "late news"}}}
	if _, err := svc.AppendMessages(ops.WithAuthor(context.Background(), "agent"), args); err != nil {
		t.Fatal(err)
	}
	info, v, err := svc.View(m.sid)
	if err != nil {
		t.Fatal(err)
	}
	_, reload := m.Update(viewLoadedMsg{info, v, nil})
	m.Update(stale)
	if m.raw.on {
		t.Fatal("a raw view of the replaced effective view was shown")
	}
	run(t, m, reload)
	if !m.raw.on || m.view.Len() != info.MessageCount || m.raw.eff != v {
		t.Fatalf("after the reload: raw %v, %d items for %d stored messages", m.raw.on, m.view.Len(), info.MessageCount)
	}
	// R again while it is on its way cancels it.
	press(t, m, "R")
	_, cmd = m.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
	m.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
	run(t, m, cmd)
	if m.raw.on {
		t.Fatal("R twice still opened the raw view")
	}
}
