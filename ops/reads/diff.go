package reads

import (
	"context"
	"fmt"
	"strings"

	"weft/model"
	"weft/ops"
	"weft/ops/diff"
)

// DiffSessionArgs are diff_session's arguments.
type DiffSessionArgs struct {
	SessionID string `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"fit the result in about this many tokens (default: what the calling client keeps whole, 16000 for most; at least 500, or 0 for no limit): the first hunks in thread order, a long hunk cut to its first and last lines (lines_omitted); later hunks that do not fit are left out, counted, with a next_cursor"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier result, with the same other arguments: the hunks it left out"`
}

// DiffSessionResult is diff_session's result: the totals of both
// threads, the hunks (what each operation changed, line by line, without
// the messages' text), the operations that change nothing, and the same
// diff as text (a line per message, with the start of its text).
type DiffSessionResult struct {
	SessionID string `json:"session_id"`
	Version   uint64 `json:"version"`
	// Diff's totals are the whole diff's; its Hunks are the first that
	// fit, and its Kept the runs of stored messages kept as they were
	// among them.
	diff.Diff
	Text string `json:"text"`
	Fit
}

// DiffSession sets a session's stored thread against its effective one,
// within a budget (diff_session).
func DiffSession(s *ops.Service, ctx context.Context, a DiffSessionArgs) (DiffSessionResult, error) {
	return fitTo(diffSession)(s, ctx, a)
}

func (a *DiffSessionArgs) budget() **int { return &a.MaxTokens }

// lineEstimate is about what a line of a hunk counts, in its JSON and
// its line of text, without the preview of its text.
const lineEstimate = 32

// diffSession gives the diff's hunks in thread order, the first that
// fit, a long one cut to its first and last lines.
func diffSession(s *ops.Service, _ context.Context, a DiffSessionArgs) (DiffSessionResult, error) {
	const tool = "diff_session"
	budget, err := budgetArg(a.MaxTokens)
	if err != nil {
		return DiffSessionResult{}, err
	}
	cur, err := cursorArg(tool, a.Cursor)
	if err != nil {
		return DiffSessionResult{}, err
	}
	snap, err := s.Snapshot(a.SessionID)
	if err != nil {
		return DiffSessionResult{}, err
	}
	d := diff.Compute(snap.View, snap.Ops, snap.Heads)
	res := DiffSessionResult{SessionID: snap.Info.ID, Version: snap.Info.Version, Diff: *d}
	res.Hunks, res.Kept = []diff.Hunk{}, nil
	place := place(snap, tool, a, false)
	start, err := cur.resume(place, len(d.Hunks), func(k int) string { return d.Hunks[k].Op.ID })
	if err != nil {
		return DiffSessionResult{}, err
	}
	rest := d.Hunks[start:]
	// A line's cost: its JSON and text, and the start of its text (a
	// preview is at most about thirty tokens).
	lineCost := func(l diff.Line) int { return lineEstimate + min(l.Tokens, 30) }
	bodies, metas := make([]int, len(rest)), make([]int, len(rest))
	if budget != NoLimit {
		for k, h := range rest {
			metas[k] = 80 + 40*len(h.Within)
			for _, l := range h.Lines {
				bodies[k] += lineCost(l)
			}
		}
	}
	// The frame: the totals, the unchanged operations and the kept
	// runs, and their lines in the text (about twenty tokens each, and
	// the text's header).
	frame := res
	frame.Kept = d.Kept
	pk := newPacker(budget, countJSON(frame)+20*(len(d.Kept)+len(d.Unchanged))+40, bodies, metas)
	for k := range rest {
		var h diff.Hunk
		ok := pk.takeShaped(func(capBody int) (int, bool) {
			h = rest[k]
			if budget == NoLimit || bodies[k] <= capBody {
				return metas[k] + bodies[k], false
			}
			// Keep as many lines as the cap has room for, the first and
			// the last.
			keep, room := 0, capBody
			for _, l := range h.Lines {
				if room -= lineCost(l); room < 0 {
					break
				}
				keep++
			}
			h.Cut(keep)
			cost := metas[k] + lineEstimate
			for _, l := range h.Lines {
				cost += lineCost(l)
			}
			return cost, true
		})
		if !ok {
			pk.skip(len(rest) - k - 1)
			break
		}
		res.Hunks = append(res.Hunks, h)
	}
	res.Kept = keptAmong(d, start, start+len(res.Hunks))
	text, err := diffText(s, snap, d, start, res.Hunks, res.Kept)
	if err != nil {
		return DiffSessionResult{}, err
	}
	var next *readCursor
	if given := start + pk.taken; pk.omitted > 0 && given > 0 {
		next = place.cursor(d.Hunks[given-1].Op.ID)
		text += fmt.Sprintf("# %d more hunks did not fit: diff_session with cursor=next_cursor gives them\n", pk.omitted)
	}
	res.Text = text
	res.Fit = pk.fit(next, fmt.Sprintf("%d later hunks did not fit: call %s again with the same arguments and cursor=next_cursor", pk.omitted, tool))
	return res, nil
}

// keptAmong are the runs of kept messages that go with d.Hunks[start:end]:
// those before the first hunk go with an earlier page, those after the
// last with a later one.
func keptAmong(d *diff.Diff, start, end int) []diff.Run {
	out := []diff.Run{}
	for _, r := range d.Kept {
		if (start == 0 || r.At >= d.Hunks[start].At) && (end == len(d.Hunks) || r.At < d.Hunks[end].At) {
			out = append(out, r)
		}
	}
	return out
}

// diffText renders the hunks given (d.Hunks[start:], as many as given)
// as text, with the runs of kept messages among them and the start of
// each item's text.
func diffText(s *ops.Service, snap ops.Snapshot, d *diff.Diff, start int, hunks []diff.Hunk, kept []diff.Run) (string, error) {
	part := *d
	part.Hunks, part.Kept = hunks, kept
	if start > 0 {
		part.Unchanged = nil // the first page said them
	}
	var seqs []uint64
	for _, h := range hunks {
		for _, l := range h.Lines {
			if seq, ok := l.ID.Seq(); ok {
				seqs = append(seqs, seq)
			}
		}
	}
	msgs, err := s.Messages(snap.Info.ID, seqs)
	if err != nil {
		return "", err
	}
	texts := make(map[model.ItemID]string, len(msgs))
	for _, m := range msgs {
		texts[model.MessageID(m.Seq)] = contentOrParts(m.Content, m.Parts)
	}
	v := snap.View
	return part.Render(func(id model.ItemID) string {
		if t, ok := texts[id]; ok {
			return t
		}
		if sy, ok := v.SynthOf(id); ok {
			return contentOrParts(sy.Content, sy.Parts)
		}
		return ""
	}), nil
}

// contentOrParts is a message's content, or where it has none, what
// its parts are: "[tool_call search]".
func contentOrParts(content string, parts []byte) string {
	if strings.TrimSpace(content) != "" || len(parts) == 0 {
		return content
	}
	var names []string
	for _, p := range model.DecodeParts(parts) {
		n := string(p.Type)
		if p.ToolName != "" {
			n += " " + p.ToolName
		}
		names = append(names, n)
	}
	return "[" + strings.Join(names, ", ") + "]"
}
