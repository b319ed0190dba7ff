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
	go r.Watch(ctx, func(ev ops.Event) { ht.events <- ev })
	ht.m = New(r, Options{Theme: "dark", Holder: r})
	run(t, ht.m, ht.m.loadView(""))
	_, cmd := ht.m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	run(t, ht.m, cmd)
	// The watch is open once a write is heard through it: a write that
	// changes nothing of the thread, made until one is heard.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := svc.SetActiveTags(context.Background(), ops.SetActiveTagsArgs{SessionID: ht.m.sid}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ht.events:
			return ht
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch through the holder heard nothing in 10 s")
		}
	}
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

// lastOp is the latest operation in the holder's file.
func (ht *heldTUI) lastOp(t *testing.T) model.Op {
	t.Helper()
	list, err := ht.holder.Operations(ht.m.sid)
	if err != nil || len(list) == 0 {
		t.Fatalf("the holder's operations: %d, %v", len(list), err)
	}
	return list[len(list)-1]
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
	if op := ht.lastOp(t); op.Type != model.OpTag || op.Author != "operator" || op.Payload.Tags[0] != "through" {
		t.Fatalf("the tag in the holder's file: %+v", op)
	}
	if s := screen(m); !strings.Contains(s, "#through") || !strings.Contains(s, "tagged") {
		t.Fatalf("the tag does not show:\n%s", s)
	}
	press(t, m, "k", "v", "k", "s")
	snip := ht.lastOp(t)
	if snip.Type != model.OpSnip || snip.Author != "operator" || len(snip.Targets) != 2 {
		t.Fatalf("the snip in the holder's file: %+v", snip)
	}
	press(t, m, "u")
	if op := ht.lastOp(t); op.ID != snip.ID || !op.Reverted() {
		t.Fatalf("u did not undo the snip in the holder's file: %+v", op)
	}
	send(t, m, keyRedo)
	if op := ht.lastOp(t); op.ID != snip.ID || op.Reverted() {
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
	if op := ht.lastOp(t); op.Author != "agent-7" || op.Reverted() {
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
	if s := screen(m); !strings.Contains(s, "enter again makes the edit on the same items as they are now") {
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
