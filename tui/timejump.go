package tui

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

// timeDialog asks for a time. It stays open until a time is read: a bad
// one is shown with its reason, the text kept to be corrected.
type timeDialog struct {
	keys  timeKeys
	input textinput.Model
	base  time.Time // the cursor's time, or zero (now) when it has none
	err   string    // why the last time could not be read
	jump  func(when string, base time.Time) tea.Cmd
}

type timeJumpMsg struct {
	index int
	at    time.Time
	err   error
}

func (m *Model) startTimeJump() tea.Cmd {
	in := newInput(m.styles)
	in.Prompt = "› "
	in.Placeholder = "Mar 4 10am, 15:30, -2h, yesterday 9am"
	in.Focus()
	svc, sid := m.svc, m.sid
	m.dialog = &timeDialog{
		keys: timeKeys{
			Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "to jump")),
			Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "to cancel")),
		},
		input: in,
		base:  m.cursorBase(),
		jump: func(when string, base time.Time) tea.Cmd {
			return func() tea.Msg {
				i, at, err := svc.ItemAt(sid, when, base)
				return timeJumpMsg{i, at, err}
			}
		},
	}
	return nil
}

// cursorBase is the time T counts from: the message under the cursor's;
// on a marker, the message it stands before; without either, the
// thread's last message (zero, now, when nothing is dated).
func (m *Model) cursorBase() time.Time {
	if at, ok := m.cursorTime(); ok {
		return at
	}
	if m.rows != nil && m.rows.Len() > 0 {
		rw := m.rows.At(m.cursor)
		if rw.kind != rowItem {
			mk := &m.view.Markers[rw.marker]
			if rw.kind == rowHidden {
				if at, ok := m.itemTime(mk.Hidden[rw.item]); ok {
					return at
				}
			}
			if mk.At < m.view.Len() {
				if at, ok := m.itemTime(m.view.Items[mk.At]); ok {
					return at
				}
			}
		}
	}
	return m.timeline.End
}

// HandleMsg asks for the jump on enter and closes on esc; the answer
// comes to the root (timeJumped), which closes the dialog or shows why
// the time could not be read.
func (d *timeDialog) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			return true, nil
		case key.Matches(k, d.keys.Submit):
			return false, d.jump(strings.TrimSpace(d.input.Value()), d.base)
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return false, cmd
}

// View draws the dialog: its title, the input, why the last time could
// not be read, the forms it takes (wrapped, never cut) and the hint.
func (d *timeDialog) View(width int, st *themes.Styles) string {
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
	parts = append(parts, dialogHint(st, "", d.keys.ShortHelp()))
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, parts...))
}

// timeJumped takes the answer to a jump: the dialog closes on a time
// read and shows why on one that could not be.
func (m *Model) timeJumped(msg timeJumpMsg) tea.Cmd {
	d, open := m.dialog.(*timeDialog)
	if msg.err != nil {
		var perr *timeparse.Error
		switch {
		case open && errors.As(msg.err, &perr):
			// The dialog lists the forms itself: the reason is enough.
			d.err = "cannot read " + quote(perr.Input) + " as a time"
			if perr.Reason != "" {
				d.err += ": " + perr.Reason
			}
			return nil
		case open:
			d.err = msg.err.Error()
			return nil
		}
		return m.flash(msg.err.Error(), true)
	}
	if open {
		m.dialog = nil
	}
	if m.statusErr {
		m.status = "" // an earlier error is answered
	}
	m.jumpTo(msg.index)
	if msg.index >= m.view.Len() {
		return tea.Batch(m.loadBodies(), m.flash("nothing at or after "+msg.at.Local().Format("Jan 02 15:04")+": at the end", false))
	}
	return m.loadBodies()
}

// quote quotes an input for a message, as strconv.Quote would, but
// leaves a non-ASCII letter as it is.
func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
