package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the TUI answers, grouped as help shows them.
// Bindings are switched on and off as the state changes, so help never
// lists a key that does nothing.
type KeyMap struct {
	Up, Down         key.Binding
	HalfUp, HalfDown key.Binding
	Top, Bottom      key.Binding
	Toggle           key.Binding // expand or collapse a marker or a folded item

	Select, Cancel           key.Binding
	Tag, Digest, Snip        key.Binding
	Revise, Insert           key.Binding
	MoveDown, MoveUp, Commit key.Binding
	Undo, Redo               key.Binding
	Operations               key.Binding
	Search, Next, Prev       key.Binding
	Time, Memory             key.Binding
	Sessions, Fork           key.Binding
	Raw, Diff                key.Binding
	Copy, Pager, Filter      key.Binding // see features.go
	Suspend                  key.Binding

	Help key.Binding
	Quit key.Binding
}

// DefaultKeyMap returns the keys as weft ships them.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:         key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("k/↑", "up")),
		Down:       key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("j/↓", "down")),
		HalfUp:     key.NewBinding(key.WithKeys("ctrl+u", "pgup"), key.WithHelp("ctrl+u", "half page up")),
		HalfDown:   key.NewBinding(key.WithKeys("ctrl+d", "pgdown"), key.WithHelp("ctrl+d", "half page down")),
		Top:        key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "first")),
		Bottom:     key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "last")),
		Toggle:     key.NewBinding(key.WithKeys("enter", "space"), key.WithHelp("enter", "expand/collapse")),
		Select:     key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "select a range")),
		Cancel:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Tag:        key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tag")),
		Digest:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "digest")),
		Snip:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "snip")),
		Revise:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "revise")),
		Insert:     key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "insert after")),
		MoveDown:   key.NewBinding(key.WithKeys("J"), key.WithHelp("J/K", "move down/up")),
		MoveUp:     key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "move up")),
		Commit:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm the move")),
		Undo:       key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "undo")),
		Redo:       key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "redo")),
		Operations: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "operations")),
		Search:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Time:       key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "jump to a time")),
		Memory:     key.NewBinding(key.WithKeys("M"), key.WithHelp("M", "memory policy")),
		Sessions:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "sessions")),
		Fork:       key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "fork here")),
		Raw:        key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "raw/effective thread")),
		Diff:       key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "diff: stored → effective")),
		Next:       key.NewBinding(key.WithKeys("n"), key.WithHelp("n/N", "next/previous match")),
		Prev:       key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),
		Copy:       key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy")),
		Pager:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "open in $PAGER")),
		Filter:     key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "filter by role/tag/author")),
		Suspend:    key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "suspend")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp implements help.KeyMap: the keys of the plain thread view.
// The model's own shortHelp picks the keys of its current state.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Down, k.Up, k.Toggle, k.Search, k.Select, k.Digest, k.Snip, k.Tag, k.Undo, k.Operations, k.Time, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap: every key, grouped (moving, reading,
// editing, the rest). ? shows them all, greying those that do nothing
// now.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.HalfUp, k.HalfDown, k.Top, k.Bottom},
		{k.Toggle, k.Select, k.Cancel, k.Search, k.Next, k.Time, k.Memory, k.Filter, k.Copy, k.Pager},
		{k.Tag, k.Digest, k.Snip, k.Revise, k.Insert, k.MoveDown, k.Commit},
		{k.Undo, k.Redo, k.Operations, k.Sessions, k.Fork, k.Raw, k.Diff, k.Suspend, k.Help, k.Quit},
	}
}

// syncKeys switches each binding on or off for the model's state, so help
// never lists a key that does nothing and a key that would do nothing is
// not matched.
func (m *Model) syncKeys() {
	k := &m.keys
	hasRows := m.rows != nil && m.rows.Len() > 0
	moving := m.moving != nil
	plain := !m.raw.on && !moving && m.view != nil
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.HalfUp, &k.HalfDown, &k.Top, &k.Bottom, &k.Toggle} {
		b.SetEnabled(hasRows && !moving)
	}
	for _, b := range []*key.Binding{&k.Select, &k.Tag, &k.Digest, &k.Snip, &k.Revise, &k.MoveDown, &k.MoveUp, &k.Search, &k.Time, &k.Fork} {
		b.SetEnabled(plain && hasRows)
	}
	k.MoveDown.SetEnabled(hasRows && !m.raw.on)
	k.MoveUp.SetEnabled(hasRows && !m.raw.on)
	k.Insert.SetEnabled(plain)
	k.Operations.SetEnabled(plain)
	k.Diff.SetEnabled(plain)
	k.Sessions.SetEnabled(plain)
	// Undo and redo stay on with nothing to do, so the key says why.
	k.Undo.SetEnabled(plain)
	k.Redo.SetEnabled(plain)
	// n and N stay on with no search, so the key says why.
	k.Next.SetEnabled(plain && hasRows)
	k.Prev.SetEnabled(plain && hasRows)
	k.Commit.SetEnabled(moving)
	k.Cancel.SetEnabled(moving || m.raw.on || m.anchor >= 0 || m.full)
	k.Raw.SetEnabled(!moving && m.view != nil && (hasRows || m.raw.on))
	m.syncFeatureKeys()
}

// shortHelp is the bottom line's keys for the current state, the most
// useful first: the line keeps as many as fit (shortLine).
func (m *Model) shortHelp() []key.Binding {
	k := m.keys
	switch {
	case m.dialogs.Front() != nil || m.search.IsOpen():
		return nil // the dialog says its own keys
	case m.moving != nil:
		return m.moveKeys()
	case m.raw.on:
		return []key.Binding{k.Down, k.Up, k.Toggle, k.Raw, k.Cancel, k.HalfDown, k.Top, k.Bottom, k.Help, k.Quit}
	case m.anchor >= 0:
		// esc matters more than q here: q is left to the full help.
		return []key.Binding{k.Down, k.Up, k.Digest, k.Snip, k.Tag, k.Revise, k.MoveDown, k.Cancel, k.Help}
	case m.rows == nil || m.rows.Len() == 0:
		return []key.Binding{k.Insert, k.Sessions, k.Help, k.Quit}
	}
	return []key.Binding{k.Down, k.Up, k.Toggle, k.Search, k.Select, k.Digest, k.Snip, k.Tag, k.Undo, k.Operations, k.Time,
		k.Revise, k.Insert, k.MoveDown, k.Next, k.Redo, k.Sessions, k.Fork, k.Copy, k.Filter, k.Pager, k.Raw, k.Diff, k.HalfDown, k.Top, k.Bottom, k.Help, k.Quit}
}
