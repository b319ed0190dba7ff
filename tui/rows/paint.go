package rows

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
	"weft/themes"
	"weft/tui/markdown"
)

// FoldedLines is how many body lines an item shows until it is unfolded.
const FoldedLines = 6

// Entry is what a row shows of an item, stored or synthetic.
type Entry struct {
	ID        model.ItemID
	Role      model.Role
	Content   string
	Name      string
	At        string
	Synthetic string // "digest", "revision", "inserted"; empty for stored
	Loaded    bool   // false while a stored message's body is on its way
}

// SynthEntry is what a row shows of a synthetic item (an operation's).
func SynthEntry(s *model.Synthetic) Entry {
	kind := map[model.OpType]string{model.OpDigest: "digest", model.OpRevise: "revision", model.OpInsert: "inserted"}[s.OpType]
	return Entry{ID: s.ID(), Role: s.Role, Content: s.Content, Name: s.Name, At: synthTime(s), Synthetic: kind, Loaded: true}
}

// StoredEntry is what a row shows of a stored message.
func StoredEntry(b *model.Message) Entry {
	return Entry{ID: b.ID, Role: b.Role, Content: b.Content, Name: b.Name, At: b.CreatedAt.Local().Format("Jan 02 15:04"), Loaded: true}
}

// synthTime dates a synthetic item by what it stands for: a digest by
// the span of the messages it covers, anything else by when it was made.
func synthTime(s *model.Synthetic) string {
	const layout = "Jan 02 15:04"
	if s.TimeSpanStart.IsZero() {
		return s.CreatedAt.Local().Format(layout)
	}
	from, to := s.TimeSpanStart.Local(), s.TimeSpanEnd.Local()
	switch {
	case to.IsZero() || to.Equal(from):
		return from.Format(layout)
	case from.Format("Jan 02") == to.Format("Jan 02"):
		return from.Format(layout) + "–" + to.Format("15:04")
	default:
		return from.Format(layout) + " – " + to.Format(layout)
	}
}

// Painter draws rows in a theme: headers and markers in its styles,
// bodies as markdown in its colours.
type Painter struct {
	Styles   *themes.Styles
	Markdown *markdown.Renderer
}

// Item draws an item at width, with its tags: its header, then its body,
// folded to a few lines unless open; dimmed for an original an operation
// hides.
func (p Painter) Item(x Entry, tags []string, width int, open, dimmed bool) []string {
	st := &p.Styles.Thread
	if !x.Loaded {
		return []string{st.Empty.Render(string(x.ID) + " …")}
	}
	// Names, tags and bodies come from the thread: their control
	// characters are shown, not obeyed (termsafe).
	head := []string{p.Styles.RoleStyle(string(x.Role)).Render(termsafe.Line(string(x.Role)))}
	if x.Name != "" {
		head = append(head, st.Time.Render(termsafe.Line(x.Name)))
	}
	head = append(head, st.Time.Render(x.At), st.ID.Render(termsafe.Line(string(x.ID))))
	if x.Synthetic != "" {
		head = append(head, st.Synthetic.Render(x.Synthetic))
	}
	if len(tags) > 0 {
		head = append(head, st.Tag.Render(termsafe.Line("#"+strings.Join(tags, " #"))))
	}
	body := sanitize(strings.TrimRight(x.Content, "\n"))
	limit := FoldedLines
	if x.Role == model.RoleTool {
		limit = 1 // tool output folds to a line until opened
	}
	var lines []string
	cut, folded := false, 0
	if dimmed || x.Role == model.RoleTool {
		bodyStyle := st.Body
		if dimmed {
			bodyStyle = st.Dimmed
		}
		lines = plainLines(body, width-2, bodyStyle, open, limit)
	} else {
		var rest string
		lines, cut, rest = p.Markdown.Render(body, width-2, !open)
		if rest != "" {
			// Said in the header, not in a line of its own: the body's
			// lines are the message's, as the status bar counts them.
			head = append(head, st.Folded.Render(fmt.Sprintf("markdown to %s, plain text past it", sizeText(markdown.OpenSource))))
			lines = append(lines, plainLines(rest, width-2, st.Body, true, 0)...)
		}
	}
	if !open && len(lines) > limit {
		folded = len(lines) - limit
		lines = lines[:limit]
	}
	header := strings.Join(head, " ")
	if dimmed {
		header = st.Dimmed.Render(ansi.Strip(header))
	}
	out := make([]string, 0, len(lines)+2)
	out = append(out, ansi.Truncate(header, width, "…"))
	for _, l := range lines {
		out = append(out, "  "+l)
	}
	switch {
	case cut:
		out = append(out, "  "+st.Folded.Render(fmt.Sprintf("… about %s (enter)", english.Count(folded+markdown.LinesPastCut(body, width-2), "more line"))))
	case folded > 0:
		out = append(out, "  "+st.Folded.Render(fmt.Sprintf("… %s (enter)", english.Count(folded, "more line"))))
	}
	return out
}

// Marker draws an operation's marker in v at width: what the operation
// did, by whom; open when it shows the originals under it.
func (p Painter) Marker(v *model.View, mk *model.Marker, width int, open bool) string {
	sign := "▸"
	if open {
		sign = "▾"
	}
	var what string
	n := len(mk.Hidden)
	switch mk.OpType {
	case model.OpDigest:
		what = fmt.Sprintf("digest of %s", english.Count(n, "message"))
	case model.OpRevise:
		what = fmt.Sprintf("revision of %s into %d", english.Count(n, "message"), mk.Added)
	case model.OpSnip:
		what = fmt.Sprintf("snipped %s", english.Count(n, "message"))
	case model.OpResequence:
		what = resequenceText(v, mk)
	case model.OpInsert:
		what = fmt.Sprintf("inserted %s", english.Count(mk.Added, "message"))
	}
	line := fmt.Sprintf("%s %s by %s", sign, what, termsafe.Line(mk.Author))
	if mk.Rule != "" {
		// The memory policy's: which of its rules, so the operator sees
		// what keeps the thread and can switch it off in o.
		line += " (policy: " + mk.Rule + ")"
	}
	if len(mk.Nested) > 0 {
		line += fmt.Sprintf(" (over %s)", english.Count(len(mk.Nested), "earlier operation"))
	}
	return p.Styles.Thread.Marker.Render(ansi.Truncate(line, width, "…"))
}

// More is the row that ends a marker's long list of originals: how many
// it leaves out.
func (p Painter) More(mk *model.Marker) string {
	return p.Styles.Thread.Dimmed.Render(fmt.Sprintf("   … and %d more", len(mk.Hidden)-MaxExpanded))
}

// plainLines wraps text to width in style. Folded, only the lines shown
// (limit) are styled; the others are wrapped, to be counted.
func plainLines(text string, width int, style lipgloss.Style, open bool, limit int) []string {
	lines := strings.Split(ansi.Wrap(text, width, ""), "\n")
	shown := lines
	if !open && len(shown) > limit {
		shown = shown[:limit]
	}
	for i, l := range shown {
		lines[i] = style.Render(l)
	}
	return lines
}

// sizeText is a size in bytes as people say it.
func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return english.Count(n, "byte")
}

// sanitize makes stored text safe to draw: the control characters of
// escape sequences a tool's output or an imported thread carried are
// shown as pictures (␛ for ESC), so they neither restyle nor move the
// terminal, nor vanish unseen; tabs become spaces.
func sanitize(s string) string {
	s = termsafe.Text(s)
	if strings.IndexByte(s, '\t') >= 0 {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// abs is n without its sign.
func abs(n int) int { return max(n, -n) }

// resequenceText labels a resequence's marker by what moved: the fewest
// messages whose moving explains the new order ("moved 1 message by 1
// place" for two swapped), with the places they moved when they all
// moved as far. The marker keeps the previous order; the view has the
// new one.
func resequenceText(v *model.View, mk *model.Marker) string {
	now := make([]int, 0, len(mk.Hidden)) // where each item, in the previous order, is now
	for _, it := range mk.Hidden {
		if i := v.IndexOf(v.ID(it)); i >= 0 {
			now = append(now, i)
		}
	}
	if len(now) == 0 {
		return "moved " + english.Count(len(mk.Hidden), "message")
	}
	// The positions were refilled: sorted, they are where the items stood
	// in the previous order.
	was := slices.Sorted(slices.Values(now))
	keep := longestRising(now)
	moved, dist := 0, -1
	for i, p := range now {
		if keep[i] {
			continue
		}
		moved++
		switch d := abs(p - was[i]); {
		case dist == -1:
			dist = d
		case dist != d:
			dist = 0 // not all as far
		}
	}
	switch {
	case moved == 0:
		return "kept the order of " + english.Count(len(now), "message")
	case dist > 0:
		return fmt.Sprintf("moved %s by %s", english.Count(moved, "message"), english.Count(dist, "place"))
	}
	return fmt.Sprintf("moved %s of %s", english.Thousands(moved), english.Count(len(now), "message"))
}

// longestRising marks a longest strictly rising subsequence of xs (the
// items that kept their order), in O(n log n).
func longestRising(xs []int) []bool {
	tails := []int{} // tails[l]: index of the smallest end of a rising run of length l+1
	prev := make([]int, len(xs))
	for i, x := range xs {
		l := sort.Search(len(tails), func(l int) bool { return xs[tails[l]] >= x })
		if l > 0 {
			prev[i] = tails[l-1]
		} else {
			prev[i] = -1
		}
		if l == len(tails) {
			tails = append(tails, i)
		} else {
			tails[l] = i
		}
	}
	keep := make([]bool, len(xs))
	if len(tails) > 0 {
		for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
			keep[i] = true
		}
	}
	return keep
}
