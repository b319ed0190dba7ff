package model

import (
	"encoding/json"
	"time"
)

// View is the result of applying a session's operations to its stored
// messages: the effective thread, plus the markers that show where each
// structural operation acted. A View is immutable once built.
//
// Items are kept compact (16 bytes each) so a view of a million messages
// stays small; stored messages are referred to by seq and read lazily.
type View struct {
	SessionID string
	Version   uint64

	// Items is the effective thread, in order. Markers are not items.
	Items []Item
	// Synth holds every synthetic item made while applying, including
	// ones later hidden by another operation.
	Synth []Synthetic
	// TagSets are the distinct tag lists attached to items; Item.Tags
	// indexes it, with 0 meaning no tags.
	TagSets [][]string

	// Markers, in thread order. Marker.At is the index of the item the
	// marker stands before (len(Items) for the end).
	Markers []Marker

	// Where maps a stored message (seq-1) to its place: i >= 0 means it is
	// Items[i]; -(i+1) means it is hidden by the item or marker at i.
	Where []int32

	// SynthWhere maps a synthetic item (index into Synth) to its index in
	// Items, or -1 when a later operation hides it; OpSynth maps an
	// operation ID to the index of its first synthetic item.
	SynthWhere []int32
	OpSynth    map[string]int32

	// Status of every operation, by operation ID.
	Status map[string]OpStatus

	// Tokens of the effective thread and of the stored thread.
	Tokens    int
	RawTokens int
}

// Item is one element of a view: a stored message (Seq > 0) or a
// synthetic one (Synth >= 0).
type Item struct {
	Seq   uint64 // stored message seq; 0 for a synthetic item
	Synth int32  // index into View.Synth; -1 for a stored message
	Tags  int32  // index into View.TagSets; 0 for none
}

// Synthetic is a message made by an operation: a digest's summary, a
// revision's replacement, an insertion.
type Synthetic struct {
	OpID    string
	K       int
	OpType  OpType
	Role    Role
	Content string
	Name    string
	// Parts are the message's structured parts (tool calls, results),
	// as the operation gave them: a revise that kept a tool call as it
	// was keeps its structure.
	Parts json.RawMessage
	// CreatedAt lies inside the time span the item stands for: where a
	// digest or revision starts, or the time of the item an insertion
	// follows (a time the message itself gave is kept), never the time
	// the operation was made.
	CreatedAt time.Time
	Tokens    int
	// Summary marks a digest's summary, or the one item a revise put in
	// place of exactly one summary: it still summarises what the digest
	// covered.
	Summary bool
	// MessageCount is how many stored messages the item stands for (on
	// the first item of its operation only, so nothing counts twice), and
	// TimeSpanStart..TimeSpanEnd their time span (on every item).
	MessageCount  int
	TimeSpanStart time.Time
	TimeSpanEnd   time.Time
}

// ID returns the synthetic item's ID.
func (s *Synthetic) ID() ItemID { return SyntheticID(s.OpID, s.K) }

// Marker records where a structural operation acted and what it hid.
type Marker struct {
	OpID   string
	OpType OpType
	Author string
	// Rule is the memory policy's rule that made the operation, if one
	// did (Op.Rule).
	Rule string
	At   int
	// Hidden are the items the operation collapsed, removed, replaced or
	// moved (for a resequence: the items in their previous order).
	Hidden []Item
	// Nested are markers of earlier operations inside the range this one
	// swallowed.
	Nested []Marker
	// Added is the number of synthetic items the operation put in.
	Added   int
	Summary string
}

// Len is the number of items in the effective thread.
func (v *View) Len() int { return len(v.Items) }

// ID returns the ID of an item of this view.
func (v *View) ID(it Item) ItemID {
	if it.Seq > 0 {
		return MessageID(it.Seq)
	}
	return v.Synth[it.Synth].ID()
}

// IsSummary reports whether the item at index i is a summary (a
// digest's, or a revision of one).
func (v *View) IsSummary(i int) bool {
	it := v.Items[i]
	return it.Seq == 0 && v.Synth[it.Synth].Summary
}

// Tags returns the tags attached to an item.
func (v *View) Tags(it Item) []string {
	if it.Tags <= 0 || int(it.Tags) >= len(v.TagSets) {
		return nil
	}
	return v.TagSets[it.Tags]
}

// IndexOfSeq returns the index of a stored message in the effective
// thread, or -1 if it is hidden or unknown.
func (v *View) IndexOfSeq(seq uint64) int {
	if seq == 0 || seq > uint64(len(v.Where)) {
		return -1
	}
	if w := v.Where[seq-1]; w >= 0 {
		return int(w)
	}
	return -1
}

// PlaceOfSeq returns where a stored message is or would be: its own index
// when visible, else the index of the item or marker that hides it.
func (v *View) PlaceOfSeq(seq uint64) (idx int, visible bool) {
	if seq == 0 || seq > uint64(len(v.Where)) {
		return -1, false
	}
	w := v.Where[seq-1]
	if w >= 0 {
		return int(w), true
	}
	return int(-w - 1), false
}

// IndexOf returns the index of an item in the effective thread, or -1 if
// no such item is there (hidden by an operation, or never made).
func (v *View) IndexOf(id ItemID) int {
	if seq, ok := id.Seq(); ok {
		return v.IndexOfSeq(seq)
	}
	i, ok := v.synthIndex(id)
	if !ok {
		return -1
	}
	return int(v.SynthWhere[i])
}

// SynthOf is the synthetic item id names, if the view made it.
func (v *View) SynthOf(id ItemID) (*Synthetic, bool) {
	i, ok := v.synthIndex(id)
	if !ok {
		return nil, false
	}
	return &v.Synth[i], true
}

// synthIndex is the index in Synth of the synthetic item id names.
func (v *View) synthIndex(id ItemID) (int, bool) {
	opID, k, ok := id.Synthetic()
	if !ok {
		return 0, false
	}
	first, ok := v.OpSynth[opID]
	if !ok {
		return 0, false
	}
	i := int(first) + k
	if i >= len(v.Synth) || v.Synth[i].OpID != opID {
		return 0, false
	}
	return i, true
}
