package dialog

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"weft/themes"
)

// textKeys is the keys of a text dialog; the text area's own editing
// keys come on top. Draft is on only where there is a drafter.
type textKeys struct {
	Submit, Draft, Editor, Cancel key.Binding
}

// ShortHelp is what the dialog's hint lists.
func (k textKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Submit, k.Draft, k.Editor, k.Cancel}
}

// Text edits text over several lines (a summary, messages). ctrl+s
// submits, esc cancels, ctrl+e asks for the text in $EDITOR, and ctrl+g
// asks for a draft when the dialog has a drafter (the digest's summary).
type Text struct {
	title, note string // note says how to write the text, if it needs saying
	keys        textKeys
	area        textarea.Model
	submit      func(value string) Action
	draft       func() tea.Cmd // nil: no drafts here (see WithDrafter)
	said        string         // what the last editor run or draft said
	saidErr     bool
}

// NewText opens a text dialog on value; action says what ctrl+s does
// ("to digest"), for the hint, and submit makes the edit of the text
// (the dialog waits, open, until it is done).
func NewText(st *themes.Styles, title, note, action, value string, submit func(value string) tea.Cmd) *Text {
	return newText(st, title, note, action, value, func(v string) Action { return ActionCmd{submit(v)} })
}

func newText(st *themes.Styles, title, note, action, value string, submit func(string) Action) *Text {
	ta := textarea.New()
	ta.SetStyles(st.TextArea)
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	// MaxHeight bounds the lines the text may have, not only the lines
	// shown: left at its default, a text longer than 99 lines would be
	// cut and could not grow.
	ta.MaxHeight = 0
	ta.SetValue(value)
	ta.Focus()
	keys := textKeys{
		Submit: key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", action)),
		Draft:  key.NewBinding(key.WithKeys("ctrl+g"), key.WithHelp("ctrl+g", "draft one"), key.WithDisabled()),
		Editor: key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "for $EDITOR")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "to cancel")),
	}
	return &Text{title: title, note: note, keys: keys, area: ta, submit: submit}
}

// WithDrafter lets ctrl+g ask draft for a text; what it drafts comes
// back with Drafted.
func (d *Text) WithDrafter(draft func() tea.Cmd) *Text {
	d.draft = draft
	d.keys.Draft.SetEnabled(draft != nil)
	return d
}

// HandleMsg answers the dialog's keys; every other message goes to the
// text area.
func (d *Text) HandleMsg(msg tea.Msg) Action {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			return ActionClose{}
		case key.Matches(k, d.keys.Submit):
			return d.submit(d.area.Value())
		case key.Matches(k, d.keys.Editor):
			return ActionOpenEditor{Text: d.area.Value()}
		case key.Matches(k, d.keys.Draft):
			d.said, d.saidErr = "drafting…", false
			return ActionCmd{d.draft()}
		}
	}
	var cmd tea.Cmd
	d.area, cmd = d.area.Update(msg)
	return cmdAction(cmd)
}

// Edited takes the text back from $EDITOR, or says why the editor
// failed.
func (d *Text) Edited(text string, err error) {
	if err != nil {
		d.said, d.saidErr = "editor: "+err.Error(), true
		return
	}
	d.area.SetValue(strings.TrimRight(text, "\n"))
	d.said = ""
}

// Drafted takes a drafted text and says who wrote it, or says why the
// draft failed.
func (d *Text) Drafted(text, by string, err error) {
	if err != nil {
		d.said, d.saidErr = "draft: "+err.Error(), true
		return
	}
	d.area.SetValue(text)
	d.said, d.saidErr = by+": edit it, then "+d.keys.Submit.Help().Key, false
}

// View draws the dialog: its title, the text, the hint and what the
// last editor run or draft said.
func (d *Text) View(width int, st *themes.Styles) string {
	w := min(width-4, 100)
	d.area.SetWidth(w - 4)
	d.area.SetHeight(10)
	parts := []string{st.Dialog.Title.Render(d.title), d.area.View(), Hint(st, d.note, d.keys.ShortHelp())}
	if d.said != "" {
		style := st.Dialog.Hint
		if d.saidErr {
			style = st.Status.Error
		}
		parts = append(parts, said(style, d.said, w-4))
	}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, parts...))
}

// Fail shows why the edit was refused; the dialog stays open with the
// text typed.
func (d *Text) Fail(reason string) { d.said, d.saidErr = reason, true }

// SubmitKey names the key that submits.
func (d *Text) SubmitKey() string { return d.keys.Submit.Help().Key }

// Title is the dialog's title.
func (d *Text) Title() string { return d.title }

// Value is the text as it stands.
func (d *Text) Value() string { return d.area.Value() }

// SetValue replaces the text.
func (d *Text) SetValue(s string) { d.area.SetValue(s) }

// Said is what the dialog says under the text: a refusal, what a draft
// or the editor said; "" for nothing.
func (d *Text) Said() string { return d.said }

// CanDraft reports whether ctrl+g drafts a text here.
func (d *Text) CanDraft() bool { return d.draft != nil }
