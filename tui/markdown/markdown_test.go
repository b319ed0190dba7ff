package markdown

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"weft/themes"
)

func TestCutSourceClosesFence(t *testing.T) {
	src := "intro\n```go\n" + strings.Repeat("x := 1\n", 1000) + "```\nafter"
	got := cutSource(src, 100)
	if len(got) > 110 || strings.Count(got, "```")%2 != 0 {
		t.Fatalf("cut %q", got)
	}
	// No newline to cut at: a cut on a rune boundary.
	long := strings.Repeat("é", 100)
	if got := cutSource(long, 51); got != strings.Repeat("é", 25) {
		t.Fatalf("cut inside a rune: %q", got)
	}
}

func TestMarkdownRendering(t *testing.T) {
	md := New(themes.New(themes.Default(true), false).Markdown())
	lines, cut, _ := md.Render("## Plan\n\n- first step\n- second step\n\nUse `redis-cli` here.", 60, true)
	text := ansi.Strip(strings.Join(lines, "\n"))
	for _, want := range []string{"Plan", "• first step", "• second step", "redis-cli"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered markdown lacks %q:\n%s", want, text)
		}
	}
	if cut {
		t.Error("a short message was cut")
	}
	if strings.TrimSpace(ansi.Strip(lines[0])) == "" || strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		t.Errorf("blank lines around the body: %q", lines)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("line of %d cells at width 60: %q", w, ansi.Strip(l))
		}
	}
	// A long message folded renders only its start.
	long := strings.Repeat("A paragraph of words that goes on.\n\n", 500)
	lines, cut, _ = md.Render(long, 60, true)
	if !cut || len(lines) > 200 {
		t.Errorf("folded long message: cut=%v, %d lines", cut, len(lines))
	}
	// Unfolded, its start is markdown and the rest is handed back whole,
	// to be shown as plain text.
	lines, cut, rest := md.Render(long, 60, false)
	if cut || len(lines) < 200 || strings.Count(rest, "A paragraph")+strings.Count(ansi.Strip(strings.Join(lines, "\n")), "A paragraph") != 500 {
		t.Errorf("unfolded long message: cut=%v, %d lines, %d bytes left", cut, len(lines), len(rest))
	}
}

func TestNoColorMarkdownHasNoColour(t *testing.T) {
	md := New(themes.New(themes.Default(true), true).Markdown())
	lines, _, _ := md.Render("# Title\n\n**bold** and `code`\n\n```go\nfunc f() {}\n```", 60, false)
	for _, l := range lines {
		if strings.Contains(l, "\x1b[38") || strings.Contains(l, "\x1b[48") {
			t.Fatalf("colour with NO_COLOR: %q", l)
		}
	}
}
