package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/tui/dialog"
)

// asyncProgram drives the model the way bubbletea does: Update and View
// on one goroutine (the test's), every command on a goroutine of its own,
// their messages back through a channel. While a key's commands run,
// Update goes on handling messages that rewrite the model (a reload of
// the view, a resize), so under -race a command that reads the model
// instead of the values captured for it is caught.
type asyncProgram struct {
	t        *testing.T
	m        *Model
	msgs     chan tea.Msg
	inflight int
}

func newAsyncProgram(t *testing.T, m *Model) *asyncProgram {
	return &asyncProgram{t: t, m: m, msgs: make(chan tea.Msg, 64)}
}

// start runs a command on its own goroutine.
func (p *asyncProgram) start(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	p.inflight++
	go func() { p.msgs <- cmd() }()
}

// handle gives a message to Update (a batch is started command by
// command, as the program does) and starts what Update returns.
func (p *asyncProgram) handle(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil, statusTimerMsg:
		return // the timer that clears a message: not wanted in tests
	case tea.BatchMsg:
		for _, c := range msg {
			p.start(c)
		}
		return
	}
	_, cmd := p.m.Update(msg)
	_ = p.m.View()
	p.start(cmd)
}

// send hands Update a message, keeps Update busy while the commands it
// started run, and waits for everything that follows from them.
func (p *asyncProgram) send(msg tea.Msg) {
	p.t.Helper()
	// The reload is read before the message is handled, so reading it
	// does not order this goroutine after the commands (the service's
	// lock would).
	info, v, err := p.m.svc.View(p.m.sid)
	reload := viewLoadedMsg{info, v, err}
	p.handle(msg)
	p.handle(reload)
	p.handle(tea.WindowSizeMsg{Width: p.m.width, Height: p.m.height})
	p.settle()
}

func (p *asyncProgram) settle() {
	p.t.Helper()
	for p.inflight > 0 {
		select {
		case msg := <-p.msgs:
			p.inflight--
			p.handle(msg)
		case <-time.After(10 * time.Second):
			p.t.Fatalf("%d commands did not return in 10 s", p.inflight)
		}
	}
}

func (p *asyncProgram) press(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		p.send(keyPress(k))
	}
}

func (p *asyncProgram) typeText(s string) {
	p.t.Helper()
	for _, r := range s {
		p.send(keyPress(string(r)))
	}
}

// keyPress is the key press a key's name stands for.
func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return keyEnter
	case "esc":
		return keyEsc
	case "space", " ":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "ctrl+s":
		return keySave
	case "ctrl+r":
		return keyRedo
	case "ctrl+g":
		return tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// TestCommandsRunBesideUpdate makes every kind of edit, and the reads
// around them, with the commands on their own goroutines while Update
// handles other messages. `go test -race ./tui` fails if a command reads
// or writes the model.
func TestCommandsRunBesideUpdate(t *testing.T) {
	t.Parallel()
	m, svc := demoModel(t, 110, 36)
	p := newAsyncProgram(t, m)
	want := func(typ model.OpType, what string) {
		t.Helper()
		op := lastOp(t, svc, m.sid)
		if op.Type != typ || op.Author != "operator" {
			t.Fatalf("%s: the latest operation is %s by %s, want %s", what, op.Type, op.Author, typ)
		}
	}

	p.press("G", "k", "t")
	p.typeText("late")
	p.press("enter")
	want(model.OpTag, "t")

	p.press("g", "j", "j", "v", "j", "j", "d", "ctrl+g")
	if d, ok := m.dialogs.Front().(*dialog.Text); !ok || d.Value() == "" {
		t.Fatalf("ctrl+g drafted nothing into %T", m.dialogs.Front())
	}
	p.press("ctrl+s")
	want(model.OpDigest, "v j j d ctrl+s")

	p.press("j", "s")
	want(model.OpSnip, "s")

	p.press("j", "r")
	if m.dialogs.Front() == nil {
		t.Fatal("r opened no dialog")
	}
	p.typeText(" (revised)")
	p.press("ctrl+s")
	want(model.OpRevise, "r ctrl+s")

	p.press("i")
	p.typeText("a note")
	p.press("ctrl+s")
	want(model.OpInsert, "i ctrl+s")

	m.cursor = m.rows.RowOfItem(30)
	p.press("J", "J", "enter")
	want(model.OpResequence, "J J enter")

	n := len(mustOps(t, svc, m.sid))
	p.press("u")
	if op := lastOp(t, svc, m.sid); !op.Reverted() {
		t.Fatalf("u did not revert the %s", op.Type)
	}
	p.press("ctrl+r")
	if op := lastOp(t, svc, m.sid); op.Reverted() {
		t.Fatalf("ctrl+r did not restore the %s", op.Type)
	}

	p.press("o", "j", "space")
	if list := mustOps(t, svc, m.sid); list[1].Active {
		t.Fatalf("space in the panel did not switch the %s off", list[1].Type)
	}
	p.press("space", "x", "y")
	if list := mustOps(t, svc, m.sid); !list[1].Reverted() {
		t.Fatalf("x in the panel did not revert the %s", list[1].Type)
	}
	p.press("k", "enter")
	if m.dialogs.Front() != nil {
		t.Fatal("enter in the panel did not jump")
	}
	if got := len(mustOps(t, svc, m.sid)); got != n {
		t.Fatalf("%d operations after undo, redo, toggle and revert, want %d", got, n)
	}

	// The reads: search, a time jump, the raw view, the sessions list.
	p.press("/")
	p.typeText("redis")
	if len(m.search.Hits()) == 0 {
		t.Fatal("the search found nothing")
	}
	p.press("enter", "n", "N", "T")
	p.typeText("2026-03-04 10:00Z")
	p.press("enter", "R", "j", "ctrl+d", "R", "tab", "esc")
	if m.raw.on || m.dialogs.Front() != nil || m.view == nil {
		t.Fatalf("after the reads: raw %v, dialog %T", m.raw.on, m.dialogs.Front())
	}
}
