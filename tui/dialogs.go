package tui

import (
	"os"
	"os/exec"
	"strings"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/themes"
)

// dialog is a modal the root model forwards every message to while it is
// open. HandleMsg reports whether the dialog is done.
type dialog interface {
	HandleMsg(msg tea.Msg) (done bool, cmd tea.Cmd)
	View(width int, st *themes.Styles) string
}

// newInput makes a one-line input in the theme's styles.
func newInput(st *themes.Styles) textinput.Model {
	in := textinput.New()
	in.SetStyles(st.Input)
	return in
}

// inputDialog asks for one line (a tag, a time).
type inputDialog struct {
	title, hint string
	input       textinput.Model
	submit      func(value string) tea.Cmd
}

func newInputDialog(st *themes.Styles, title, hint, value string, suggestions []string, submit func(string) tea.Cmd) *inputDialog {
	in := newInput(st)
	in.Prompt = "› "
	in.SetValue(value)
	in.SetSuggestions(suggestions)
	in.ShowSuggestions = len(suggestions) > 0
	in.Focus()
	return &inputDialog{title: title, hint: hint, input: in, submit: submit}
}

func (d *inputDialog) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc":
			return true, nil
		case "enter":
			return true, d.submit(strings.TrimSpace(d.input.Value()))
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return false, cmd
}

func (d *inputDialog) View(width int, st *themes.Styles) string {
	w := min(width-4, 72)
	d.input.SetWidth(w - 6)
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left,
		st.Dialog.Title.Render(d.title), d.input.View(), st.Dialog.Hint.Render(d.hint)))
}

// textDialog edits text over several lines (a summary, messages). ctrl+s
// submits, esc cancels, ctrl+e hands the text to $EDITOR, and ctrl+g asks
// for a draft when the dialog has a drafter (the digest's summary).
type textDialog struct {
	title, hint string
	area        textarea.Model
	submit      func(value string) tea.Cmd
	draft       func() tea.Cmd // nil: no drafts here
	editor      string         // the command ctrl+e runs; empty: vi
	note        string         // what the last editor run or draft said
	noteErr     bool
}

type editorDoneMsg struct {
	text string
	err  error
}

// draftDoneMsg carries a drafted text and who wrote it.
type draftDoneMsg struct {
	text, by string
	err      error
}

// newTextDialog opens a text dialog in the model's styles, with its
// editor for ctrl+e.
func (m *Model) newTextDialog(title, hint, value string, submit func(string) tea.Cmd) *textDialog {
	st := m.styles
	ta := textarea.New()
	ta.SetStyles(st.TextArea)
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.SetValue(value)
	ta.Focus()
	return &textDialog{title: title, hint: hint, area: ta, submit: submit, editor: m.opts.Editor}
}

func (d *textDialog) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch msg.String() {
		case "esc":
			return true, nil
		case "ctrl+s":
			return true, d.submit(d.area.Value())
		case "ctrl+e":
			return false, openEditor(d.editor, d.area.Value())
		case "ctrl+g":
			if d.draft != nil {
				d.note, d.noteErr = "drafting…", false
				return false, d.draft()
			}
		}
	case editorDoneMsg:
		if msg.err != nil {
			d.note, d.noteErr = "editor: "+msg.err.Error(), true
			return false, nil
		}
		d.area.SetValue(strings.TrimRight(msg.text, "\n"))
		d.note = ""
		return false, nil
	case draftDoneMsg:
		if msg.err != nil {
			d.note, d.noteErr = "draft: "+msg.err.Error(), true
			return false, nil
		}
		d.area.SetValue(msg.text)
		d.note, d.noteErr = msg.by+": edit it, then ctrl+s", false
		return false, nil
	}
	var cmd tea.Cmd
	d.area, cmd = d.area.Update(msg)
	return false, cmd
}

func (d *textDialog) View(width int, st *themes.Styles) string {
	w := min(width-4, 100)
	d.area.SetWidth(w - 4)
	d.area.SetHeight(10)
	parts := []string{st.Dialog.Title.Render(d.title), d.area.View(), st.Dialog.Hint.Render(d.hint)}
	if d.note != "" {
		note := st.Dialog.Hint
		if d.noteErr {
			note = st.Status.Error
		}
		parts = append(parts, note.Render(ansi.Truncate(d.note, w-4, "…")))
	}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, parts...))
}

// openEditor edits text with the editor command (vi if empty), pausing
// the TUI.
func openEditor(editor, text string) tea.Cmd {
	f, err := os.CreateTemp("", "weft-*.md")
	if err != nil {
		return func() tea.Msg { return editorDoneMsg{err: err} }
	}
	path := f.Name()
	_, err = f.WriteString(text)
	f.Close()
	if err != nil {
		return func() tea.Msg { return editorDoneMsg{err: err} }
	}
	if strings.TrimSpace(editor) == "" {
		editor = "vi"
	}
	args := strings.Fields(editor)
	c := exec.Command(args[0], append(args[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorDoneMsg{err: err}
		}
		b, err := os.ReadFile(path)
		return editorDoneMsg{text: string(b), err: err}
	})
}
