package tui

import (
	"context"
	"os"
	"os/exec"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
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

// dialogHint is a dialog's hint line: what to type, when the dialog has
// something to say about it, then the keys that work now, generated from
// the dialog's key map as the root's help line is from its own.
func dialogHint(st *themes.Styles, note string, keys []key.Binding) string {
	h := help.New()
	h.ShortSeparator = hintSeparator
	h.Styles.ShortKey, h.Styles.ShortDesc, h.Styles.ShortSeparator = st.Dialog.Hint, st.Dialog.Hint, st.Dialog.Hint
	line := h.ShortHelpView(keys)
	switch {
	case note == "":
		return line
	case line == "":
		return st.Dialog.Hint.Render(note)
	}
	return st.Dialog.Hint.Render(note+hintSeparator) + line
}

// hintSeparator stands between the parts of a dialog's hint.
const hintSeparator = " · "

// inputKeys is the keys of a one-line dialog; the input's own editing
// keys come on top.
type inputKeys struct {
	Submit, Cancel key.Binding
}

// ShortHelp is what the dialog's hint lists.
func (k inputKeys) ShortHelp() []key.Binding { return []key.Binding{k.Submit, k.Cancel} }

// inputDialog asks for one line (a tag, a time).
type inputDialog struct {
	title, note string // note says what to type
	keys        inputKeys
	input       textinput.Model
	submit      func(value string) tea.Cmd
	failed      string // why the last submit was refused
}

// newInputDialog opens a one-line dialog; action says what enter does
// ("to tag"), for the hint.
func newInputDialog(st *themes.Styles, title, note, action, value string, suggestions []string, submit func(string) tea.Cmd) *inputDialog {
	in := newInput(st)
	in.Prompt = "› "
	in.SetValue(value)
	in.SetSuggestions(suggestions)
	in.ShowSuggestions = len(suggestions) > 0
	in.Focus()
	keys := inputKeys{
		Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", action)),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "to cancel")),
	}
	return &inputDialog{title: title, note: note, keys: keys, input: in, submit: submit}
}

// HandleMsg submits on enter and cancels on esc; every other message
// goes to the input.
func (d *inputDialog) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			return true, nil
		case key.Matches(k, d.keys.Submit):
			return true, d.submit(strings.TrimSpace(d.input.Value()))
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return false, cmd
}

// View draws the dialog: its title, the input and the hint.
func (d *inputDialog) View(width int, st *themes.Styles) string {
	w := min(width-4, 72)
	d.input.SetWidth(w - 6)
	parts := []string{st.Dialog.Title.Render(d.title), d.input.View(), dialogHint(st, d.note, d.keys.ShortHelp())}
	if d.failed != "" {
		parts = append(parts, saidLines(st.Status.Error, d.failed, w-4))
	}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, parts...))
}

// fail shows why the edit was refused; the dialog stays open with the
// text typed.
func (d *inputDialog) fail(reason string) { d.failed = reason }

// submitKey names the key that submits.
func (d *inputDialog) submitKey() string { return d.keys.Submit.Help().Key }

// submitter is a dialog whose submit key can be named to the operator.
type submitter interface {
	submitKey() string
}

// saidLines wraps what a dialog has to say to its width, on at most a
// few lines: a refusal names what changed, which may take more than one.
func saidLines(style lipgloss.Style, s string, width int) string {
	lines := strings.Split(ansi.Wrap(s, max(width, 10), " "), "\n")
	if len(lines) > 6 {
		lines = append(lines[:5], ansi.Truncate(lines[5], max(width-1, 9), "")+"…")
	}
	return style.Render(strings.Join(lines, "\n"))
}

// textKeys is the keys of a text dialog; the text area's own editing
// keys come on top. Draft is on only where there is a drafter.
type textKeys struct {
	Submit, Draft, Editor, Cancel key.Binding
}

// ShortHelp is what the dialog's hint lists.
func (k textKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Submit, k.Draft, k.Editor, k.Cancel}
}

// textDialog edits text over several lines (a summary, messages). ctrl+s
// submits, esc cancels, ctrl+e hands the text to $EDITOR, and ctrl+g asks
// for a draft when the dialog has a drafter (the digest's summary).
type textDialog struct {
	title, note string // note says how to write the text, if it needs saying
	keys        textKeys
	area        textarea.Model
	submit      func(value string) tea.Cmd
	draft       func() tea.Cmd // nil: no drafts here (see withDrafter)
	editor      string         // the command ctrl+e runs; empty: vi
	said        string         // what the last editor run or draft said
	saidErr     bool
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
// editor for ctrl+e; action says what ctrl+s does ("to digest"), for
// the hint.
func (m *Model) newTextDialog(title, note, action, value string, submit func(string) tea.Cmd) *textDialog {
	st := m.styles
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
	return &textDialog{title: title, note: note, keys: keys, area: ta, submit: submit, editor: m.opts.Editor}
}

// withDrafter lets ctrl+g ask draft for a text.
func (d *textDialog) withDrafter(draft func() tea.Cmd) *textDialog {
	d.draft = draft
	d.keys.Draft.SetEnabled(draft != nil)
	return d
}

// HandleMsg answers the dialog's keys and what the editor or a draft
// sends back; every other message goes to the text area.
func (d *textDialog) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, d.keys.Cancel):
			return true, nil
		case key.Matches(msg, d.keys.Submit):
			return true, d.submit(d.area.Value())
		case key.Matches(msg, d.keys.Editor):
			return false, openEditor(d.editor, d.area.Value())
		case key.Matches(msg, d.keys.Draft):
			d.said, d.saidErr = "drafting…", false
			return false, d.draft()
		}
	case editorFileMsg:
		return false, runEditor(msg)
	case editorDoneMsg:
		if msg.err != nil {
			d.said, d.saidErr = "editor: "+msg.err.Error(), true
			return false, nil
		}
		d.area.SetValue(strings.TrimRight(msg.text, "\n"))
		d.said = ""
		return false, nil
	case draftDoneMsg:
		if msg.err != nil {
			d.said, d.saidErr = "draft: "+msg.err.Error(), true
			return false, nil
		}
		d.area.SetValue(msg.text)
		d.said, d.saidErr = msg.by+": edit it, then "+d.keys.Submit.Help().Key, false
		return false, nil
	}
	var cmd tea.Cmd
	d.area, cmd = d.area.Update(msg)
	return false, cmd
}

// View draws the dialog: its title, the text, the hint and what the
// last editor run or draft said.
func (d *textDialog) View(width int, st *themes.Styles) string {
	w := min(width-4, 100)
	d.area.SetWidth(w - 4)
	d.area.SetHeight(10)
	parts := []string{st.Dialog.Title.Render(d.title), d.area.View(), dialogHint(st, d.note, d.keys.ShortHelp())}
	if d.said != "" {
		said := st.Dialog.Hint
		if d.saidErr {
			said = st.Status.Error
		}
		parts = append(parts, saidLines(said, d.said, w-4))
	}
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, parts...))
}

// fail shows why the edit was refused; the dialog stays open with the
// text typed.
func (d *textDialog) fail(reason string) { d.said, d.saidErr = reason, true }

// submitKey names the key that submits.
func (d *textDialog) submitKey() string { return d.keys.Submit.Help().Key }

// editorFileMsg names the file a text was written to for the editor.
type editorFileMsg struct{ editor, path string }

// openEditor edits text with the editor command (vi if empty), pausing
// the TUI. The text is written to a file in a command, not in Update;
// runEditor starts the editor on it when that command reports.
func openEditor(editor, text string) tea.Cmd {
	return func() tea.Msg {
		// A text file ends in a newline, as editors write it back
		// (one that adds a line must not join it to the last); it
		// is trimmed again when the text comes back.
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		path, err := writeTemp("weft-*.md", text)
		if err != nil {
			return editorDoneMsg{err: err}
		}
		return editorFileMsg{editor: editor, path: path}
	}
}

// runEditor hands the terminal to the editor on a written file and reads
// the file back when it exits.
func runEditor(msg editorFileMsg) tea.Cmd {
	return execOn(msg.editor, "vi", msg.path, func(err error) tea.Msg {
		if err != nil {
			return editorDoneMsg{err: err}
		}
		b, err := os.ReadFile(msg.path)
		return editorDoneMsg{text: string(b), err: err}
	})
}

// writeTemp writes text to a new temporary file named after pattern and
// returns its path; when it fails no file is left. It does I/O: it is
// called in a command, never in Update.
func writeTemp(pattern, text string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// execOn hands the terminal to command (fallback when it is blank), split
// into words as $EDITOR and $PAGER are, with path as its last argument;
// done makes the message of its exit, and the file is removed once done
// has returned (the editor's text is read back in it).
func execOn(command, fallback, path string, done func(error) tea.Msg) tea.Cmd {
	if strings.TrimSpace(command) == "" {
		command = fallback
	}
	args := strings.Fields(command)
	// The program is the user's: only its own exit ends it.
	c := exec.CommandContext(context.Background(), args[0], append(args[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer func() { _ = os.Remove(path) }()
		return done(err)
	})
}
