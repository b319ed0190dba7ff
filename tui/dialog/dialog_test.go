package dialog

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"weft/ops"
	"weft/themes"
)

var (
	keyEnter = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc   = tea.KeyPressMsg{Code: tea.KeyEscape}
)

func press(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }

func TestOverlayStacksDialogs(t *testing.T) {
	var o Overlay
	if o.Front() != nil {
		t.Fatal("an empty overlay has a front dialog")
	}
	st := themes.New(themes.Default(true), true)
	list := NewSessions(st, nil)
	o.Open(list)
	rename := NewRename(st, ops.SessionOut{SessionID: "s1", Title: "one"})
	o.Open(rename)
	if o.Front() != rename {
		t.Fatal("the dialog opened last is not in front")
	}
	if p, ok := Find[*Sessions](&o); !ok || p != list {
		t.Fatal("the list under the rename is not found")
	}
	// The list's ranking reaches it under the rename.
	cmd := list.SetSessions([]ops.SessionOut{{SessionID: "s1", Title: "one"}}, []string{"one"})
	if d, _ := o.Deliver(cmd().(Msg)); d != list || len(list.Shown()) != 1 {
		t.Fatalf("the ranking went to %T; the list shows %d", d, len(list.Shown()))
	}
	o.Close(rename)
	if o.Front() != list {
		t.Fatal("closing the rename did not leave the list in front")
	}
	o.Close(list)
	o.Close(list) // closing a closed dialog does nothing
	if o.Front() != nil {
		t.Fatal("dialogs left after closing them all")
	}
	if d, a := o.Deliver(cmd().(Msg)); d != nil || a != nil {
		t.Fatal("a closed dialog was handed a message")
	}
}

// The sessions list asks for what its keys mean; the rename and the
// question in front of it ask for the change, and only for it.
func TestSessionsAskTheRoot(t *testing.T) {
	st := themes.New(themes.Default(true), true)
	s := ops.SessionOut{SessionID: "s1", Title: "one", Version: 3}
	list := NewSessions(st, nil)
	list.HandleMsg(list.SetSessions([]ops.SessionOut{s}, []string{"one"})())
	if a, ok := list.HandleMsg(keyEnter).(ActionOpenSession); !ok || a.ID != "s1" {
		t.Fatalf("enter asked for %+v", a)
	}
	open, ok := list.HandleMsg(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}).(ActionOpen)
	rename, isRename := open.Dialog.(*Rename)
	if !ok || !isRename || rename.ID() != "s1" {
		t.Fatalf("ctrl+r asked for %+v", open)
	}
	rename.HandleMsg(press("!"))
	if a, ok := rename.HandleMsg(keyEnter).(ActionRenameSession); !ok || a.ID != "s1" || a.Title != "one!" {
		t.Fatalf("enter in the rename asked for %+v", a)
	}
	if _, ok := rename.HandleMsg(keyEsc).(ActionClose); !ok {
		t.Fatal("esc does not close the rename")
	}
	open, _ = list.HandleMsg(tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl}).(ActionOpen)
	ask, ok := open.Dialog.(*ConfirmDelete)
	if !ok {
		t.Fatalf("ctrl+x opened %T", open.Dialog)
	}
	if a := ask.HandleMsg(press("z")); a != nil {
		t.Fatalf("a key that is no answer asked for %+v", a)
	}
	if a, ok := ask.HandleMsg(press("y")).(ActionDeleteSession); !ok || a.Session.Version != 3 {
		t.Fatalf("y asked for %+v", a)
	}
	if _, ok := ask.HandleMsg(press("n")).(ActionClose); !ok {
		t.Fatal("n does not close the question")
	}
}
