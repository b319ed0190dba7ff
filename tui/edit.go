package tui

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/ops"
	"weft/ops/tools"
	"weft/tui/dialog"
	"weft/tui/rows"
)

// editDoneMsg reports an edit the TUI asked the service for.
type editDoneMsg struct {
	what string
	err  error
	// undo is what an undo or a redo did, for the redo stack; nil for
	// every other edit.
	undo *undoStep
	// from is the dialog the edit was made from (nil for a key), target
	// what it was made on, and current the session's version when a
	// conflict refused it.
	from    dialog.Dialog
	target  *editTarget
	current uint64
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
		if rw := m.rows.At(r); rw.Kind == rows.Item {
			first = rw.Item
			break
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	for r := to; r >= from; r-- {
		if rw := m.rows.At(r); rw.Kind == rows.Item {
			last = rw.Item
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
	svc     tools.Desk
	sid     string
	version uint64 // the session's version the operator saw
	// view and first..last are the items the operator selected, in the
	// view on the screen then (views never change): the edit names them
	// by ID, so it acts on them wherever an agent's edit since has moved
	// them, and the service refuses it if that edit touched them.
	view        *model.View
	first, last int
}

// target captures the session an edit is for, as it stands now.
func (m *Model) target() editTarget {
	return editTarget{svc: m.svc, sid: m.sid, version: m.info.Version, view: m.view}
}

// pick captures the selection and the version it was made at: from this
// moment on the edit is about these items.
func (m *Model) pick(first, last int) *editTarget {
	t := m.target()
	t.first, t.last = first, last
	return &t
}

// ids are the picked items' IDs. A selection may be long: this runs in
// the edit's command, not in Update.
func (t editTarget) ids() []model.ItemID {
	if t.first < 0 || t.view == nil {
		return nil // an insert at the start picks no item
	}
	ids := make([]model.ItemID, 0, t.last-t.first+1)
	for _, it := range t.view.Items[t.first : t.last+1] {
		ids = append(ids, t.view.ID(it))
	}
	return ids
}

// sel is the picked items, by ID.
func (t editTarget) sel() ops.Selection {
	return ops.Selection{SessionID: t.sid, IDs: t.ids()}
}

// opts gives the service the version the operator saw; each call gets
// its own copy of it.
func (t editTarget) opts() ops.EditOptions {
	v := t.version
	return ops.EditOptions{ExpectedVersion: &v}
}

// edit runs a service call in a command and reports it, for a key that
// edits at once. fn gets the target captured here and must read nothing
// else of the model.
func (m *Model) edit(what string, fn func(ctx context.Context, t editTarget) error) tea.Cmd {
	t := m.target()
	return m.editFrom(nil, &t, what, fn)
}

// editFrom runs an edit on a picked target. From a dialog (d not nil),
// the dialog stays open until the edit is done: it closes when the edit
// is made, and shows why when it is refused, with what was typed kept.
func (m *Model) editFrom(d dialog.Dialog, t *editTarget, what string, fn func(ctx context.Context, t editTarget) error) tea.Cmd {
	m.anchor = -1
	if d != nil {
		m.saving = d
	}
	tc := *t
	logger := m.opts.Logger
	return func() (msg tea.Msg) {
		// A bug behind an edit is an error on the status bar, not the
		// end of the operator's session; what Go said of it goes to the
		// log.
		defer func() {
			if r := recover(); r != nil {
				if logger != nil {
					logger.Error("edit panicked", "edit", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				}
				msg = editDoneMsg{what: what, from: d, err: errors.New("internal error while the edit was made: a bug in weft stopped it (the log has the details)")}
			}
		}()
		err := fn(context.Background(), tc)
		done := editDoneMsg{what: what, err: err, from: d, target: t}
		if errors.Is(err, ops.ErrConflict) {
			// The version the refusal was made at: the operator who has
			// read what changed may make the edit on the same items as
			// they are now.
			if info, _, verr := tc.svc.View(tc.sid); verr == nil {
				done.current = info.Version
			}
		}
		return done
	}
}

// failer is a dialog that can say, staying open, why its edit was not
// made, and name the key that makes it again.
type failer interface {
	Fail(reason string)
	SubmitKey() string
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
	t := m.pick(first, last)
	var d *dialog.Input
	d = dialog.NewInput(m.styles, "Tag "+rangeText(first, last), "tags separated by spaces or commas", "to tag", "", known,
		func(v string) tea.Cmd {
			tags := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
			return m.editFrom(d, t, "tagged", func(ctx context.Context, t editTarget) error {
				_, err := t.svc.TagMessages(ctx, ops.TagArgs{Selection: t.sel(), Tags: tags, EditOptions: t.opts()})
				return err
			})
		})
	m.dialogs.Open(d)
	return nil
}

// draftDoneMsg carries a drafted text and who wrote it.
type draftDoneMsg struct {
	text, by string
	err      error
}

func (m *Model) startDigest() tea.Cmd {
	first, last, cmd := m.needSelection()
	if cmd != nil {
		return cmd
	}
	t := m.pick(first, last)
	var d *dialog.Text
	d = dialog.NewText(m.styles, "Digest "+rangeText(first, last)+" into a summary", "", "to digest", "",
		func(v string) tea.Cmd {
			return m.editFrom(d, t, "digested", func(ctx context.Context, t editTarget) error {
				_, err := t.svc.DigestMessages(ctx, ops.DigestArgs{Selection: t.sel(), Summary: v, EditOptions: t.opts()})
				return err
			})
		})
	draftOf := *t
	d.WithDrafter(func() tea.Cmd {
		return func() tea.Msg {
			// The TUI has no client model to sample: summarize_message_range
			// uses the configured endpoint, else writes an extractive draft.
			r, err := draftOf.svc.SummarizeMessageRange(context.Background(), ops.SummarizeArgs{Selection: draftOf.sel()})
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
	m.dialogs.Open(d)
	return nil
}

func (m *Model) snip() tea.Cmd {
	first, last, cmd := m.needSelection()
	if cmd != nil {
		return cmd
	}
	return m.editFrom(nil, m.pick(first, last), "snipped", func(ctx context.Context, t editTarget) error {
		_, err := t.svc.SnipMessages(ctx, ops.SnipArgs{Selection: t.sel(), EditOptions: t.opts()})
		return err
	})
}

func (m *Model) startInsert() tea.Cmd {
	after := -1
	if m.rows.Len() > 0 {
		switch rw := m.rows.At(m.cursor); {
		case rw.Kind == rows.Item:
			after = rw.Item
		case m.anchor >= 0:
			if first, _, ok := m.selection(); ok {
				after = first
			}
		default: // on a marker: where it stands, after the item before it
			after = m.view.Markers[rw.Marker].At - 1
		}
	}
	where := "at the start"
	// The item to insert after, by ID: an agent's insert above it
	// meanwhile does not move the place.
	var afterID model.ItemID
	if after >= 0 {
		where = fmt.Sprintf("after item %d", after)
		afterID = m.view.ID(m.view.Items[after])
	}
	t := m.pick(after, after)
	var d *dialog.Text
	d = dialog.NewInsert(m.styles, "Insert "+where, func(msgs []model.NewMessage) tea.Cmd {
		return m.editFrom(d, t, "inserted", func(ctx context.Context, t editTarget) error {
			a := ops.InsertArgs{SessionID: t.sid, Messages: msgs, EditOptions: t.opts()}
			if afterID != "" {
				a.AfterID = afterID
			} else {
				a.AfterIdx = &after
			}
			_, err := t.svc.InsertMessages(ctx, a)
			return err
		})
	})
	m.dialogs.Open(d)
	return nil
}

func (m *Model) editDone(msg editDoneMsg) tea.Cmd {
	if msg.from != nil && msg.from == m.saving {
		m.saving = nil
		f, open := msg.from.(failer)
		open = open && m.dialogs.Front() == msg.from
		switch {
		case msg.err != nil && open:
			reason := msg.err.Error()
			if msg.target != nil && msg.current > msg.target.version {
				msg.target.version = msg.current
				reason += " — " + f.SubmitKey() + " again makes the edit on the same items as they are now; esc cancels"
			}
			f.Fail(reason)
			return nil
		case msg.err == nil:
			m.dialogs.Close(msg.from)
		}
	}
	if msg.err != nil {
		return m.flash(msg.err.Error(), true)
	}
	m.keepRedo(msg)
	cmds := []tea.Cmd{m.loadView(m.sid), m.flash(msg.what, false)}
	if _, ok := dialog.Find[*dialog.Operations](&m.dialogs); ok {
		cmds = append(cmds, loadOps(m.svc, m.sid))
	}
	return tea.Batch(cmds...)
}
