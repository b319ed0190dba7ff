package dialog

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
	"weft/ops/reads"
	"weft/themes"
)

// Operations lists a session's operations: space switches one on or
// off, x reverts it once the operator has said yes, enter jumps to where
// it shows. The root reads the list (SetList) and makes the changes.
type Operations struct {
	keys   OperationsKeys
	list   []reads.OperationOut
	cursor int
	loaded bool // false until the first list arrives: nothing is claimed before
	// asking is the operation x would revert, while the panel asks
	// whether to; nil when it asks nothing.
	asking *reads.OperationOut
	said   string // why the last key did nothing; cleared by the next key
}

// OperationsKeys is the operations panel's keys. Toggle, Revert and
// Jump stay on while an operation is listed, so that pressing one on an
// operation it cannot act on says why; the hint lists only those that
// act (usable). Yes and No answer the revert's question.
type OperationsKeys struct {
	Up, Down, First, Last key.Binding
	Toggle, Revert, Jump  key.Binding
	Close                 key.Binding
	Yes, No               key.Binding
}

// DefaultOperationsKeys returns the panel's keys as weft ships them.
func DefaultOperationsKeys() OperationsKeys {
	return OperationsKeys{
		Up:     key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("k/↑", "up")),
		Down:   key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("j/↓", "down")),
		First:  key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "first")),
		Last:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "last")),
		Toggle: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "on/off")),
		Revert: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "revert (asks first)")),
		Jump:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "jump")),
		Close:  key.NewBinding(key.WithKeys("esc", "o", "q"), key.WithHelp("esc", "close")),
		Yes:    key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "revert"), key.WithDisabled()),
		No:     key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n", "keep it"), key.WithDisabled()),
	}
}

// ShortHelp is what the panel's hint lists.
func (k OperationsKeys) ShortHelp() []key.Binding {
	if k.Yes.Enabled() {
		return []key.Binding{k.Yes, k.No}
	}
	return []key.Binding{k.Toggle, k.Revert, k.Jump, k.Close}
}

// NewOperations opens the panel; it claims nothing until its list comes
// (SetList).
func NewOperations() *Operations {
	p := &Operations{keys: DefaultOperationsKeys()}
	p.syncKeys()
	return p
}

// syncKeys switches the keys on and off for the panel's state: while it
// asks, only the answers work.
func (p *Operations) syncKeys() {
	_, ok := p.Current()
	asking := p.asking != nil
	for _, b := range []*key.Binding{&p.keys.Toggle, &p.keys.Revert, &p.keys.Jump} {
		b.SetEnabled(ok && !asking)
	}
	for _, b := range []*key.Binding{&p.keys.Up, &p.keys.Down, &p.keys.First, &p.keys.Last, &p.keys.Close} {
		b.SetEnabled(!asking)
	}
	p.keys.Yes.SetEnabled(asking)
	p.keys.No.SetEnabled(asking)
}

// The panel's keys that act on the operation under the cursor, for
// whyNot.
const (
	opToggle = iota
	opRevert
	opJump
)

// whyNot says why a key (opToggle, opRevert, opJump) does nothing on the
// operation under the cursor, or "" when it acts.
func (p *Operations) whyNot(which int) string {
	op, ok := p.Current()
	if !ok {
		return ""
	}
	what := string(op.OpType)
	switch {
	case which == opToggle && op.Status == model.StatusReverted:
		return "the " + what + " was reverted: it cannot be switched on or off"
	case which == opRevert && op.Status == model.StatusReverted:
		return "the " + what + " is already reverted"
	case which == opJump && op.Index == nil:
		switch op.Status {
		case model.StatusReverted:
			return "the " + what + " was reverted: it shows nowhere"
		case model.StatusInactive:
			if !op.Active {
				return "the " + what + " is switched off: it shows nowhere (" + p.keys.Toggle.Help().Key + " switches it on)"
			}
			return "the " + what + " waits for its tags (" + strings.Join(op.WhenTags, ", ") + "): it shows nowhere"
		case model.StatusOrphaned:
			return "none of the " + what + "'s items is in the thread: it shows nowhere"
		}
		return "the " + what + " shows nowhere in the thread"
	}
	return ""
}

// usable is the keys as the hint shows them: only those that act on
// the operation under the cursor.
func (p *Operations) usable() OperationsKeys {
	k := p.keys
	for which, b := range []*key.Binding{&k.Toggle, &k.Revert, &k.Jump} {
		if p.whyNot(which) != "" {
			b.SetEnabled(false)
		}
	}
	return k
}

// operator is the author the service records for the TUI's edits (and
// the command line's): writes without an agent's name.
const operator = "operator"

// whose names an operation's author for the operator: "your", or the
// agent's name.
func whose(author string) string {
	if author == operator {
		return "your"
	}
	return termsafe.Line(author) + "'s"
}

// SetList shows the session's operations as they are now, the cursor
// kept on the operation it was on: a reload after an agent's edit may
// add operations above it.
func (p *Operations) SetList(list []reads.OperationOut) {
	defer p.syncKeys()
	var keep string
	if op, ok := p.Current(); ok {
		keep = op.OperationID
	}
	p.list, p.loaded = list, true
	p.cursor = min(p.cursor, max(len(p.list)-1, 0))
	for i, op := range p.list {
		if op.OperationID == keep {
			p.cursor = i
			break
		}
	}
}

// HandleMsg takes the panel's keys; keys that change an operation ask
// the root to (ActionToggleOperation, ActionRevertOperation).
func (p *Operations) HandleMsg(msg tea.Msg) Action {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	defer p.syncKeys()
	p.said = ""
	if p.asking != nil {
		return p.answer(k)
	}
	keys := &p.keys
	for which, b := range []*key.Binding{&keys.Toggle, &keys.Revert, &keys.Jump} {
		if key.Matches(k, *b) {
			if why := p.whyNot(which); why != "" {
				p.said = why
				return nil
			}
		}
	}
	switch {
	case key.Matches(k, keys.Close):
		return ActionClose{}
	case key.Matches(k, keys.Down):
		p.cursor = min(p.cursor+1, max(len(p.list)-1, 0))
	case key.Matches(k, keys.Up):
		p.cursor = max(p.cursor-1, 0)
	case key.Matches(k, keys.First):
		p.cursor = 0
	case key.Matches(k, keys.Last):
		p.cursor = max(len(p.list)-1, 0)
	case key.Matches(k, keys.Toggle):
		op, _ := p.Current()
		active := !op.Active
		what := fmt.Sprintf("switched %s %s off", whose(op.Author), op.OpType)
		if active {
			what = fmt.Sprintf("switched %s %s on", whose(op.Author), op.OpType)
		}
		return ActionToggleOperation{ID: op.OperationID, Active: active, What: what}
	case key.Matches(k, keys.Revert):
		op, _ := p.Current()
		p.asking = &op
	case key.Matches(k, keys.Jump):
		op, _ := p.Current()
		return ActionJump{Index: *op.Index}
	}
	return nil
}

// answer takes the answer to "revert this operation?": y reverts it,
// n or esc keeps it; any other key asks again.
func (p *Operations) answer(msg tea.KeyPressMsg) Action {
	switch {
	case key.Matches(msg, p.keys.Yes):
		op := *p.asking
		p.asking = nil
		return ActionRevertOperation{ID: op.OperationID, What: fmt.Sprintf("reverted %s %s", whose(op.Author), describeUndoOut(op))}
	case key.Matches(msg, p.keys.No):
		p.asking = nil
	}
	return nil
}

// describeUndoOut names a listed operation as the undo messages name
// one: "digest of 10 items".
func describeUndoOut(op reads.OperationOut) string {
	if n := len(op.Targets); n > 0 {
		return fmt.Sprintf("%s of %s", op.OpType, english.Count(n, "item"))
	}
	return string(op.OpType)
}

// Len is how many operations the panel lists.
func (p *Operations) Len() int { return len(p.list) }

// Current is the operation under the cursor; ok is false while the
// list is empty.
func (p *Operations) Current() (reads.OperationOut, bool) {
	if p.cursor < 0 || p.cursor >= len(p.list) {
		return reads.OperationOut{}, false
	}
	return p.list[p.cursor], true
}

// View draws a window of the list around the cursor, with the hint.
func (p *Operations) View(width int, st *themes.Styles) string {
	w := min(width-4, 110)
	var lines []string
	switch {
	case !p.loaded:
		lines = append(lines, st.Thread.Empty.Render("loading…"))
	case len(p.list) == 0:
		lines = append(lines, st.Thread.Empty.Render("no operations yet"))
	}
	// Show a window of the list around the cursor, saying what is above
	// and below it.
	const shown = 12
	from := min(max(p.cursor-shown/2, 0), max(len(p.list)-shown, 0))
	to := min(from+shown, len(p.list))
	if from > 0 {
		lines = append(lines, st.Thread.Empty.Render("  ↑ "+english.Thousands(from)+" more"))
	}
	for i := from; i < to; i++ {
		op := p.list[i]
		at, _ := time.Parse(time.RFC3339Nano, op.CreatedAt)
		// Authors, tags and summaries come from agents and imports: shown,
		// not obeyed.
		line := fmt.Sprintf("%-10s %-9s %-12s %s  %s", op.OpType, op.Status, ansi.Truncate(termsafe.Line(op.Author), 12, "…"), at.Local().Format("Jan 02 15:04"), termsafe.Line(describeOp(op)))
		style := st.List.Item
		prefix := "  "
		if i == p.cursor {
			style, prefix = st.List.Selected, "▸ "
		}
		if op.Status == model.StatusReverted || op.Status == model.StatusInactive || op.Status == model.StatusOrphaned {
			style = style.Faint(true)
		}
		lines = append(lines, prefix+style.Render(ansi.Truncate(line, w-6, "…")))
	}
	if to < len(p.list) {
		lines = append(lines, st.Thread.Empty.Render("  ↓ "+english.Thousands(len(p.list)-to)+" more"))
	}
	title := "Operations"
	if p.loaded {
		title = fmt.Sprintf("Operations (%d)", len(p.list))
	}
	title = st.Dialog.Title.Render(title)
	var tail []string
	switch {
	case p.asking != nil:
		// Reverting is for good: the question names what goes and whose
		// it is, so an agent's work is not reverted unawares.
		op := p.asking
		q := fmt.Sprintf("Revert %s %s? A reverted operation cannot be switched on again.", whose(op.Author), describeUndoOut(*op))
		if later := p.standing(op.OperationID); len(later) > 0 {
			verb := "stay"
			if len(later) == 1 {
				verb = "stays"
			}
			q += fmt.Sprintf(" %s, made over it, %s: it will stand over the %s the %s replaced.", strings.Join(later, " and "), verb, english.Count(len(op.Targets), "item"), op.OpType)
		}
		tail = append(tail, st.Status.Error.Render(ansi.Wrap(q, w-4, "")))
	case p.said != "":
		tail = append(tail, st.Status.Error.Render(ansi.Wrap(p.said, w-4, "")))
	}
	tail = append(tail, Hint(st, "", p.usable().ShortHelp()))
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, append(append([]string{title}, lines...), tail...)...))
}

// standing names the active operations made over what operation id made
// (a revise of its summary): they stay when it is reverted, standing
// over what it had replaced.
func (p *Operations) standing(id string) []string {
	var out []string
	for _, op := range p.list {
		if op.Active && op.Status != model.StatusReverted && model.Over(op.Targets, id) {
			out = append(out, fmt.Sprintf("%s %s %s", whose(op.Author), op.OpType, op.OperationID))
		}
	}
	return out
}

func describeOp(op reads.OperationOut) string {
	n := len(op.Targets)
	switch op.OpType {
	case model.OpTag:
		return fmt.Sprintf("#%s on %s", strings.Join(op.Tags, " #"), english.Count(n, "item"))
	case model.OpDigest:
		// The summary in quotes of its own: quotes inside it are shown as
		// written, not escaped.
		return fmt.Sprintf("%s → “%s”", english.Count(n, "item"), ansi.Truncate(termsafe.Line(op.Summary), 40, "…"))
	case model.OpRevise:
		return fmt.Sprintf("%s → %d", english.Count(n, "item"), len(op.Messages))
	case model.OpSnip:
		return english.Count(n, "item")
	case model.OpResequence:
		return "reordered " + english.Count(n, "item")
	case model.OpInsert:
		if op.Anchor == "" {
			return english.Count(len(op.Messages), "message") + " at the start"
		}
		return fmt.Sprintf("%s after %s", english.Count(len(op.Messages), "message"), op.Anchor)
	}
	return ""
}
