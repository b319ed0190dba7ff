package dialog

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"weft/ops"
	"weft/ops/search"
)

// Action is what a dialog asks of the root: one of the Action types
// below, or nil for nothing. The root type-switches on it; the dialog
// that asked stays open unless the action says it closes.
type Action any

// ActionCmd is a command for the root to run: the dialog's own widgets'
// (a text input's, the sessions list's ranking), or the edit the root's
// callback made of what was submitted, whose dialog then waits, open,
// for the edit to be done (Fail says why when it is refused).
type ActionCmd struct {
	Cmd tea.Cmd
}

// ActionClose closes the dialog that asked; Notice, when there is one,
// is said on the status bar.
type ActionClose struct {
	Notice string
}

// ActionOpen puts Dialog in front of the one that asked (a rename in
// front of the sessions list).
type ActionOpen struct {
	Dialog Dialog
}

// ActionOpenEditor asks for Text to be edited in $EDITOR; what comes
// back is handed to the dialog with Text.Edited.
type ActionOpenEditor struct {
	Text string
}

// ActionJumpToTime asks for the cursor to go to the time When, read as
// counted from Base (T's dialog). A time that cannot be read comes back
// with Time.Fail; one that can closes the dialog.
type ActionJumpToTime struct {
	When string
	Base time.Time
}

// ActionFilter closes the filter dialog and shows only the items By
// picks (Expr is as typed).
type ActionFilter struct {
	Expr string
	By   search.ItemFilter
}

// ActionJump closes the operations panel and puts the cursor on item
// Index, where an operation shows.
type ActionJump struct {
	Index int
}

// ActionToggleOperation switches operation ID on (Active) or off; What
// says so, for the status bar.
type ActionToggleOperation struct {
	ID     string
	Active bool
	What   string
}

// ActionRevertOperation reverts operation ID for good, the operator
// having said yes; What says so.
type ActionRevertOperation struct {
	ID   string
	What string
}

// ActionOpenSession closes the sessions list and opens session ID.
type ActionOpenSession struct {
	ID string
}

// ActionRenameSession renames session ID to Title. The rename stays
// open until the root closes it, or shows why the title was refused
// (Rename.Fail).
type ActionRenameSession struct {
	ID, Title string
}

// ActionDeleteSession closes the question and deletes Session, refused
// if it changed since it was listed: the operator said yes to what they
// saw.
type ActionDeleteSession struct {
	Session ops.SessionOut
}
