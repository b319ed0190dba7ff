package themes

import (
	"fmt"
	"image/color"

	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
)

// Markdown is the glamour style message bodies are rendered with:
// glamour's own dark or light style in the palette's colours, or its
// plain style when colour is off. The document has no margin and no blank
// lines around it, since the thread view indents and spaces bodies itself.
func (s *Styles) Markdown() ansi.StyleConfig {
	if s.NoColor {
		c := styles.NoTTYStyleConfig
		c.Document = ansi.StyleBlock{}
		return c
	}
	c := styles.LightStyleConfig
	if s.Palette.Dark {
		c = styles.DarkStyleConfig
	}
	p := s.Palette
	c.Document = ansi.StyleBlock{StylePrimitive: ansi.StylePrimitive{Color: hex(p.Fg)}}
	c.Heading.Color = hex(p.Accent)
	c.H1.Color, c.H1.BackgroundColor = hex(p.Bg), hex(p.Accent)
	c.Link.Color = hex(p.AccentAlt)
	c.LinkText.Color = hex(p.Accent)
	c.Code.Color, c.Code.BackgroundColor = hex(p.AccentAlt), hex(p.BgPanel)
	c.CodeBlock.Margin = nil // code sits flush with the text around it
	c.BlockQuote.Color = hex(p.FgMuted)
	c.HorizontalRule.Color = hex(p.Border)
	c.Item.Color, c.Enumeration.Color = hex(p.FgMuted), hex(p.FgMuted)
	return c
}

// hex writes a colour the way glamour's styles take it.
func hex(c color.Color) *string {
	r, g, b, _ := c.RGBA()
	s := fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
	return &s
}
