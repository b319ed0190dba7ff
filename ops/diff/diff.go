// Package diff sets a session's stored thread against its effective one,
// message by message: which stored messages the model still gets (kept),
// which it no longer gets (removed by a snip, replaced by a digest's
// summary or a revision), which it gets in another order (moved), and
// which synthetic messages it gets that were never said (summaries,
// revisions, insertions). Every change is grouped under the operation
// that made it, in a hunk that counts the tokens on either side.
//
// It is pure: it reads a view, the operations and the stored messages'
// heads, never a store, and the same inputs always give the same diff.
package diff

import (
	"slices"

	"weft/model"
)

// Change is what became of an item between the stored thread and the
// effective one.
type Change string

// The changes a line shows.
const (
	Kept     Change = "kept"     // in the effective thread where it was (inside a reordered stretch)
	Removed  Change = "removed"  // snipped: the model no longer gets it
	Replaced Change = "replaced" // digested into a summary or revised into other messages
	Moved    Change = "moved"    // in the effective thread, in another place
	Added    Change = "added"    // a synthetic item the model gets: a summary, a revision, an insertion
)

// Line is one item on one side of a hunk. Sign is "-" for the stored
// side (what was said, or an item an earlier operation made that this
// one took out), "+" for the effective side, " " for both (an item a
// reordering left in its place).
//
// Every stored message is kept, or on the "-" side of one hunk, or
// moved; every item of the effective thread is kept, or added by one
// hunk, or moved. A moved item shows in each reordering that moved it,
// and a synthetic one also as added by the operation that made it.
type Line struct {
	Sign   string       `json:"sign"`
	Change Change       `json:"change"`
	ID     model.ItemID `json:"id"`
	Role   model.Role   `json:"role"`
	Tokens int          `json:"tokens"`
	// Index is the item's place in the effective thread, for "+" and
	// " " lines.
	Index *int `json:"index,omitempty"`
	// MadeBy is the operation that made a synthetic item.
	MadeBy string `json:"made_by,omitempty"`
}

// Stored reports whether the line is a stored message (not a synthetic
// item).
func (l Line) Stored() bool {
	_, ok := l.ID.Seq()
	return ok
}

// OpRef names an operation as a diff shows it.
type OpRef struct {
	ID     string         `json:"id"`
	Type   model.OpType   `json:"type"`
	Author string         `json:"author"`
	Rule   string         `json:"rule,omitempty"`
	Status model.OpStatus `json:"status"`
}

// Inner is an earlier operation inside a hunk's: one whose work the
// hunk's operation took in whole (a digest inside a later digest, the
// summary a revise rewrote), with what it covered and made.
type Inner struct {
	Op OpRef `json:"op"`
	// Depth is 1 for an operation directly inside the hunk's, 2 for one
	// inside that, and so on.
	Depth int `json:"depth"`
	// First and Last are the stored messages it covered (seqs; 0 for
	// none).
	First uint64 `json:"first,omitempty"`
	Last  uint64 `json:"last,omitempty"`
	// Messages and StoredTokens count the stored messages it covered;
	// MadeTokens what the items it made counted.
	Messages     int `json:"messages"`
	StoredTokens int `json:"stored_tokens"`
	MadeTokens   int `json:"made_tokens"`
}

// Hunk is what one operation changed, as the effective thread has it
// now.
type Hunk struct {
	Op OpRef `json:"op"`
	// At is where the hunk stands in the effective thread: the index of
	// the first item it put in, or of the item after what it took out.
	At int `json:"at"`
	// First and Last are the stored messages it covers (seqs; 0 when it
	// covers none, as an insertion does).
	First uint64 `json:"first,omitempty"`
	Last  uint64 `json:"last,omitempty"`
	// Anchor is the item an insertion went after ("" at the start).
	Anchor model.ItemID `json:"anchor,omitempty"`
	// Messages counts the stored messages on its "-" side, and Added
	// the items on its "+" side.
	Messages int `json:"messages"`
	Added    int `json:"added"`
	// StoredTokens count the stored messages on its "-" side,
	// EffectiveTokens the items on its "+" side.
	StoredTokens    int `json:"stored_tokens"`
	EffectiveTokens int `json:"effective_tokens"`
	// Synthetic and SyntheticTokens count the items on its "-" side
	// that an operation outside it made (never said, and no longer
	// given to the model either).
	Synthetic       int     `json:"synthetic,omitempty"`
	SyntheticTokens int     `json:"synthetic_tokens,omitempty"`
	Lines           []Line  `json:"lines"`
	Within          []Inner `json:"within,omitempty"`
	// LinesOmitted counts lines left out of a long hunk to fit a budget:
	// Lines then holds its first and last ones.
	LinesOmitted int `json:"lines_omitted,omitempty"`
}

// Run is a stretch of stored messages the effective thread keeps as
// they were, one after another.
type Run struct {
	At       int    `json:"at"` // index of the first in the effective thread
	First    uint64 `json:"first"`
	Last     uint64 `json:"last"`
	Messages int    `json:"messages"`
	Tokens   int    `json:"tokens"`
}

// Diff is a session's stored thread set against its effective one.
type Diff struct {
	StoredMessages  int `json:"stored_messages"`
	StoredTokens    int `json:"stored_tokens"`
	EffectiveItems  int `json:"effective_items"`
	EffectiveTokens int `json:"effective_tokens"`
	KeptMessages    int `json:"kept_messages"`
	KeptTokens      int `json:"kept_tokens"`
	// Hunks are the changes, in the order of the effective thread.
	Hunks []Hunk `json:"hunks"`
	// Kept are the runs of kept stored messages between them.
	Kept []Run `json:"kept"`
	// Unchanged are the operations that change nothing the model gets:
	// switched off, reverted, orphaned, tags, a reordering that left
	// every item in its place.
	Unchanged []OpRef `json:"unchanged"`
}

// Compute sets the stored thread (heads, by seq) against the effective
// one (v, applied from heads and ops).
func Compute(v *model.View, ops []model.Op, heads []model.Head) *Diff {
	c := &computer{v: v, heads: heads, ops: make(map[string]*model.Op, len(ops)), hunkOf: map[string]int{}, treeOf: map[string]int{}}
	for i := range ops {
		c.ops[ops[i].ID] = &ops[i]
	}
	d := &Diff{
		StoredMessages: len(heads), StoredTokens: v.RawTokens,
		EffectiveItems: len(v.Items), EffectiveTokens: v.Tokens,
		Hunks: []Hunk{}, Unchanged: []OpRef{},
	}
	c.d = d
	claimed := map[uint64]bool{}
	for _, m := range v.Markers {
		c.marker(m, claimed)
	}
	c.added()
	c.kept(claimed)
	for i := range d.Hunks {
		c.finish(&d.Hunks[i])
	}
	// A hunk with no lines (a reordering that left every item it shows
	// in place) changes nothing.
	d.Hunks = slices.DeleteFunc(d.Hunks, func(h Hunk) bool {
		if len(h.Lines) == 0 && len(h.Within) == 0 {
			delete(c.hunkOf, h.Op.ID)
			return true
		}
		return false
	})
	slices.SortStableFunc(d.Hunks, func(a, b Hunk) int { return a.At - b.At })
	// An operation with no hunk of its own and none around it changes
	// nothing the model gets.
	for _, op := range ops {
		if _, ok := c.treeOf[op.ID]; ok {
			continue
		}
		if _, ok := c.hunkOf[op.ID]; ok {
			continue
		}
		d.Unchanged = append(d.Unchanged, c.ref(op.ID))
	}
	return d
}

type computer struct {
	v      *model.View
	heads  []model.Head
	ops    map[string]*model.Op
	d      *Diff
	hunkOf map[string]int // op ID -> its hunk, for an operation with one
	treeOf map[string]int // op ID -> the hunk whose operation holds it (Within)
}

func (c *computer) ref(id string) OpRef {
	r := OpRef{ID: id, Status: c.v.Status[id]}
	if op := c.ops[id]; op != nil {
		r.Type, r.Author, r.Rule = op.Type, op.Author, op.Rule
	}
	return r
}

// marker makes the hunk of a top-level marker: the stored messages its
// operation and those inside it took out, the items it took out that
// an operation outside it had made, and what a reordering moved.
func (c *computer) marker(m model.Marker, claimed map[uint64]bool) {
	h := Hunk{Op: c.ref(m.OpID), At: m.At}
	if op := c.ops[m.OpID]; op != nil && op.Type == model.OpInsert {
		h.Anchor = op.Anchor
	}
	hi := len(c.d.Hunks)
	c.hunkOf[m.OpID] = hi
	// The operations in this tree, and the stored messages they hid.
	inTree := map[string]bool{m.OpID: true}
	var walk func(ms []model.Marker, depth int)
	walk = func(ms []model.Marker, depth int) {
		for _, n := range ms {
			inTree[n.OpID] = true
			c.treeOf[n.OpID] = hi
			in := Inner{Op: c.ref(n.OpID), Depth: depth}
			for _, s := range c.hiddenSeqs(n, nil) {
				in.Messages++
				in.StoredTokens += int(c.heads[s-1].Tokens)
				if in.First == 0 || s < in.First {
					in.First = s
				}
				in.Last = max(in.Last, s)
			}
			in.MadeTokens = c.madeTokens(n.OpID)
			h.Within = append(h.Within, in)
			walk(n.Nested, depth+1)
		}
	}
	walk(m.Nested, 1)

	sorted := c.hiddenSeqs(m, nil)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	h.Lines = make([]Line, 0, len(sorted))
	change := Replaced
	if m.OpType == model.OpSnip {
		change = Removed
	}
	for _, s := range sorted {
		claimed[s] = true
		h.Lines = append(h.Lines, Line{Sign: "-", Change: change, ID: model.MessageID(s), Role: model.RoleFromCode(c.heads[s-1].Role), Tokens: int(c.heads[s-1].Tokens)})
	}
	// Synthetic items it took out whose operation is not inside it: a
	// later item of a revision, an insertion's. They were never said,
	// and the model no longer gets them.
	var synth func(n model.Marker)
	synth = func(n model.Marker) {
		if n.OpType != model.OpResequence {
			for _, it := range n.Hidden {
				if it.Seq > 0 {
					continue
				}
				sy := &c.v.Synth[it.Synth]
				if inTree[sy.OpID] {
					continue
				}
				h.Lines = append(h.Lines, Line{Sign: "-", Change: change, ID: sy.ID(), Role: sy.Role, Tokens: sy.Tokens, MadeBy: sy.OpID})
			}
		}
		for _, k := range n.Nested {
			synth(k)
		}
	}
	synth(m)
	// What a reordering here, or inside, moved and the effective thread
	// still shows.
	var moves func(n model.Marker)
	moves = func(n model.Marker) {
		if n.OpType == model.OpResequence {
			h.Lines = append(h.Lines, c.moved(n, claimed)...)
		}
		for _, k := range n.Nested {
			moves(k)
		}
	}
	moves(m)
	c.d.Hunks = append(c.d.Hunks, h)
}

// hiddenSeqs appends to seqs the stored messages that marker n's
// operation, and those inside it, took out of the thread (each once: a
// message taken out is in the view no more, for a later operation to
// take). A reordering takes nothing out: the items it lists are where it
// put them.
func (c *computer) hiddenSeqs(n model.Marker, seqs []uint64) []uint64 {
	if n.OpType != model.OpResequence {
		for _, it := range n.Hidden {
			if it.Seq > 0 && int(it.Seq) <= len(c.heads) && c.v.IndexOfSeq(it.Seq) < 0 {
				seqs = append(seqs, it.Seq)
			}
		}
	}
	for _, k := range n.Nested {
		seqs = c.hiddenSeqs(k, seqs)
	}
	return seqs
}

// madeTokens counts the items an operation made.
func (c *computer) madeTokens(opID string) int {
	first, ok := c.v.OpSynth[opID]
	if !ok {
		return 0
	}
	n := 0
	for i := int(first); i < len(c.v.Synth) && c.v.Synth[i].OpID == opID; i++ {
		n += c.v.Synth[i].Tokens
	}
	return n
}

// moved gives the lines of a reordering: the items it moved that the
// effective thread still shows, in their old order ("-"), then all it
// reordered that is still shown, in their new order ("+" for those
// moved, " " for those it left in place). Nothing when it left every
// shown item where it was.
func (c *computer) moved(n model.Marker, claimed map[uint64]bool) []Line {
	type shown struct {
		it  model.Item
		idx int
	}
	var old []shown
	for _, it := range n.Hidden {
		if idx := c.v.IndexOf(c.v.ID(it)); idx >= 0 {
			old = append(old, shown{c.v.Items[idx], idx})
		}
	}
	now := slices.Clone(old)
	slices.SortFunc(now, func(a, b shown) int { return a.idx - b.idx })
	same := make([]bool, len(old))
	changed := false
	for r := range old {
		same[r] = old[r].idx == now[r].idx
		changed = changed || !same[r]
	}
	if !changed {
		return nil
	}
	stay := map[int]bool{}
	var out []Line
	for r, s := range old {
		if same[r] {
			stay[s.idx] = true
			continue
		}
		l := c.line(s.it, "-", Moved, -1)
		out = append(out, l)
	}
	for _, s := range now {
		if s.it.Seq > 0 {
			claimed[s.it.Seq] = true
		}
		if stay[s.idx] {
			out = append(out, c.line(s.it, " ", Kept, s.idx))
		} else {
			out = append(out, c.line(s.it, "+", Moved, s.idx))
		}
	}
	return out
}

// line is an item of the view as a line; idx < 0 gives it no index.
func (c *computer) line(it model.Item, sign string, ch Change, idx int) Line {
	l := Line{Sign: sign, Change: ch}
	if idx >= 0 {
		l.Index = new(idx)
	}
	if it.Seq > 0 {
		h := c.heads[it.Seq-1]
		l.ID, l.Role, l.Tokens = model.MessageID(it.Seq), model.RoleFromCode(h.Role), int(h.Tokens)
		return l
	}
	sy := &c.v.Synth[it.Synth]
	l.ID, l.Role, l.Tokens, l.MadeBy = sy.ID(), sy.Role, sy.Tokens, sy.OpID
	return l
}

// added puts every synthetic item of the effective thread on the "+"
// side of its operation's hunk, or of the hunk that holds its
// operation; an item whose operation has neither (none should) gets a
// hunk of its own.
func (c *computer) added() {
	for idx, it := range c.v.Items {
		if it.Seq > 0 {
			continue
		}
		opID := c.v.Synth[it.Synth].OpID
		hi, ok := c.hunkOf[opID]
		if !ok {
			hi, ok = c.treeOf[opID]
		}
		if !ok {
			hi = len(c.d.Hunks)
			c.hunkOf[opID] = hi
			c.d.Hunks = append(c.d.Hunks, Hunk{Op: c.ref(opID), At: idx})
		}
		c.d.Hunks[hi].Lines = append(c.d.Hunks[hi].Lines, c.line(it, "+", Added, idx))
	}
}

// kept gathers the stored messages the effective thread shows that no
// hunk claimed into runs: consecutive in both threads, unbroken by a
// hunk.
func (c *computer) kept(claimed map[uint64]bool) {
	at := map[int]bool{}
	for _, h := range c.d.Hunks {
		at[h.At] = true
	}
	open := false // the last run may go on
	for idx, it := range c.v.Items {
		if it.Seq == 0 || claimed[it.Seq] {
			open = false
			continue
		}
		tok := int(c.heads[it.Seq-1].Tokens)
		c.d.KeptMessages++
		c.d.KeptTokens += tok
		if cur := len(c.d.Kept) - 1; open && !at[idx] && it.Seq == c.d.Kept[cur].Last+1 {
			r := &c.d.Kept[cur]
			r.Last, r.Messages, r.Tokens = it.Seq, r.Messages+1, r.Tokens+tok
			continue
		}
		c.d.Kept = append(c.d.Kept, Run{At: idx, First: it.Seq, Last: it.Seq, Messages: 1, Tokens: tok})
		open = true
	}
}

// finish counts a hunk's sides and finds the stored messages it covers.
func (c *computer) finish(h *Hunk) {
	for _, l := range h.Lines {
		seq, stored := l.ID.Seq()
		switch l.Sign {
		case "-":
			switch {
			case stored:
				h.Messages++
				h.StoredTokens += l.Tokens
			case l.Change != Moved:
				h.Synthetic++
				h.SyntheticTokens += l.Tokens
			}
		case "+":
			h.Added++
			h.EffectiveTokens += l.Tokens
		}
		if stored {
			if h.First == 0 || seq < h.First {
				h.First = seq
			}
			h.Last = max(h.Last, seq)
		}
	}
	if h.Lines == nil {
		h.Lines = []Line{}
	}
}

// Cut keeps keep of a hunk's lines (two at least), its first and its
// last, and counts those it leaves out in LinesOmitted; Render says
// where they were.
func (h *Hunk) Cut(keep int) {
	keep = max(keep, 2)
	n := len(h.Lines)
	if keep >= n {
		return
	}
	a := (keep + 1) / 2
	h.LinesOmitted += n - keep
	h.Lines = append(slices.Clone(h.Lines[:a]), h.Lines[n-(keep-a):]...)
}
