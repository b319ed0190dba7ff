// Package dialog is the TUI's dialogs: the modals in front of the
// thread (tag, digest, revise, insert, the time jump, the filter, the
// operations panel, the sessions list with its rename and delete). A
// dialog is a plain struct: the root model forwards it the keys while
// it is in front, and does what the Action it returns asks. Dialogs
// neither call the service nor do I/O: what they ask for goes back to
// the root as an action (open a session, revert an operation, jump to a
// time), or, for an edit, as the command the root's own callback made
// of what was submitted; the answers come back through their methods
// (Fail, Edited, SetList, ...).
package dialog

import (
	tea "charm.land/bubbletea/v2"

	"weft/themes"
)

// Dialog is a modal in front of the thread.
type Dialog interface {
	// HandleMsg takes a key, or an answer meant for the dialog, and
	// says what the root is to do: nil for nothing.
	HandleMsg(msg tea.Msg) Action
	// View draws the dialog for a screen width wide.
	View(width int, st *themes.Styles) string
}

// Waiter is a dialog some of whose keys mean something only once an
// answer on its way has come (enter on a list still being ranked): the
// root holds such a key, and the keys after it, until Waits says no more.
type Waiter interface {
	Waits(k tea.KeyPressMsg) bool
}

// Msg is the answer of a dialog's own command (the sessions list's
// ranking): the root hands it to Overlay.Deliver, which gives it to the
// dialog it is for, wherever that stands.
type Msg interface {
	dialog() Dialog
}

// For is the answer of a command of a dialog kept in a package of its
// own (tui/diffview), as a Msg: Deliver hands Dialog the For itself, and
// the dialog reads its Msg out of it.
type For struct {
	Dialog Dialog
	Msg    tea.Msg
}

func (f For) dialog() Dialog { return f.Dialog }

// Overlay is the stack of dialogs in front of the thread, the front one
// last: it gets the keys and is the one drawn. A rename or a question
// stands in front of the sessions list, which waits under it. The zero
// Overlay has no dialog.
type Overlay struct {
	stack []Dialog
}

// Open puts d in front.
func (o *Overlay) Open(d Dialog) { o.stack = append(o.stack, d) }

// Front is the dialog in front, or nil when there is none.
func (o *Overlay) Front() Dialog {
	if len(o.stack) == 0 {
		return nil
	}
	return o.stack[len(o.stack)-1]
}

// Close takes d away, wherever it stands; closing a dialog that is not
// open does nothing.
func (o *Overlay) Close(d Dialog) {
	for i := len(o.stack) - 1; i >= 0; i-- {
		if o.stack[i] == d {
			o.stack = append(o.stack[:i], o.stack[i+1:]...)
			return
		}
	}
}

// Deliver hands msg to the dialog it is for, if that is still open, and
// returns that dialog and what it asks; nil, nil when it was closed.
func (o *Overlay) Deliver(msg Msg) (Dialog, Action) {
	d := msg.dialog()
	for _, open := range o.stack {
		if open == d {
			return d, d.HandleMsg(msg)
		}
	}
	return nil, nil
}

// Find returns the front-most open dialog of type T.
func Find[T Dialog](o *Overlay) (T, bool) {
	for i := len(o.stack) - 1; i >= 0; i-- {
		if d, ok := o.stack[i].(T); ok {
			return d, true
		}
	}
	var none T
	return none, false
}
