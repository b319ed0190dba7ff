package dialog

import (
	"errors"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/ops/timeparse"
	"weft/themes"
)

// T jumps to a time. The time is read from the cursor, not from today: a
// time of day is on the day of the message under the cursor, "-2h" two
// hours before it, "yesterday 9am" the day before its day, "monday" the
// latest Monday on or before it. A thread is read long after it was
// written; counting from today would send every such jump to its end.

// timeForms is what the dialog lists, in full and wrapped: the forms T
// takes, said from the cursor's point of view.
var timeForms = []string{
	"dates: 2026-03-04 14:00 · Mar 4 · 4 March 10am · march 4 2026",
	"weekdays, the latest on or before the cursor's day: monday · fri 9am",
	"on the cursor's day: 15:30 · 3pm; the day before it: yesterday 9am",
	"from the cursor's time: -2h · -90m · -1d · 2h ago",
}

// timeKeys is the keys of T's dialog; the input's editing keys come on
// top.
type timeKeys struct {
	Submit, Cancel key.Binding
}

// ShortHelp is what the dialog's hint lists.
func (k timeKeys) ShortHelp() []key.Binding { return []key.Binding{k.Submit, k.Cancel} }

// Time asks for a time. It stays open until a time is read: a bad one
// is shown with its reason, the text kept to be corrected.
type Time struct {
	keys  timeKeys
	input textinput.Model
	base  time.Time // the cursor's time, or zero (now) when it has none
	err   string    // why the last time could not be read
}

// NewTime opens T's dialog, counting from base: the cursor's time, or
// zero (now) when it has none.
func NewTime(st *themes.Styles, base time.Time) *Time {
	in := NewTextInput(st)
	in.Prompt = "› "
	in.Placeholder = "Mar 4 10am, 15:30, -2h, yesterday 9am"
	in.Focus()
	return &Time{
		keys: timeKeys{
			Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "to jump")),
			Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "to cancel")),
		},
		input: in,
		base:  base,
	}
}

// HandleMsg asks for the jump on enter and closes on esc; the answer
// comes to the root, which closes the dialog or says why the time could
// not be read (Fail).
func (d *Time) HandleMsg(msg tea.Msg) Action {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			return ActionClose{}
		case key.Matches(k, d.keys.Submit):
			return ActionJumpToTime{When: strings.TrimSpace(d.input.Value()), Base: d.base}
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return cmdAction(cmd)
}

// Fail shows why the time could not be read (or the jump made); the
// dialog lists the forms itself, so a time it cannot read needs only
// its reason.
func (d *Time) Fail(err error) {
	var perr *timeparse.Error
	if !errors.As(err, &perr) {
		d.err = err.Error()
		return
	}
	d.err = "cannot read " + quote(perr.Input) + " as a time"
	if perr.Reason != "" {
		d.err += ": " + perr.Reason
	}
}

// Value is the time as typed.
func (d *Time) Value() string { return d.input.Value() }

// View draws the dialog: its title, the input, why the last time could
// not be read, the forms it takes (wrapped, never cut) and the hint.
func (d *Time) View(width int, st *themes.Styles) string {
	w := min(width-4, 80)
	inner := w - st.Dialog.Box.GetHorizontalFrameSize()
	d.input.SetWidth(inner - 4)
	title := "Jump to a time"
	if !d.base.IsZero() {
		title += ", counting from " + d.base.Local().Format("Mon Jan 02 15:04")
	}
	parts := []string{st.Dialog.Title.Render(ansi.Truncate(title, inner, "…")), d.input.View()}
	if d.err != "" {
		parts = append(parts, st.Status.Error.Render(ansi.Wrap(d.err, inner, "")))
	}
	for _, f := range timeForms {
		parts = append(parts, st.Dialog.Hint.Render(ansi.Wrap(f, inner, "")))
	}
	parts = append(parts, Hint(st, "", d.keys.ShortHelp()))
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, parts...))
}

// quote quotes an input for a message, as strconv.Quote would, but
// leaves a non-ASCII letter as it is.
func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
