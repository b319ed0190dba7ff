// Package markdown renders message bodies as markdown, in the theme's
// colours, for the thread: a folded message renders only its start, an
// unfolded one up to a bound, past which it is plain text, so neither
// scrolling past a long message nor opening one holds the screen.
package markdown

import (
	"strings"
	"unicode/utf8"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"github.com/charmbracelet/x/ansi"
)

// Renderer renders message bodies with glamour. A glamour renderer is
// made once per width (making one parses the style and sets up
// highlighting); the rendered lines are cached by the caller, per item
// and width.
type Renderer struct {
	style     gansi.StyleConfig
	renderers map[int]*glamour.TermRenderer
}

// New returns a renderer drawing in style (themes.Styles.Markdown).
func New(style gansi.StyleConfig) *Renderer {
	return &Renderer{style: style, renderers: map[int]*glamour.TermRenderer{}}
}

// FoldSource is how much of a folded message is rendered: enough source
// for the lines a folded item shows, so a long message costs no more to
// scroll past than a short one.
const FoldSource = 2048

// OpenSource is how much of an unfolded message is rendered as
// markdown. Rendering costs about a millisecond a kilobyte, all of it in
// Update: past this, a long message (a log, a paste) is wrapped as plain
// text, so unfolding even a huge one never holds the screen for long.
const OpenSource = 16 << 10

// Render returns the lines of text rendered as markdown at width. When
// folded, only the start of a long text is rendered and cut says so;
// unfolded, the start up to OpenSource is, and rest is what is left,
// for the caller to show plainly.
func (md *Renderer) Render(text string, width int, folded bool) (lines []string, cut bool, rest string) {
	src := text
	switch {
	case folded && len(src) > FoldSource:
		src, cut = cutSource(src, FoldSource), true
	case !folded && len(src) > OpenSource:
		src = cutSource(src, OpenSource)
		rest = strings.TrimLeft(text[len(strings.TrimSuffix(src, "\n```")):], "\n")
	}
	out, err := md.renderer(width).Render(src)
	if err != nil {
		// glamour refuses nothing we know of; fall back to plain text
		// rather than hiding the message.
		out = ansi.Wrap(text, width, "")
	}
	lines = strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return trimBlank(lines), cut, rest
}

func (md *Renderer) renderer(width int) *glamour.TermRenderer {
	if r, ok := md.renderers[width]; ok {
		return r
	}
	r, err := glamour.NewTermRenderer(glamour.WithStyles(md.style), glamour.WithWordWrap(width), glamour.WithPreservedNewLines())
	if err != nil {
		panic("markdown: glamour refused weft's markdown style: " + err.Error()) // a programming error
	}
	if len(md.renderers) > 8 {
		clear(md.renderers) // widths change only on resize
	}
	md.renderers[width] = r
	return r
}

// cutSource cuts markdown at a line boundary near n bytes, closing a code
// fence left open so the rest is not rendered as code.
func cutSource(s string, n int) string {
	if i := strings.LastIndexByte(s[:n], '\n'); i > 0 {
		s = s[:i]
	} else {
		s = s[:n]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	if strings.Count(s, "```")%2 == 1 {
		s += "\n```"
	}
	return s
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// LinesPastCut is how many lines of a long text a folded render left
// out at width: the render reads only the start (cutSource cuts at the
// last line break before FoldSource), so the fold's count adds the lines
// the source past the cut wraps to, each line of it a line per width
// characters (about: wide characters and word wrapping take a little
// more). Counting runes, not cells, keeps it fast on a huge message.
func LinesPastCut(s string, width int) int {
	if len(s) <= FoldSource {
		return 0
	}
	rest := s[FoldSource:] // as cutSource cuts: at the last break before FoldSource, else at it
	if i := strings.LastIndexByte(s[:FoldSource], '\n'); i > 0 {
		rest = s[i+1:]
	}
	width = max(width, 1)
	n := 0
	for rest != "" {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		n += max((utf8.RuneCountInString(line)+width-1)/width, 1)
	}
	return n
}
