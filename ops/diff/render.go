package diff

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"weft/internal/english"
	"weft/internal/termsafe"
	"weft/model"
)

// PreviewRunes is how much of an item's first line a rendered line
// shows.
const PreviewRunes = 100

// Render writes the diff as a unified diff, a line per message: a
// header with both threads' totals, a line per run of kept messages,
// and per hunk an @@ header naming the operation (and one per operation
// inside it), its "-" lines (what was said) and its "+" lines (what the
// model gets). text gives an item's content, for the lines' previews
// (nil: none); the text is the thread's, its control characters shown,
// not obeyed.
func (d *Diff) Render(text func(model.ItemID) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- stored     %s, %s\n", english.Count(d.StoredMessages, "message"), english.Count(d.StoredTokens, "token"))
	fmt.Fprintf(&b, "+++ effective  %s, %s\n", english.Count(d.EffectiveItems, "item"), english.Count(d.EffectiveTokens, "token"))
	k := 0
	for _, h := range d.Hunks {
		for ; k < len(d.Kept) && d.Kept[k].At < h.At; k++ {
			b.WriteString(d.Kept[k].line())
		}
		for _, l := range h.render(text) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	for ; k < len(d.Kept); k++ {
		b.WriteString(d.Kept[k].line())
	}
	if len(d.Unchanged) > 0 {
		verb := "change"
		if len(d.Unchanged) == 1 {
			verb = "changes"
		}
		fmt.Fprintf(&b, "# %s %s nothing the model gets:\n", english.Count(len(d.Unchanged), "operation"), verb)
		for _, op := range d.Unchanged {
			why := string(op.Status)
			if op.Type == model.OpTag && (op.Status == model.StatusActive || op.Status == model.StatusPartial) {
				why = "tags only"
			}
			fmt.Fprintf(&b, "#   %s (%s)\n", op.label(), why)
		}
	}
	return b.String()
}

func (r Run) line() string {
	return fmt.Sprintf(" ⋯ %s kept (%s, %s)\n", span(r.First, r.Last), english.Count(r.Messages, "message"), english.Count(r.Tokens, "token"))
}

// label names an operation: "digest 0123456789abcdef by operator (rule
// turns)".
func (o OpRef) label() string {
	s := fmt.Sprintf("%s %s by %s", o.Type, termsafe.Line(o.ID), termsafe.Line(o.Author))
	if o.Rule != "" {
		s += " (rule " + termsafe.Line(o.Rule) + ")"
	}
	return s
}

// span writes a stretch of stored messages: "m3..m7", "m3".
func span(first, last uint64) string {
	switch {
	case first == 0:
		return "no stored messages"
	case first == last:
		return string(model.MessageID(first))
	}
	return string(model.MessageID(first)) + ".." + string(model.MessageID(last))
}

// Header is a hunk's @@ line: the operation, where it acted and what it
// changed, in messages and tokens.
func (h *Hunk) Header() string {
	var where, what string
	switch h.Op.Type {
	case model.OpInsert:
		where = "at the start"
		if h.Anchor != "" {
			where = "after " + termsafe.Line(string(h.Anchor))
		}
		what = fmt.Sprintf("%s, %s → %s tokens", english.Count(h.Added, "item"), english.Thousands(h.before()), english.Thousands(h.EffectiveTokens))
	case model.OpResequence:
		where = span(h.First, h.Last)
		what = fmt.Sprintf("%s moved, %s", english.Count(h.Added, "item"), english.Count(h.EffectiveTokens, "token"))
	default:
		where = span(h.First, h.Last)
		taken := english.Count(h.Messages, "message")
		if n := h.Synthetic; n > 0 {
			taken += " and " + english.Count(n, "synthetic item")
		}
		if h.Op.Type == model.OpRevise || h.Added != 1 && h.Op.Type != model.OpSnip {
			taken += " → " + english.Count(h.Added, "item")
		}
		what = fmt.Sprintf("%s, %s → %s tokens", taken, english.Thousands(h.before()), english.Thousands(h.EffectiveTokens))
	}
	status := ""
	if h.Op.Status == model.StatusPartial {
		status = ", partial"
	}
	return fmt.Sprintf("@@ %s: %s (%s%s) @@", h.Op.label(), where, what, status)
}

// before counts every item on the hunk's "-" side, synthetic ones
// included (a reordering's are on its "+" side too).
func (h *Hunk) before() int { return h.StoredTokens + h.SyntheticTokens }

// header is an inner operation's @@ line, indented by its depth.
func (in Inner) header() string {
	return fmt.Sprintf("@@ %s↳ %s: %s (%s, %s → %s tokens) @@", strings.Repeat("  ", in.Depth-1), in.Op.label(), span(in.First, in.Last),
		english.Count(in.Messages, "message"), english.Thousands(in.StoredTokens), english.Thousands(in.MadeTokens))
}

// render writes a hunk's lines: its header, the operations inside it,
// then a line per item.
func (h *Hunk) render(text func(model.ItemID) string) []string {
	out := []string{h.Header()}
	for _, in := range h.Within {
		out = append(out, in.header())
	}
	idw := 0
	for _, l := range h.Lines {
		idw = max(idw, utf8.RuneCountInString(string(l.ID)))
	}
	for i, l := range h.Lines {
		if h.LinesOmitted > 0 && i == (len(h.Lines)+1)/2 {
			out = append(out, fmt.Sprintf(" ⋯ %s left out for the budget (a larger max_tokens shows them)", english.Count(h.LinesOmitted, "line")))
		}
		preview := ""
		if text != nil {
			preview = Preview(text(l.ID))
		}
		out = append(out, strings.TrimRight(fmt.Sprintf("%s%-*s  %-9s %6s  %s", l.Sign, idw, termsafe.Line(string(l.ID)), l.Role, english.Thousands(l.Tokens), preview), " "))
	}
	return out
}

// Preview is the first line of a text with something on it, cut to
// PreviewRunes; its control characters are shown, not obeyed.
func Preview(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line = termsafe.Line(line)
		if utf8.RuneCountInString(line) > PreviewRunes {
			r := []rune(line)
			line = string(r[:PreviewRunes-1]) + "…"
		}
		return line
	}
	return ""
}
