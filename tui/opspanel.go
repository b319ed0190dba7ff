package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/termsafe"
	"weft/model"
	"weft/ops"
	"weft/themes"
)

// opsPanel lists a session's operations: space switches one on or off,
// x reverts it, enter jumps to where it shows.
type opsPanel struct {
	svc    *ops.Service
	sid    string
	keys   opsKeys
	list   []ops.OperationOut
	cursor int
	loaded bool // false until the first list arrives: nothing is claimed before
}

// opsKeys is the operations panel's keys. Toggle, Revert and Jump are
// on only while the operation under the cursor can take them, so the
// hint never offers what would do nothing.
type opsKeys struct {
	Up, Down, First, Last key.Binding
	Toggle, Revert, Jump  key.Binding
	Close                 key.Binding
}

func defaultOpsKeys() opsKeys {
	return opsKeys{
		Up:     key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("k/↑", "up")),
		Down:   key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("j/↓", "down")),
		First:  key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "first")),
		Last:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "last")),
		Toggle: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "on/off")),
		Revert: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "revert")),
		Jump:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "jump")),
		Close:  key.NewBinding(key.WithKeys("esc", "o", "q"), key.WithHelp("esc", "close")),
	}
}

// ShortHelp is what the panel's hint lists.
func (k opsKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Toggle, k.Revert, k.Jump, k.Close}
}

func newOpsPanel(svc *ops.Service, sid string) *opsPanel {
	p := &opsPanel{svc: svc, sid: sid, keys: defaultOpsKeys()}
	p.syncKeys()
	return p
}

// syncKeys switches the keys on and off for the operation under the
// cursor.
func (p *opsPanel) syncKeys() {
	op, ok := p.current()
	live := ok && op.Status != model.StatusReverted
	p.keys.Toggle.SetEnabled(live)
	p.keys.Revert.SetEnabled(live)
	p.keys.Jump.SetEnabled(ok && op.Index != nil)
}

type opsLoadedMsg struct {
	list []ops.OperationOut
	err  error
}

// jumpMsg moves the thread's cursor to an item index.
type jumpMsg struct{ index int }

func loadOps(svc *ops.Service, sid string) tea.Cmd {
	return func() tea.Msg {
		res, err := svc.ListOperations(context.Background(), ops.ListOperationsArgs{SessionID: sid})
		return opsLoadedMsg{res.Operations, err}
	}
}

// HandleMsg takes the list as it loads and the panel's keys; keys that
// change an operation start the change in a command.
func (p *opsPanel) HandleMsg(msg tea.Msg) (bool, tea.Cmd) {
	defer p.syncKeys()
	switch msg := msg.(type) {
	case opsLoadedMsg:
		if msg.err == nil {
			// Keep the cursor on the operation it was on: a reload after
			// an agent's edit may add operations above it.
			var keep string
			if op, ok := p.current(); ok {
				keep = op.OperationID
			}
			p.list, p.loaded = msg.list, true
			p.cursor = min(p.cursor, max(len(p.list)-1, 0))
			for i, op := range p.list {
				if op.OperationID == keep {
					p.cursor = i
					break
				}
			}
		}
		return false, nil
	case tea.KeyPressMsg:
		k := p.keys
		switch {
		case key.Matches(msg, k.Close):
			return true, nil
		case key.Matches(msg, k.Down):
			p.cursor = min(p.cursor+1, max(len(p.list)-1, 0))
		case key.Matches(msg, k.Up):
			p.cursor = max(p.cursor-1, 0)
		case key.Matches(msg, k.First):
			p.cursor = 0
		case key.Matches(msg, k.Last):
			p.cursor = max(len(p.list)-1, 0)
		case key.Matches(msg, k.Toggle):
			op, _ := p.current()
			active := !op.Active
			what := fmt.Sprintf("%s switched off", op.OpType)
			if active {
				what = fmt.Sprintf("%s switched on", op.OpType)
			}
			args := ops.ToggleArgs{OperationArgs: ops.OperationArgs{OperationID: op.OperationID, SessionID: p.sid}, Active: &active}
			svc := p.svc
			return false, change(what, func(ctx context.Context) error {
				_, err := svc.ToggleOperation(ctx, args)
				return err
			})
		case key.Matches(msg, k.Revert):
			op, _ := p.current()
			args := ops.OperationArgs{OperationID: op.OperationID, SessionID: p.sid}
			svc := p.svc
			return false, change(fmt.Sprintf("%s reverted", op.OpType), func(ctx context.Context) error {
				_, err := svc.RevertOperation(ctx, args)
				return err
			})
		case key.Matches(msg, k.Jump):
			op, _ := p.current()
			i := *op.Index
			return true, func() tea.Msg { return jumpMsg{i} }
		}
	}
	return false, nil
}

func (p *opsPanel) current() (ops.OperationOut, bool) {
	if p.cursor < 0 || p.cursor >= len(p.list) {
		return ops.OperationOut{}, false
	}
	return p.list[p.cursor], true
}

// change runs a change in a command; its report reloads the thread and
// the panel's list. fn must use only values captured before: it runs on
// its own goroutine.
func change(what string, fn func(ctx context.Context) error) tea.Cmd {
	return func() tea.Msg { return editDoneMsg{what: what, err: fn(context.Background())} }
}

// View draws a window of the list around the cursor, with the hint.
func (p *opsPanel) View(width int, st *themes.Styles) string {
	w := min(width-4, 110)
	var lines []string
	switch {
	case !p.loaded:
		lines = append(lines, st.Thread.Empty.Render("loading…"))
	case len(p.list) == 0:
		lines = append(lines, st.Thread.Empty.Render("no operations yet"))
	}
	// Show a window of the list around the cursor.
	const shown = 12
	from := min(max(p.cursor-shown/2, 0), max(len(p.list)-shown, 0))
	for i := from; i < min(from+shown, len(p.list)); i++ {
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
	title := "Operations"
	if p.loaded {
		title = fmt.Sprintf("Operations (%d)", len(p.list))
	}
	title = st.Dialog.Title.Render(title)
	hint := dialogHint(st, "", p.keys.ShortHelp())
	return st.Dialog.Box.Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, append(append([]string{title}, lines...), hint)...))
}

func describeOp(op ops.OperationOut) string {
	n := len(op.Targets)
	switch op.OpType {
	case model.OpTag:
		return fmt.Sprintf("#%s on %s", strings.Join(op.Tags, " #"), plural(n, "item"))
	case model.OpDigest:
		return fmt.Sprintf("%s → %q", plural(n, "item"), ansi.Truncate(op.Summary, 40, "…"))
	case model.OpRevise:
		return fmt.Sprintf("%s → %d", plural(n, "item"), len(op.Messages))
	case model.OpSnip:
		return plural(n, "item")
	case model.OpResequence:
		return "reordered " + plural(n, "item")
	case model.OpInsert:
		if op.Anchor == "" {
			return plural(len(op.Messages), "message") + " at the start"
		}
		return fmt.Sprintf("%s after %s", plural(len(op.Messages), "message"), op.Anchor)
	}
	return ""
}
