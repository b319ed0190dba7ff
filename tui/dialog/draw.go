package dialog

import (
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/themes"
)

// What the dialogs draw alike, and what the root's panels (the search,
// the move's hint) draw as the dialogs do.

// NewTextInput makes a one-line input in the theme's styles.
func NewTextInput(st *themes.Styles) textinput.Model {
	in := textinput.New()
	in.SetStyles(st.Input)
	return in
}

// Hint is a dialog's hint line: what to type, when the dialog has
// something to say about it, then the keys that work now, generated
// from the dialog's key map as the root's help line is from its own.
func Hint(st *themes.Styles, note string, keys []key.Binding) string {
	h := help.New()
	h.ShortSeparator = HintSeparator
	h.Styles.ShortKey, h.Styles.ShortDesc, h.Styles.ShortSeparator = st.Dialog.Hint, st.Dialog.Hint, st.Dialog.Hint
	line := h.ShortHelpView(keys)
	switch {
	case note == "":
		return line
	case line == "":
		return st.Dialog.Hint.Render(note)
	}
	return st.Dialog.Hint.Render(note+HintSeparator) + line
}

// HintSeparator stands between the parts of a dialog's hint.
const HintSeparator = " · "

// said wraps what a dialog has to say to its width, on at most a few
// lines: a refusal names what changed, which may take more than one.
func said(style lipgloss.Style, s string, width int) string {
	lines := strings.Split(ansi.Wrap(s, max(width, 10), " "), "\n")
	if len(lines) > 6 {
		lines = append(lines[:5], ansi.Truncate(lines[5], max(width-1, 9), "")+"…")
	}
	return style.Render(strings.Join(lines, "\n"))
}

// Highlight styles the matched characters of s (a fuzzy match's, as
// sahilm/fuzzy gives them). Matches come as byte offsets; lipgloss
// ranges are in cells, so each offset is converted, as gum does.
func Highlight(s string, offsets []int, base, match lipgloss.Style) string {
	var ranges []lipgloss.Range
	for _, b := range offsets {
		if b < 0 || b >= len(s) {
			continue
		}
		_, size := utf8.DecodeRuneInString(s[b:])
		start := ansi.StringWidth(s[:b])
		ranges = append(ranges, lipgloss.NewRange(start, start+ansi.StringWidth(s[b:b+size]), match))
	}
	return lipgloss.StyleRanges(base.Render(s), ranges...)
}
