package dialog

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/ops"
	"weft/themes"
)

// The sessions list's housekeeping: ctrl+r renames the session under the
// cursor (a line with its title), ctrl+x deletes it once the operator has
// said yes to a question naming it and its size. Each is a dialog in
// front of the list, as wide as the list; the root makes the change
// through the Service (rename_session, delete_session), as an agent's
// would, and reads the list again when it is done.

// Rename is the line a session's new title is typed on: enter renames,
// esc cancels. It stays until the rename is done: a refused title is
// there to correct, with the reason under it.
type Rename struct {
	id    string
	keys  renameKeys
	input textinput.Model
	said  string // why the last title was refused
}

// renameKeys is the rename line's keys; every other key edits the title.
type renameKeys struct {
	Save, Cancel key.Binding
}

// ShortHelp is what the line's hint lists.
func (k renameKeys) ShortHelp() []key.Binding { return []key.Binding{k.Save, k.Cancel} }

// NewRename opens the rename line on session s's title.
func NewRename(st *themes.Styles, s ops.SessionOut) *Rename {
	in := NewTextInput(st)
	in.Prompt = "› "
	in.SetValue(s.Title)
	in.CursorEnd()
	in.Focus()
	return &Rename{id: s.SessionID, input: in, keys: renameKeys{
		Save:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "renames")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancels")),
	}}
}

// ID is the session being renamed.
func (d *Rename) ID() string { return d.id }

// HandleMsg renames on enter and cancels on esc; anything else edits the
// title.
func (d *Rename) HandleMsg(msg tea.Msg) Action {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			return ActionClose{}
		case key.Matches(k, d.keys.Save):
			d.said = ""
			return ActionRenameSession{ID: d.id, Title: d.input.Value()}
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return cmdAction(cmd)
}

// Fail shows why the title was refused; the line stays with the title
// typed.
func (d *Rename) Fail(reason string) { d.said = reason }

// View draws the line in the list's place.
func (d *Rename) View(width int, st *themes.Styles) string {
	w := min(width-4, 110)
	d.input.SetWidth(w - 6)
	lines := []string{st.Dialog.Title.Render("Rename the session"), d.input.View()}
	if d.said != "" {
		lines = append(lines, said(st.Status.Error, d.said, w-4))
	}
	lines = append(lines, Hint(st, "", d.keys.ShortHelp()))
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}

// ConfirmDelete asks before a session is deleted, naming it and its
// size: y deletes it, n or esc keeps it, any other key asks again.
type ConfirmDelete struct {
	session ops.SessionOut
	keys    confirmKeys
}

// confirmKeys answer the question.
type confirmKeys struct {
	Yes, No key.Binding
}

// ShortHelp is what the question's hint lists.
func (k confirmKeys) ShortHelp() []key.Binding { return []key.Binding{k.Yes, k.No} }

// NewConfirmDelete asks whether to delete s, as the list showed it.
func NewConfirmDelete(s ops.SessionOut) *ConfirmDelete {
	return &ConfirmDelete{session: s, keys: confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "deletes it")),
		No:  key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n", "keeps it")),
	}}
}

// HandleMsg takes the answer.
func (d *ConfirmDelete) HandleMsg(msg tea.Msg) Action {
	k, ok := msg.(tea.KeyPressMsg)
	switch {
	case !ok:
		return nil
	case key.Matches(k, d.keys.Yes):
		return ActionDeleteSession{Session: d.session}
	case key.Matches(k, d.keys.No):
		return ActionClose{}
	}
	return nil
}

// View draws the question in the list's place.
func (d *ConfirmDelete) View(width int, st *themes.Styles) string {
	w := min(width-4, 110)
	s := d.session
	q := fmt.Sprintf("Delete “%s”, %s (%s tokens)? It cannot be undone.", termsafe.Line(s.Title), english.Count(s.MessageCount, "message"), english.Thousands(s.Tokens))
	lines := []string{st.Dialog.Title.Render("Delete a session"), said(st.Status.Error, q, w-4), Hint(st, "", d.keys.ShortHelp())}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}
