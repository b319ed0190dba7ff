package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"weft/internal/english"
	"weft/model"
	"weft/ops"
)

// Revising shows the selected messages as text (see messages.go) and
// makes, on save, one revise of the messages the operator changed, and
// of nothing else: a message saved as it was shown stays the stored (or
// synthetic) message it is, with its tool calls and results, and saving
// the text unchanged makes no operation at all.

// reviseNote is the revise dialog's hint.
const reviseNote = messagesNote + "; messages left as they are stay as they are; an edited tool call or result becomes plain text"

// reviseMaxLines is the most lines the dialog's text area holds (bubbles'
// textarea cuts a longer text): a longer selection is not revised here.
const reviseMaxLines = 10_000

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
func reviseOriginals(svc *ops.Service, v *model.View, first, last int) ([]model.NewMessage, error) {
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
		if lines += strings.Count(nm.Content, "\n") + 2; lines > reviseMaxLines {
			return nil, fmt.Errorf("the selection is more than %s lines long: too long to revise in the dialog; select fewer messages", english.Thousands(reviseMaxLines))
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
	t, orig := msg.target, msg.orig
	var def model.Role // a one-message text may lose its header line
	if len(orig) == 1 {
		def = orig[0].Role
	}
	var (
		d     *textDialog
		shown string             // the text as the dialog shows it
		seen  []model.NewMessage // shown, read back
	)
	d = m.newTextDialog("Revise "+rangeText(t.first, t.last), reviseNote, "to revise", formatMessages(orig),
		func(v string) tea.Cmd {
			saved, err := parseMessages(v, def)
			if err != nil {
				return m.refuse(d, err)
			}
			plan, changed := planRevise(orig, seen, saved)
			if !changed || v == shown {
				return m.flash("unchanged: nothing was revised", false)
			}
			return m.editFrom(d, t, "revised", func(ctx context.Context, t editTarget) error {
				ids := t.ids()[plan.lo:plan.hi]
				_, err := t.svc.ReviseMessages(ctx, ops.ReviseArgs{
					Selection:    ops.Selection{SessionID: t.sid, IDs: ids},
					Replacements: plan.msgs, EditOptions: t.opts(),
				})
				return err
			})
		})
	// What the dialog shows, read back as a save would read it: the text
	// area makes tabs spaces and drops control characters, so a message
	// is unchanged when it reads back as it was shown, not as it was
	// stored.
	shown = d.area.Value()
	if back, err := parseMessages(shown, def); err == nil && len(back) == len(orig) {
		seen = back
	}
	m.dialog = d
	return nil
}

// revision is what a save of the revise dialog changes: the selected
// items lo..hi-1 (a run of them) become msgs.
type revision struct {
	lo, hi int
	msgs   []model.NewMessage
}

// planRevise compares the messages saved with those shown (seen, which
// stand for orig one to one; nil when they could not be told apart) and
// returns the smallest run of the selection that changed, and what
// replaces it. Messages shown and saved alike are put back as they were
// (orig: their parts, names and times kept); changed ones are their text
// alone. changed is false when everything was saved as it was shown.
func planRevise(orig, seen, saved []model.NewMessage) (plan revision, changed bool) {
	n := len(orig)
	if len(seen) != n {
		// Which saved message is which original cannot be told: the
		// whole selection becomes what was saved.
		return revision{lo: 0, hi: n, msgs: textOnly(saved)}, true
	}
	same := func(i int, s model.NewMessage) bool {
		return seen[i].Role == s.Role && seen[i].Content == s.Content
	}
	p := 0
	for p < n && p < len(saved) && same(p, saved[p]) {
		p++
	}
	s := 0
	for s < n-p && s < len(saved)-p && same(n-1-s, saved[len(saved)-1-s]) {
		s++
	}
	if p == n && len(saved) == n {
		return revision{}, false
	}
	plan = revision{lo: p, hi: n - s}
	mid := saved[p : len(saved)-s]
	if plan.lo == plan.hi {
		// Messages were only added: the revise takes a neighbour along,
		// as it was, to stand where they go.
		if plan.lo > 0 {
			plan.lo--
			plan.msgs = append([]model.NewMessage{orig[plan.lo]}, textOnly(mid)...)
		} else {
			plan.hi++
			plan.msgs = append(textOnly(mid), orig[plan.hi-1])
		}
		return plan, true
	}
	// Inside the run, a message saved as it was shown stays as it was
	// (matched in order, as a diff would); an edited one keeps its name
	// if it kept its place and its role.
	kept := matchInOrder(seen[plan.lo:plan.hi], mid, func(a, b model.NewMessage) bool {
		return a.Role == b.Role && a.Content == b.Content
	})
	keepPlaces := plan.hi-plan.lo == len(mid)
	plan.msgs = make([]model.NewMessage, len(mid))
	for k, sm := range mid {
		switch o := plan.lo + k; {
		case kept[k] >= 0:
			plan.msgs[k] = orig[plan.lo+kept[k]]
		case keepPlaces && orig[o].Role == sm.Role:
			plan.msgs[k] = model.NewMessage{Role: sm.Role, Content: sm.Content, Name: orig[o].Name}
		default:
			plan.msgs[k] = model.NewMessage{Role: sm.Role, Content: sm.Content}
		}
	}
	return plan, true
}

// matchInOrder pairs elements of b with equal ones of a, keeping their
// order (a longest common subsequence): out[j] is the index in a of b[j]'s
// pair, or -1. Past a size where that costs too much in Update, only
// elements in the same place are paired.
func matchInOrder[T any](a, b []T, eq func(T, T) bool) []int {
	out := make([]int, len(b))
	for j := range out {
		out[j] = -1
	}
	if len(a)*len(b) > 1<<18 {
		for j := range min(len(a), len(b)) {
			if eq(a[j], b[j]) {
				out[j] = j
			}
		}
		return out
	}
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if eq(a[i], b[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case eq(a[i], b[j]):
			out[j] = i
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// textOnly is saved messages as new text messages.
func textOnly(msgs []model.NewMessage) []model.NewMessage {
	out := make([]model.NewMessage, len(msgs))
	for i, m := range msgs {
		out[i] = model.NewMessage{Role: m.Role, Content: m.Content}
	}
	return out
}
