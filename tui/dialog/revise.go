package dialog

import (
	tea "charm.land/bubbletea/v2"

	"weft/model"
	"weft/themes"
)

// Revising shows the selected messages as text (messages.go) and makes,
// on save, one revise of the messages the operator changed, and of
// nothing else: a message saved as it was shown stays the stored (or
// synthetic) message it is, with its tool calls and results, and saving
// the text unchanged makes no operation at all. Inserting reads the
// messages written the same way.

// reviseNote is the revise dialog's hint.
const reviseNote = MessagesNote + "; messages left as they are stay as they are; an edited tool call or result becomes plain text"

// ReviseMaxLines is the most lines the dialog's text area holds (bubbles'
// textarea cuts a longer text): a longer selection is not revised here.
const ReviseMaxLines = 10_000

// NewRevise opens the revise dialog on orig, the selected messages
// (whole: names, parts and times), under title; submit makes the revise
// a save asks for. A text that cannot be read is refused in the dialog;
// one saved unchanged closes it, saying so.
func NewRevise(st *themes.Styles, title string, orig []model.NewMessage, submit func(Revision) tea.Cmd) *Text {
	var def model.Role // a one-message text may lose its header line
	if len(orig) == 1 {
		def = orig[0].Role
	}
	var (
		d     *Text
		shown string             // the text as the dialog shows it
		seen  []model.NewMessage // shown, read back
	)
	d = newText(st, title, reviseNote, "to revise", FormatMessages(orig), func(v string) Action {
		saved, err := ParseMessages(v, def)
		if err != nil {
			d.Fail(err.Error())
			return nil
		}
		plan, changed := planRevise(orig, seen, saved)
		if !changed || v == shown {
			return ActionClose{Notice: "unchanged: nothing was revised"}
		}
		return ActionCmd{submit(plan)}
	})
	// What the dialog shows, read back as a save would read it: the text
	// area makes tabs spaces and drops control characters, so a message
	// is unchanged when it reads back as it was shown, not as it was
	// stored.
	shown = d.area.Value()
	if back, err := ParseMessages(shown, def); err == nil && len(back) == len(orig) {
		seen = back
	}
	return d
}

// NewInsert opens the insert dialog under title (which says where),
// with a message of the assistant's begun; submit inserts the messages
// written.
func NewInsert(st *themes.Styles, title string, submit func([]model.NewMessage) tea.Cmd) *Text {
	var d *Text
	d = newText(st, title, MessagesNote, "to insert", HeaderLine(model.RoleAssistant)+"\n", func(v string) Action {
		msgs, err := ParseMessages(v, model.RoleAssistant)
		switch {
		case err != nil:
			d.Fail(err.Error())
			return nil
		case len(msgs) == 0:
			d.Fail("nothing to insert: write a message under its “--- role” line")
			return nil
		}
		return ActionCmd{submit(msgs)}
	})
	return d
}

// Revision is what a save of the revise dialog changes: the selected
// items Lo..Hi-1 (a run of them) become Msgs.
type Revision struct {
	Lo, Hi int
	Msgs   []model.NewMessage
}

// planRevise compares the messages saved with those shown (seen, which
// stand for orig one to one; nil when they could not be told apart) and
// returns the smallest run of the selection that changed, and what
// replaces it. Messages shown and saved alike are put back as they were
// (orig: their parts, names and times kept); changed ones are their text
// alone. changed is false when everything was saved as it was shown.
func planRevise(orig, seen, saved []model.NewMessage) (plan Revision, changed bool) {
	n := len(orig)
	if len(seen) != n {
		// Which saved message is which original cannot be told: the
		// whole selection becomes what was saved.
		return Revision{Lo: 0, Hi: n, Msgs: textOnly(saved)}, true
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
		return Revision{}, false
	}
	plan = Revision{Lo: p, Hi: n - s}
	mid := saved[p : len(saved)-s]
	if plan.Lo == plan.Hi {
		// Messages were only added: the revise takes a neighbour along,
		// as it was, to stand where they go.
		if plan.Lo > 0 {
			plan.Lo--
			plan.Msgs = append([]model.NewMessage{orig[plan.Lo]}, textOnly(mid)...)
		} else {
			plan.Hi++
			plan.Msgs = append(textOnly(mid), orig[plan.Hi-1])
		}
		return plan, true
	}
	// Inside the run, a message saved as it was shown stays as it was
	// (matched in order, as a diff would); an edited one keeps its name
	// if it kept its place and its role.
	kept := matchInOrder(seen[plan.Lo:plan.Hi], mid, func(a, b model.NewMessage) bool {
		return a.Role == b.Role && a.Content == b.Content
	})
	keepPlaces := plan.Hi-plan.Lo == len(mid)
	plan.Msgs = make([]model.NewMessage, len(mid))
	for k, sm := range mid {
		switch o := plan.Lo + k; {
		case kept[k] >= 0:
			plan.Msgs[k] = orig[plan.Lo+kept[k]]
		case keepPlaces && orig[o].Role == sm.Role:
			plan.Msgs[k] = model.NewMessage{Role: sm.Role, Content: sm.Content, Name: orig[o].Name}
		default:
			plan.Msgs[k] = model.NewMessage{Role: sm.Role, Content: sm.Content}
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
