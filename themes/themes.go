// Package themes holds weft's colours: a palette of semantic tokens per
// theme, and the Styles every screen draws with. No colour literal lives
// outside this package.
package themes

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
)

// Palette is a theme's colours, named by what they mean, not how they
// look.
type Palette struct {
	Name string
	Dark bool // drawn for a dark background

	Fg, FgMuted, FgSubtle color.Color // text, secondary text, faint text (dimmed originals)
	Bg, BgPanel, BgSelect color.Color // background, panels and bars, the selection
	Accent, AccentAlt     color.Color // focus and highlights
	Border                color.Color

	User, Assistant, System, Tool color.Color // role badges
	Synthetic                     color.Color // items made by operations
	Marker                        color.Color // operation markers
	Tag                           color.Color
	Match                         color.Color // search matches
	OK, Warn, Error               color.Color
}

var builtin = map[string]Palette{
	"dark": {
		Name: "dark", Dark: true,
		Fg: lipgloss.Color("#E4E4E7"), FgMuted: lipgloss.Color("#A1A1AA"), FgSubtle: lipgloss.Color("#63636E"),
		Bg: lipgloss.Color("#18181B"), BgPanel: lipgloss.Color("#27272A"), BgSelect: lipgloss.Color("#3F3F46"),
		Accent: lipgloss.Color("#A78BFA"), AccentAlt: lipgloss.Color("#F472B6"), Border: lipgloss.Color("#52525B"),
		User: lipgloss.Color("#60A5FA"), Assistant: lipgloss.Color("#34D399"), System: lipgloss.Color("#FBBF24"), Tool: lipgloss.Color("#F472B6"),
		Synthetic: lipgloss.Color("#C4B5FD"), Marker: lipgloss.Color("#A78BFA"), Tag: lipgloss.Color("#2DD4BF"),
		Match: lipgloss.Color("#FDE047"), OK: lipgloss.Color("#4ADE80"), Warn: lipgloss.Color("#FBBF24"), Error: lipgloss.Color("#F87171"),
	},
	"light": {
		Name: "light", Dark: false,
		Fg: lipgloss.Color("#27272A"), FgMuted: lipgloss.Color("#52525B"), FgSubtle: lipgloss.Color("#A1A1AA"),
		Bg: lipgloss.Color("#FAFAFA"), BgPanel: lipgloss.Color("#F0F0F2"), BgSelect: lipgloss.Color("#E0DDF5"),
		Accent: lipgloss.Color("#6D28D9"), AccentAlt: lipgloss.Color("#BE185D"), Border: lipgloss.Color("#D4D4D8"),
		User: lipgloss.Color("#1D4ED8"), Assistant: lipgloss.Color("#047857"), System: lipgloss.Color("#B45309"), Tool: lipgloss.Color("#BE185D"),
		Synthetic: lipgloss.Color("#6D28D9"), Marker: lipgloss.Color("#7C3AED"), Tag: lipgloss.Color("#0F766E"),
		Match: lipgloss.Color("#CA8A04"), OK: lipgloss.Color("#15803D"), Warn: lipgloss.Color("#B45309"), Error: lipgloss.Color("#B91C1C"),
	},
	"high-contrast": {
		Name: "high-contrast", Dark: true,
		Fg: lipgloss.Color("#FFFFFF"), FgMuted: lipgloss.Color("#E0E0E0"), FgSubtle: lipgloss.Color("#B0B0B0"),
		Bg: lipgloss.Color("#000000"), BgPanel: lipgloss.Color("#000000"), BgSelect: lipgloss.Color("#0000C0"),
		Accent: lipgloss.Color("#FFFF00"), AccentAlt: lipgloss.Color("#00FFFF"), Border: lipgloss.Color("#FFFFFF"),
		User: lipgloss.Color("#00FFFF"), Assistant: lipgloss.Color("#00FF00"), System: lipgloss.Color("#FFFF00"), Tool: lipgloss.Color("#FF00FF"),
		Synthetic: lipgloss.Color("#FFFF00"), Marker: lipgloss.Color("#FFFF00"), Tag: lipgloss.Color("#00FFFF"),
		Match: lipgloss.Color("#FF8000"), OK: lipgloss.Color("#00FF00"), Warn: lipgloss.Color("#FFFF00"), Error: lipgloss.Color("#FF4040"),
	},
}

// Names lists the built-in themes.
func Names() []string {
	names := make([]string, 0, len(builtin))
	for n := range builtin {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns a built-in palette by name.
func Lookup(name string) (Palette, error) {
	p, ok := builtin[strings.ToLower(name)]
	if !ok {
		return Palette{}, fmt.Errorf("no theme %q; the themes are %s", name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// Default is the palette for a terminal background.
func Default(darkBackground bool) Palette {
	if darkBackground {
		return builtin["dark"]
	}
	return builtin["light"]
}
