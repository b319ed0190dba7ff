package themes

import (
	"image/color"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Styles are what the screens draw with, grouped by screen area. Build
// them with New; with colour off, every style keeps its shape (bold,
// padding, borders) and loses its colours.
type Styles struct {
	Palette Palette
	NoColor bool

	App lipgloss.Style

	Thread struct {
		Role      map[string]lipgloss.Style // badge per role
		Time      lipgloss.Style
		ID        lipgloss.Style
		Body      lipgloss.Style
		Synthetic lipgloss.Style // badge for items made by operations
		Tag       lipgloss.Style
		Folded    lipgloss.Style // "… 40 more lines", tool calls folded to a line
		Cursor    lipgloss.Style // the gutter mark of the cursor's item
		Selected  lipgloss.Style // the gutter mark of a selected item
		Marker    lipgloss.Style // an operation's marker line
		Dimmed    lipgloss.Style // originals shown inside an expanded marker
		Empty     lipgloss.Style
	}

	Status struct {
		Bar     lipgloss.Style
		Key     lipgloss.Style // a label: "session", "tokens"
		Value   lipgloss.Style
		Info    lipgloss.Style
		Error   lipgloss.Style
		Success lipgloss.Style
	}

	Timeline struct {
		Bar    lipgloss.Style
		Cursor lipgloss.Style
		Label  lipgloss.Style
	}

	Search struct {
		Prompt lipgloss.Style
		Match  lipgloss.Style // matched characters
		Result lipgloss.Style
		Active lipgloss.Style // the chosen result
	}

	Dialog struct {
		Box    lipgloss.Style
		Title  lipgloss.Style
		Hint   lipgloss.Style
		Error  lipgloss.Style
		Button lipgloss.Style
	}

	List struct {
		Title    lipgloss.Style
		Item     lipgloss.Style
		Selected lipgloss.Style
		Meta     lipgloss.Style
	}

	Help struct {
		Key  lipgloss.Style
		Desc lipgloss.Style
		Sep  lipgloss.Style
	}

	// Input and TextArea style the one-line inputs (search, tags, times,
	// filters) and the editors of digest, revise and insert. Their
	// cursors stand still: a blinking cursor redraws the screen twice a
	// second for nothing.
	Input    textinput.Styles
	TextArea textarea.Styles
}

// New builds the styles of a palette; noColor keeps shapes and drops
// colours.
func New(p Palette, noColor bool) *Styles {
	c := func(col color.Color) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return col
	}
	fg := func(col color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(col)) }
	s := &Styles{Palette: p, NoColor: noColor}
	s.App = lipgloss.NewStyle()

	t := &s.Thread
	badge := func(col color.Color) lipgloss.Style { return fg(col).Bold(true) }
	t.Role = map[string]lipgloss.Style{
		"user": badge(p.User), "assistant": badge(p.Assistant), "system": badge(p.System), "tool": badge(p.Tool),
	}
	t.Time = fg(p.FgSubtle)
	t.ID = fg(p.FgSubtle)
	t.Body = fg(p.Fg)
	t.Synthetic = fg(p.Synthetic).Italic(true)
	t.Tag = fg(p.Tag)
	t.Folded = fg(p.FgMuted).Italic(true)
	t.Cursor = fg(p.Accent).Bold(true)
	t.Selected = fg(p.AccentAlt).Bold(true)
	t.Marker = fg(p.Marker)
	t.Dimmed = fg(p.FgSubtle)
	t.Empty = fg(p.FgMuted).Italic(true)

	st := &s.Status
	st.Bar = lipgloss.NewStyle().Background(c(p.BgPanel)).Foreground(c(p.FgMuted))
	st.Key = lipgloss.NewStyle().Foreground(c(p.FgSubtle))
	st.Value = lipgloss.NewStyle().Foreground(c(p.Fg))
	st.Info = fg(p.Accent)
	st.Error = fg(p.Error).Bold(true)
	st.Success = fg(p.OK)

	tl := &s.Timeline
	tl.Bar = fg(p.FgMuted)
	tl.Cursor = fg(p.Accent).Bold(true)
	tl.Label = fg(p.FgSubtle)

	se := &s.Search
	se.Prompt = fg(p.Accent).Bold(true)
	se.Match = fg(p.Match).Bold(true).Underline(noColor)
	se.Result = fg(p.FgMuted)
	se.Active = fg(p.Fg).Bold(true)

	d := &s.Dialog
	d.Box = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(p.Accent)).Padding(0, 1)
	d.Title = fg(p.Accent).Bold(true)
	d.Hint = fg(p.FgSubtle)
	d.Error = fg(p.Error)
	d.Button = fg(p.Fg).Bold(true)

	l := &s.List
	l.Title = fg(p.Accent).Bold(true)
	l.Item = fg(p.Fg)
	l.Selected = fg(p.Accent).Bold(true)
	l.Meta = fg(p.FgSubtle)

	h := &s.Help
	h.Key = fg(p.Accent)
	h.Desc = fg(p.FgMuted)
	h.Sep = fg(p.FgSubtle)

	cur := func(col color.Color) color.Color {
		if noColor {
			return nil // the terminal's own cursor colour
		}
		return col
	}
	in := &s.Input
	in.Focused.Prompt = fg(p.Accent).Bold(true)
	in.Focused.Text = fg(p.Fg)
	in.Focused.Placeholder = fg(p.FgSubtle)
	in.Focused.Suggestion = fg(p.FgSubtle)
	in.Blurred = in.Focused
	in.Blurred.Prompt = fg(p.FgMuted)
	in.Blurred.Text = fg(p.FgMuted)
	in.Cursor = textinput.CursorStyle{Color: cur(p.Accent), Shape: tea.CursorBlock}

	ta := &s.TextArea
	ta.Focused.Base = lipgloss.NewStyle()
	ta.Focused.Text = fg(p.Fg)
	ta.Focused.CursorLine = fg(p.Fg)
	ta.Focused.Placeholder = fg(p.FgSubtle)
	ta.Focused.Prompt = fg(p.Accent)
	ta.Focused.EndOfBuffer = fg(p.FgSubtle)
	ta.Focused.LineNumber = fg(p.FgSubtle)
	ta.Focused.CursorLineNumber = fg(p.FgMuted)
	ta.Focused.Selection = lipgloss.NewStyle().Reverse(true)
	ta.Blurred = ta.Focused
	ta.Blurred.Text = fg(p.FgMuted)
	ta.Blurred.CursorLine = fg(p.FgMuted)
	ta.Cursor = textarea.CursorStyle{Color: cur(p.Accent), Shape: tea.CursorBlock}
	return s
}

// RoleStyle returns the badge style of a role (the system style for an
// unknown one).
func (s *Styles) RoleStyle(role string) lipgloss.Style {
	if st, ok := s.Thread.Role[role]; ok {
		return st
	}
	return s.Thread.Role["system"]
}
