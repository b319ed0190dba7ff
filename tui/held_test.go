package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/demo"
	"weft/model"
	"weft/ops"
	"weft/ops/httpx"
	"weft/ops/listen"
	"weft/ops/mcpserver"
	"weft/ops/relay"
	"weft/ops/tools"
	"weft/tui/dialog"
)

// The TUI through the weft that holds the file: a listener over the
// holder's service serving what weft serve serves other wefts, and the
// TUI over relay.Remote to it, as cmd/weft opens it on a held file.

// heldTUI is the TUI working through a holder in this test.
type heldTUI struct {
	m      *Model
	holder *ops.Service // the holder's: what is in the file
	events chan ops.Event
}

// openHeld opens the demo thread's file in a holder and the TUI through
// it, w×h; the watch through the holder feeds events.
func openHeld(t *testing.T, w, h int) *heldTUI {
	t.Helper()
	svc := newService(t)
	if _, err := demo.Seed(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(tools.Local{Service: svc}, mcpserver.Options{})
	l, err := listen.Listen(listen.Options{Addr: "127.0.0.1:0", Entry: httpx.MCPPath, Faces: []httpx.Face{srv.Face(), relay.HolderFace(svc, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	r, err := relay.Dial(l.Addr(), relay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ht := &heldTUI{holder: svc, events: make(chan ops.Event, 256)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// The watch says when its stream is open: a write after that is
	// heard (before, the test wrote until one was, and each write it made
	// was one more version for a conflict to list).
	opened := make(chan struct{})
	go r.WatchOpened(ctx, func(ev ops.Event) { ht.events <- ev }, func() bool { close(opened); return true })
	ht.m = New(r, Options{Theme: "dark", Holder: r})
	run(t, ht.m, ht.m.loadView(""))
	_, cmd := ht.m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	run(t, ht.m, cmd)
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch through the holder did not open in 10 s")
	}
	return ht
}

// hear does what do does and hands the model every event the watch
// brings until one that until accepts.
func (ht *heldTUI) hear(t *testing.T, do func(), until func(ops.Event) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	do()
	for {
		select {
		case ev := <-ht.events:
			_, cmd := ht.m.Update(eventMsg(ev))
			run(t, ht.m, cmd)
			if until(ev) {
				return
			}
		case <-deadline:
			t.Fatal("the watch through the holder heard nothing in 10 s")
		}
	}
}

// Keys that edit, through the holder, land in the holder's file as the
// operator's, and u undoes them there; the status bar says the TUI works
// through that weft.
func TestTheTUIEditsThroughTheHolder(t *testing.T) {
	t.Parallel()
	ht := openHeld(t, 110, 30)
	m := ht.m
	if s := screen(m); !strings.Contains(s, "through weft at 127.0.0.1:") {
		t.Fatalf("the status bar does not say the TUI works through the holder:\n%s", s)
	}
	press(t, m, "t")
	typeText(t, m, "through")
	send(t, m, keyEnter)
	if op := lastOp(t, ht.holder, m.sid); op.Type != model.OpTag || op.Author != "operator" || op.Payload.Tags[0] != "through" {
		t.Fatalf("the tag in the holder's file: %+v", op)
	}
	if s := screen(m); !strings.Contains(s, "#through") || !strings.Contains(s, "tagged") {
		t.Fatalf("the tag does not show:\n%s", s)
	}
	press(t, m, "k", "v", "k", "s")
	snip := lastOp(t, ht.holder, m.sid)
	if snip.Type != model.OpSnip || snip.Author != "operator" || len(snip.Targets) != 2 {
		t.Fatalf("the snip in the holder's file: %+v", snip)
	}
	press(t, m, "u")
	if op := lastOp(t, ht.holder, m.sid); op.ID != snip.ID || !op.Reverted() {
		t.Fatalf("u did not undo the snip in the holder's file: %+v", op)
	}
	send(t, m, keyRedo)
	if op := lastOp(t, ht.holder, m.sid); op.ID != snip.ID || op.Reverted() {
		t.Fatalf("ctrl+r did not restore the snip in the holder's file: %+v", op)
	}
}

// An agent's edit through the holder shows in the TUI as it lands, as
// in-process: the thread is read again and the flash names the agent;
// u leaves the agent's edit alone.
func TestTheTUIThroughTheHolderShowsAgentsLive(t *testing.T) {
	t.Parallel()
	ht := openHeld(t, 110, 30)
	m := ht.m
	_, v, _ := ht.holder.View(m.sid)
	last := v.ID(v.Items[v.Len()-1])
	agent := ops.WithAuthor(context.Background(), "agent-7")
	ht.hear(t, func() {
		if _, err := ht.holder.SnipMessages(agent, ops.SnipArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{last}}}); err != nil {
			t.Fatal(err)
		}
	}, func(ev ops.Event) bool { return ev.Kind == ops.EventOpCreated })
	if s := screen(m); !strings.Contains(s, "by agent-7") || m.view.Len() != v.Len()-1 {
		t.Fatalf("the agent's snip does not show (%d items, were %d):\n%s", m.view.Len(), v.Len(), s)
	}
	press(t, m, "u")
	if op := lastOp(t, ht.holder, m.sid); op.Author != "agent-7" || op.Reverted() {
		t.Fatalf("u touched the agent's snip: %+v", op)
	}
}

// An edit the holder refuses (an agent's edit took the items first) is
// refused as in-process, as a conflict the dialog offers to make again,
// and the holder's file is as the agent left it.
func TestTheTUIThroughTheHolderIsRefusedAsInProcess(t *testing.T) {
	t.Parallel()
	ht := openHeld(t, 110, 30)
	m := ht.m
	_, v, _ := ht.holder.View(m.sid)
	last := v.ID(v.Items[v.Len()-1])
	// The agent digests the item under the cursor; the TUI has not heard.
	agent := ops.WithAuthor(context.Background(), "agent-7")
	if _, err := ht.holder.DigestMessages(agent, ops.DigestArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{last}}, Summary: "the agent's"}); err != nil {
		t.Fatal(err)
	}
	before, _, _ := ht.holder.View(m.sid)
	press(t, m, "t")
	typeText(t, m, "late")
	send(t, m, keyEnter)
	if now, _, _ := ht.holder.View(m.sid); now.Version != before.Version {
		t.Fatalf("a refused tag moved the holder's version from %d to %d", before.Version, now.Version)
	}
	// Said in the dialog, wherever its lines wrap.
	if s := screen(m); !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(s, "│", " ")), " "), "enter again makes the edit on the same items as they are now") {
		t.Fatalf("the conflict is not said as in-process:\n%s", s)
	}
}

// When the weft the TUI works through stops answering, the status bar
// says so; when one answers again, the thread is read again.
func TestTheTUISaysTheHolderWentAndCameBack(t *testing.T) {
	t.Parallel()
	ht := openHeld(t, 110, 30)
	m := ht.m
	_, cmd := m.Update(eventMsg{Kind: tools.EventLost})
	run(t, m, cmd)
	if s := screen(m); !strings.Contains(s, "gone") || !strings.Contains(s, "stopped answering") {
		t.Fatalf("the holder's going is not said:\n%s", s)
	}
	// Written while the TUI heard nothing.
	if _, err := ht.holder.RenameSession(context.Background(), ops.RenameSessionArgs{SessionID: m.sid, Title: "Renamed meanwhile"}); err != nil {
		t.Fatal(err)
	}
	_, cmd = m.Update(eventMsg{Kind: tools.EventGap})
	run(t, m, cmd)
	if s := screen(m); strings.Contains(s, "gone") || !strings.Contains(s, "Renamed meanwhile") || !strings.Contains(s, "holds the file again") {
		t.Fatalf("the thread is not read again when the holder is back:\n%s", s)
	}
}

// Every key that reads or writes works through the holder as it does
// in-process: search (fuzzy and exact) and n, the time jump, the
// sessions list (with its dates) and a rename there, the operations
// list and a switch there, the raw view, the filter, y, the digest with
// its draft, revise (the originals read through the holder), insert and
// a move; each edit lands in the holder's file as the operator's.
func TestEveryKeyWorksThroughTheHolder(t *testing.T) {
	t.Parallel()
	ht := openHeld(t, 110, 36)
	m, svc := ht.m, ht.holder
	noError := func(what string) {
		t.Helper()
		if m.statusErr || m.err != nil {
			t.Fatalf("%s through the holder: %q %v\n%s", what, m.status, m.err, screen(m))
		}
	}
	ops0 := len(mustOps(t, svc, m.sid))
	operator := func(what string, typ model.OpType) {
		t.Helper()
		list := mustOps(t, svc, m.sid)
		if len(list) != ops0+1 {
			t.Fatalf("%s: %d operations in the holder's file, want %d", what, len(list), ops0+1)
		}
		ops0++
		if op := list[len(list)-1]; op.Type != typ || op.Author != "operator" {
			t.Fatalf("%s made %+v in the holder's file", what, op)
		}
		noError(what)
	}

	press(t, m, "/")
	typeText(t, m, "limiter")
	if len(m.search.Hits()) == 0 {
		t.Fatalf("a fuzzy search through the holder found nothing:\n%s", screen(m))
	}
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	if !m.search.Exact() || len(m.search.Hits()) == 0 {
		t.Fatalf("an exact search through the holder found nothing:\n%s", screen(m))
	}
	send(t, m, keyEsc)
	press(t, m, "g", "n")
	if s := lineWith(screen(m), "tokens"); !strings.Contains(s, "match ") {
		t.Fatalf("n through the holder:\n%s", s)
	}

	press(t, m, "T")
	typeText(t, m, "-1h")
	send(t, m, keyEnter)
	if m.dialogs.Front() != nil {
		t.Fatalf("the time jump through the holder:\n%s", screen(m))
	}
	noError("T")

	send(t, m, tea.KeyPressMsg{Code: tea.KeyTab})
	if _, ok := dialog.Find[*dialog.Sessions](&m.dialogs); !ok || !strings.Contains(screen(m), demo.Title) || !strings.Contains(screen(m), demo.Start.Local().Format("Jan 02")+" – ") {
		t.Fatalf("the sessions list through the holder:\n%s", screen(m))
	}
	send(t, m, tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	for range len(demo.Title) {
		send(t, m, tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	typeText(t, m, "Renamed here")
	send(t, m, keyEnter)
	if info, _, _ := svc.View(m.sid); info.Title != "Renamed here" {
		t.Fatalf("the rename through the holder: %q\n%s", info.Title, screen(m))
	}
	send(t, m, keyEsc)

	press(t, m, "o")
	p := panelTo(t, m, model.OpDigest)
	op, _ := p.Current()
	send(t, m, keySpace)
	if got := opByID(t, svc, m.sid, op.OperationID); got.Active {
		t.Fatalf("space in the operations list through the holder left the digest on\n%s", screen(m))
	}
	send(t, m, keySpace)
	send(t, m, keyEsc)
	noError("o")

	press(t, m, "R")
	if !strings.Contains(screen(m), "raw: stored") {
		t.Fatalf("R through the holder:\n%s", screen(m))
	}
	press(t, m, "R")

	press(t, m, "F")
	typeText(t, m, "role:assistant")
	send(t, m, keyEnter)
	if !m.feat.filter.on() || m.rows.Len() == 0 {
		t.Fatalf("the filter through the holder:\n%s", screen(m))
	}
	press(t, m, "F")
	noError("F")

	press(t, m, "G")
	if text, ok := clipboard(pressCollect(t, m, keyText("y"))); !ok || !strings.HasPrefix(text, "--- ") {
		t.Fatalf("y through the holder put %q (%v)", text, ok)
	}

	press(t, m, "k", "k", "v", "k", "d")
	send(t, m, tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	if !strings.Contains(screen(m), "drafted locally (extractive)") {
		t.Fatalf("the draft through the holder:\n%s", screen(m))
	}
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	operator("the digest", model.OpDigest)

	press(t, m, "G", "r")
	d, ok := m.dialogs.Front().(*dialog.Text)
	if !ok || !strings.Contains(d.Value(), "--- ") {
		t.Fatalf("revise through the holder did not read the originals:\n%s", screen(m))
	}
	typeText(t, m, " (revised)")
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	operator("the revise", model.OpRevise)

	press(t, m, "i")
	typeText(t, m, "an aside, inserted")
	send(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	operator("the insert", model.OpInsert)

	press(t, m, "k", "k", "J")
	send(t, m, keyEnter)
	operator("the move", model.OpResequence)
}

// An agent's edit that lands through the holder while the operator types
// in a dialog shows at once, and the operator's edit then lands on the
// items picked, where they stand now.
func TestAnAgentEditsWhileTheOperatorTypesThroughTheHolder(t *testing.T) {
	t.Parallel()
	ht := openHeld(t, 110, 36)
	m, svc := ht.m, ht.holder
	picked := cursorID(m)
	press(t, m, "t")
	typeText(t, m, "mid")
	_, v, _ := svc.View(m.sid)
	first := v.ID(v.Items[v.Len()-5])
	agent := ops.WithAuthor(context.Background(), "agent-7")
	ht.hear(t, func() {
		if _, err := svc.SnipMessages(agent, ops.SnipArgs{Selection: ops.Selection{SessionID: m.sid, IDs: []model.ItemID{first}}}); err != nil {
			t.Fatal(err)
		}
	}, func(ev ops.Event) bool { return ev.Kind == ops.EventOpCreated })
	if s := screen(m); !strings.Contains(s, "by agent-7") || m.dialogs.Front() == nil {
		t.Fatalf("the agent's snip while the dialog is open:\n%s", s)
	}
	typeText(t, m, "way")
	send(t, m, keyEnter)
	op := lastOp(t, svc, m.sid)
	if op.Type != model.OpTag || op.Author != "operator" || op.Payload.Tags[0] != "midway" || len(op.Targets) != 1 || op.Targets[0] != picked {
		t.Fatalf("the operator's tag after the agent's snip: %+v (picked %s)\n%s", op, picked, screen(m))
	}
}
