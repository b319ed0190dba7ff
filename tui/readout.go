package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/model"
	"weft/ops/tools"
	"weft/tui/dialog"
	"weft/tui/handoff"
)

// Reading out: y copies the message under the cursor (or the range
// selected) to the clipboard, and p opens it read-only in $PAGER. Both
// write the messages as the revise dialog does (dialog.FormatMessages: a
// "--- role" line before each), read in a command: a range may be long.

// maxCopy bounds what y puts on the clipboard: OSC 52 carries it through
// the terminal in one sequence, which terminals cap.
const maxCopy = 8 << 20

// readoutMsg is the messages read for y or p.
type readoutMsg struct {
	sid   string
	pager bool // for p; else for y
	text  string
	n     int // messages
	err   error
}

// readoutItems is what y and p act on: the range selected, else the item
// under the cursor (an original under an expanded marker included).
func (m *Model) readoutItems() ([]model.Item, tea.Cmd) {
	if m.anchor >= 0 {
		first, last, ok := m.selection()
		if !ok {
			return nil, m.flash("the range holds no message", true)
		}
		return m.view.Items[first : last+1], nil // the view never changes: no copy needed
	}
	it, ok := m.cursorItem()
	if !ok {
		return nil, m.flash("a marker: "+m.keys.Toggle.Help().Key+" shows what it hid, then pick a message there", true)
	}
	return []model.Item{it}, nil
}

// readMessages reads items as text, in a command.
func (m *Model) readMessages(items []model.Item, pager bool) tea.Cmd {
	svc, sid, v := m.svc, m.sid, m.view
	return func() tea.Msg {
		text, err := messagesText(svc, v, items)
		return readoutMsg{sid: sid, pager: pager, text: text, n: len(items), err: err}
	}
}

// messagesText writes items of view v as the revise dialog writes
// messages: synthetic ones from the view, stored ones read through the
// service.
func messagesText(svc tools.Desk, v *model.View, items []model.Item) (string, error) {
	var seqs []uint64
	for _, it := range items {
		if it.Seq > 0 {
			seqs = append(seqs, it.Seq)
		}
	}
	stored, err := svc.Messages(v.SessionID, seqs)
	if err != nil {
		return "", err
	}
	msgs := make([]model.NewMessage, 0, len(items))
	for _, it := range items {
		if it.Seq == 0 {
			s := &v.Synth[it.Synth]
			msgs = append(msgs, model.NewMessage{Role: s.Role, Content: s.Content})
			continue
		}
		msgs = append(msgs, model.NewMessage{Role: stored[0].Role, Content: stored[0].Content})
		stored = stored[1:]
	}
	return dialog.FormatMessages(msgs) + "\n", nil
}

// copySelection is y.
func (m *Model) copySelection() tea.Cmd {
	items, cmd := m.readoutItems()
	if cmd != nil {
		return cmd
	}
	return m.readMessages(items, false)
}

// openPager is p.
func (m *Model) openPager() tea.Cmd {
	items, cmd := m.readoutItems()
	if cmd != nil {
		return cmd
	}
	return m.readMessages(items, true)
}

func (msg readoutMsg) apply(m *Model) tea.Cmd {
	if msg.sid != m.sid {
		return nil // read in the session shown before a switch
	}
	if msg.err != nil {
		return m.flash(msg.err.Error(), true)
	}
	if msg.pager {
		return handoff.Page(m.opts.Pager, msg.text)
	}
	if len(msg.text) > maxCopy {
		return m.flash(fmt.Sprintf("%s is %s: more than a terminal's clipboard takes (%s); select fewer", english.Count(msg.n, "message"), byteSize(len(msg.text)), byteSize(maxCopy)), true)
	}
	// OSC 52 through the terminal: it works over ssh, and in tmux with
	// set-clipboard on.
	return tea.Batch(tea.SetClipboard(msg.text), m.flash(fmt.Sprintf("copied %s, %s", english.Count(msg.n, "message"), byteSize(len(msg.text))), false))
}

// byteSize is a size as a clipboard or a file manager says it: 950 bytes,
// 1.2 kB, 3.4 MB.
func byteSize(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return english.Count(n, "byte")
}
