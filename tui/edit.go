package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
)

// editDoneMsg reports an edit the TUI asked the service for.
type editDoneMsg struct {
	what string
	err  error
	// undo is what an undo or a redo did, for the redo stack; nil for
	// every other edit.
	undo *undoStep
}

// selection returns the items under the cursor, or between the anchor and
// the cursor in range mode, as an inclusive index range.
func (m *Model) selection() (first, last int, ok bool) {
	if m.view == nil || m.rows.Len() == 0 {
		return 0, 0, false
	}
	from, to := m.cursor, m.cursor
	if m.anchor >= 0 {
		from, to = min(m.anchor, m.cursor), max(m.anchor, m.cursor)
	}
	// The first and last items of the rows, found from either end: only
	// markers and their originals are stepped over, so a range across
	// the whole thread costs no more than a short one.
	first, last = -1, -1
	for r := from; r <= to; r++ {
		if rw := m.rows.At(r); rw.kind == rowItem {
			first = rw.item
			break
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	for r := to; r >= from; r-- {
		if rw := m.rows.At(r); rw.kind == rowItem {
			last = rw.item
			break
		}
	}
	return first, last, true
}

func (m *Model) isSelected(r int) bool {
	if m.anchor < 0 {
		return false
	}
	return r >= min(m.anchor, m.cursor) && r <= max(m.anchor, m.cursor)
}

func rangeText(first, last int) string {
	if first == last {
		return fmt.Sprintf("item %d", first)
	}
	return fmt.Sprintf("items %d–%d", first, last)
}

// editTarget is what an edit's command needs of the model, taken in
// Update when the edit is asked for: commands run on their own
// goroutines, so they read copies, never the model.
type editTarget struct {
	svc     *ops.Service
	sid     string
	version uint64 // the session's version the operator saw
}

// target captures the session an edit is for, as it stands now.
func (m *Model) target() editTarget {
	return editTarget{svc: m.svc, sid: m.sid, version: m.info.Version}
}

// sel is an inclusive index range of the target's session.
func (t editTarget) sel(first, last int) ops.Selection {
	return ops.Selection{SessionID: t.sid, StartIdx: &first, EndIdx: &last}
}

// opts refuses the edit if the session changed since the operator saw
// it; each call gets its own copy of the version.
func (t editTarget) opts() ops.EditOptions {
	v := t.version
	return ops.EditOptions{ExpectedVersion: &v}
}

// edit runs a service call in a command and reports it. fn gets the
// target captured here and must read nothing else of the model.
func (m *Model) edit(what string, fn func(ctx context.Context, t editTarget) error) tea.Cmd {
	t := m.target()
	m.anchor = -1
	return func() (msg tea.Msg) {
		// A bug behind an edit is an error on the status bar, not the
		// end of the operator's session.
		defer func() {
			if r := recover(); r != nil {
				msg = editDoneMsg{what: what, err: fmt.Errorf("internal error while the edit was made: %v (a bug in weft)", r)}
			}
		}()
		return editDoneMsg{what: what, err: fn(context.Background(), t)}
	}
}

// needSelection flashes why an edit cannot start, or returns the range.
func (m *Model) needSelection() (int, int, tea.Cmd) {
	first, last, ok := m.selection()
	if !ok {
		return 0, 0, m.flash("put the cursor on a message (markers cannot be edited)", true)
	}
	return first, last, nil
}

func (m *Model) startTag() tea.Cmd {
	first, last, cmd := m.needSelection()
	if cmd != nil {
		return cmd
	}
	var known []string
	for _, set := range m.view.TagSets {
		for _, t := range set {
			if !slices.Contains(known, t) {
				known = append(known, t)
			}
		}
	}
	slices.Sort(known)
	m.dialog = newInputDialog(m.styles, "Tag "+rangeText(first, last), "tags separated by spaces or commas", "to tag", "", known,
		func(v string) tea.Cmd {
			tags := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
			return m.edit("tagged", func(ctx context.Context, t editTarget) error {
				_, err := t.svc.TagMessages(ctx, ops.TagArgs{Selection: t.sel(first, last), Tags: tags, EditOptions: t.opts()})
				return err
			})
		})
	return nil
}

func (m *Model) startDigest() tea.Cmd {
	first, last, cmd := m.needSelection()
	if cmd != nil {
		return cmd
	}
	d := m.newTextDialog("Digest "+rangeText(first, last)+" into a summary", "", "to digest", "",
		func(v string) tea.Cmd {
			return m.edit("digested", func(ctx context.Context, t editTarget) error {
				_, err := t.svc.DigestMessages(ctx, ops.DigestArgs{Selection: t.sel(first, last), Summary: v, EditOptions: t.opts()})
				return err
			})
		})
	t := m.target()
	svc, sel := t.svc, t.sel(first, last)
	d.withDrafter(func() tea.Cmd {
		return func() tea.Msg {
			// The TUI has no client model to sample: summarize_message_range
			// uses the configured endpoint, else writes an extractive draft.
			r, err := svc.SummarizeMessageRange(context.Background(), ops.SummarizeArgs{Selection: sel})
			by := map[string]string{ops.SourceExtractive: "drafted locally (extractive)", ops.SourceSampling: "drafted by the client's model", ops.SourceEndpoint: "drafted by the summary endpoint"}[r.Source]
			if by == "" {
				by = "drafted by " + r.Source
			}
			if r.Model != "" {
				by += " (" + r.Model + ")"
			}
			return draftDoneMsg{text: r.Summary, by: by, err: err}
		}
	})
	m.dialog = d
	return nil
}

func (m *Model) snip() tea.Cmd {
	first, last, cmd := m.needSelection()
	if cmd != nil {
		return cmd
	}
	return m.edit("snipped", func(ctx context.Context, t editTarget) error {
		_, err := t.svc.SnipMessages(ctx, ops.SnipArgs{Selection: t.sel(first, last), EditOptions: t.opts()})
		return err
	})
}

// reviseReadyMsg carries the selected messages, read for the revise
// dialog.
type reviseReadyMsg struct {
	first, last int
	text        string
	err         error
}

func (m *Model) startRevise() tea.Cmd {
	first, last, cmd := m.needSelection()
	if cmd != nil {
		return cmd
	}
	// The range may be long: it is read in the command, from the view
	// (immutable) and the service, not in Update.
	v, svc := m.view, m.svc
	return func() tea.Msg {
		msgs, err := reviseText(svc, v, first, last)
		return reviseReadyMsg{first, last, formatMessages(msgs), err}
	}
}

// reviseText reads items first..last of a view as messages to edit:
// synthetic ones from the view, stored ones through the service.
func reviseText(svc *ops.Service, v *model.View, first, last int) ([]model.NewMessage, error) {
	var seqs []uint64
	for _, it := range v.Items[first : last+1] {
		if it.Seq > 0 {
			seqs = append(seqs, it.Seq)
		}
	}
	stored, err := svc.Messages(v.SessionID, seqs)
	if err != nil {
		return nil, err
	}
	msgs := make([]model.NewMessage, 0, last-first+1)
	for _, it := range v.Items[first : last+1] {
		if it.Seq == 0 {
			s := v.Synth[it.Synth]
			msgs = append(msgs, model.NewMessage{Role: s.Role, Content: s.Content})
			continue
		}
		msgs = append(msgs, model.NewMessage{Role: stored[0].Role, Content: stored[0].Content})
		stored = stored[1:]
	}
	return msgs, nil
}

func (m *Model) openRevise(msg reviseReadyMsg) tea.Cmd {
	if msg.err != nil {
		return m.flash(msg.err.Error(), true)
	}
	m.dialog = m.newTextDialog("Revise "+rangeText(msg.first, msg.last), messagesNote, "to revise", msg.text,
		func(v string) tea.Cmd {
			msgs, err := parseMessages(v)
			if err != nil {
				return m.flash(err.Error(), true)
			}
			first, last := msg.first, msg.last
			return m.edit("revised", func(ctx context.Context, t editTarget) error {
				_, err := t.svc.ReviseMessages(ctx, ops.ReviseArgs{Selection: t.sel(first, last), Replacements: msgs, EditOptions: t.opts()})
				return err
			})
		})
	return nil
}

func (m *Model) startInsert() tea.Cmd {
	after := -1
	if m.rows.Len() > 0 {
		switch rw := m.rows.At(m.cursor); {
		case rw.kind == rowItem:
			after = rw.item
		case m.anchor >= 0:
			if first, _, ok := m.selection(); ok {
				after = first
			}
		default: // on a marker: where it stands, after the item before it
			after = m.view.Markers[rw.marker].At - 1
		}
	}
	where := "at the start"
	if after >= 0 {
		where = fmt.Sprintf("after item %d", after)
	}
	m.dialog = m.newTextDialog("Insert "+where, messagesNote, "to insert", "assistant: ",
		func(v string) tea.Cmd {
			msgs, err := parseMessages(v)
			if err != nil {
				return m.flash(err.Error(), true)
			}
			if len(msgs) == 0 {
				return m.flash("nothing to insert", true)
			}
			return m.edit("inserted", func(ctx context.Context, t editTarget) error {
				_, err := t.svc.InsertMessages(ctx, ops.InsertArgs{SessionID: t.sid, AfterIdx: &after, Messages: msgs, EditOptions: t.opts()})
				return err
			})
		})
	return nil
}

func (m *Model) editDone(msg editDoneMsg) tea.Cmd {
	if msg.err != nil {
		return m.flash(msg.err.Error(), true)
	}
	m.keepRedo(msg)
	cmds := []tea.Cmd{m.loadView(m.sid), m.flash(msg.what, false)}
	if _, ok := m.dialog.(*opsPanel); ok {
		cmds = append(cmds, loadOps(m.svc, m.sid))
	}
	return tea.Batch(cmds...)
}
