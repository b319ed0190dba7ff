package dialog

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"weft/themes"
)

// inputKeys is the keys of a one-line dialog; the input's own editing
// keys come on top.
type inputKeys struct {
	Submit, Cancel key.Binding
}

// ShortHelp is what the dialog's hint lists.
func (k inputKeys) ShortHelp() []key.Binding { return []key.Binding{k.Submit, k.Cancel} }

// Input asks for one line (a tag, a filter).
type Input struct {
	title, note string // note says what to type
	keys        inputKeys
	input       textinput.Model
	submit      func(value string) Action
	failed      string // why the last submit was refused
	// offered is a value shown dimmed in the empty input (the last
	// filter): enter on nothing takes it, tab takes it in to edit, and
	// typing starts afresh.
	offered string
}

// offer shows value in the empty input, to take with enter or tab.
func (d *Input) offer(value string) {
	d.offered = value
	d.input.Placeholder = value
}

// NewInput opens a one-line dialog on value, offering suggestions;
// action says what enter does ("to tag"), for the hint, and submit
// makes the edit of the line typed (the dialog waits, open, until it is
// done).
func NewInput(st *themes.Styles, title, note, action, value string, suggestions []string, submit func(value string) tea.Cmd) *Input {
	return newInput(st, title, note, action, value, suggestions, func(v string) Action { return ActionCmd{submit(v)} })
}

func newInput(st *themes.Styles, title, note, action, value string, suggestions []string, submit func(string) Action) *Input {
	in := NewTextInput(st)
	in.Prompt = "› "
	in.SetValue(value)
	in.SetSuggestions(suggestions)
	in.ShowSuggestions = len(suggestions) > 0
	in.Focus()
	keys := inputKeys{
		Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", action)),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "to cancel")),
	}
	return &Input{title: title, note: note, keys: keys, input: in, submit: submit}
}

// HandleMsg submits on enter and cancels on esc; every other message
// goes to the input.
func (d *Input) HandleMsg(msg tea.Msg) Action {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			return ActionClose{}
		case key.Matches(k, d.keys.Submit):
			v := strings.TrimSpace(d.input.Value())
			if v == "" {
				v = d.offered
			}
			return d.submit(v)
		case k.String() == "tab" && d.input.Value() == "" && d.offered != "":
			d.input.SetValue(d.offered)
			d.input.CursorEnd()
			return nil
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return cmdAction(cmd)
}

// View draws the dialog: its title, the input and the hint.
func (d *Input) View(width int, st *themes.Styles) string {
	w := min(width-4, 72)
	d.input.SetWidth(w - 6)
	parts := []string{st.Dialog.Title.Render(d.title), d.input.View(), Hint(st, d.note, d.keys.ShortHelp())}
	if d.failed != "" {
		parts = append(parts, said(st.Status.Error, d.failed, w-4))
	}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, parts...))
}

// Fail shows why the edit was refused; the dialog stays open with the
// text typed.
func (d *Input) Fail(reason string) { d.failed = reason }

// SubmitKey names the key that submits.
func (d *Input) SubmitKey() string { return d.keys.Submit.Help().Key }

// cmdAction is a widget's command as an action: nil for none.
func cmdAction(cmd tea.Cmd) Action {
	if cmd == nil {
		return nil
	}
	return ActionCmd{cmd}
}
