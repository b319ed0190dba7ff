package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/model"
	"weft/ops"
	"weft/ops/tools"
	"weft/tui/dialog"
)

// Revising (r) reads the selected messages, whole, in a command, and
// opens the revise dialog on them (tui/dialog's NewRevise); the revise
// its save asks for goes through the Service like every edit.

// reviseReadyMsg carries the selected messages, read for the revise
// dialog.
type reviseReadyMsg struct {
	sid    string
	target *editTarget
	orig   []model.NewMessage // the selected items, with their parts
	err    error
}

func (m *Model) startRevise() tea.Cmd {
	first, last, cmd := m.needSelection()
	if cmd != nil {
		return cmd
	}
	// The range may be long: it is read in the command, from the view
	// (immutable) and the service, not in Update.
	t := m.pick(first, last)
	tc := *t
	return func() tea.Msg {
		orig, err := reviseOriginals(tc.svc, tc.view, tc.first, tc.last)
		return reviseReadyMsg{sid: tc.sid, target: t, orig: orig, err: err}
	}
}

// reviseOriginals reads items first..last of a view as messages to edit:
// synthetic ones from the view, stored ones through the service, each
// whole (name, parts and time included), so what is saved unchanged can
// be put back as it was.
func reviseOriginals(svc tools.Desk, v *model.View, first, last int) ([]model.NewMessage, error) {
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
	lines := 0
	for _, it := range v.Items[first : last+1] {
		var nm model.NewMessage
		if it.Seq == 0 {
			s := &v.Synth[it.Synth]
			nm = model.NewMessage{Role: s.Role, Content: s.Content, Name: s.Name, Parts: s.Parts, CreatedAt: s.CreatedAt}
		} else {
			s := &stored[0]
			stored = stored[1:]
			nm = model.NewMessage{Role: s.Role, Content: s.Content, Name: s.Name, Parts: s.Parts, CreatedAt: s.CreatedAt, Meta: s.Meta}
		}
		if lines += strings.Count(nm.Content, "\n") + 2; lines > dialog.ReviseMaxLines {
			return nil, fmt.Errorf("the selection is more than %s lines long: too long to revise in the dialog; select fewer messages", english.Thousands(dialog.ReviseMaxLines))
		}
		msgs = append(msgs, nm)
	}
	return msgs, nil
}

func (m *Model) openRevise(msg reviseReadyMsg) tea.Cmd {
	if msg.sid != m.sid {
		return nil // read in the session shown before a switch
	}
	if msg.err != nil {
		return m.flash(msg.err.Error(), true)
	}
	t := msg.target
	var d *dialog.Text
	d = dialog.NewRevise(m.styles, "Revise "+rangeText(t.first, t.last), msg.orig, func(plan dialog.Revision) tea.Cmd {
		return m.editFrom(d, t, "revised", func(ctx context.Context, t editTarget) error {
			ids := t.ids()[plan.Lo:plan.Hi]
			_, err := t.svc.ReviseMessages(ctx, ops.ReviseArgs{
				Selection:    ops.Selection{SessionID: t.sid, IDs: ids},
				Replacements: plan.Msgs, EditOptions: t.opts(),
			})
			return err
		})
	})
	m.dialogs.Open(d)
	return nil
}
