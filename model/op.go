package model

import (
	"slices"
	"time"
)

// OpType is the kind of an operation.
type OpType string

// The operation types (DESIGN.md, "Apply", says what each does).
const (
	OpTag        OpType = "tag"        // attach tags to the targets
	OpDigest     OpType = "digest"     // replace the targets with one summary
	OpRevise     OpType = "revise"     // replace the targets with new messages
	OpSnip       OpType = "snip"       // remove the targets
	OpResequence OpType = "resequence" // put the targets in a new order
	OpInsert     OpType = "insert"     // add messages after the anchor
)

// OpTypes lists every operation type.
var OpTypes = []OpType{OpTag, OpDigest, OpRevise, OpSnip, OpResequence, OpInsert}

// Structural reports whether the operation changes the shape of the
// thread (and so leaves a marker).
func (t OpType) Structural() bool { return t != OpTag }

// Op is an operation over a session's items. Targets are item IDs captured
// when the operation is made, never indices, so the operation keeps its
// meaning when others before it are toggled, reverted or added.
type Op struct {
	ID   string `json:"id"`
	Type OpType `json:"type"`
	// Targets, in the order that matters: thread order for most types, the
	// new order for resequence.
	Targets []ItemID `json:"targets,omitempty"`
	// Anchor is the item an insert goes after; empty means the start.
	Anchor  ItemID    `json:"anchor,omitempty"`
	Payload OpPayload `json:"payload"`
	// WhenTags makes the operation conditional: it applies only while all
	// of these tags are active in the session.
	WhenTags   []string   `json:"when_tags,omitempty"`
	Active     bool       `json:"active"`
	CreatedAt  time.Time  `json:"created_at"`
	RevertedAt *time.Time `json:"reverted_at,omitempty"`
	Author     string     `json:"author"`
	// Rule is the rule of the memory policy that made the operation
	// (model.Rule...), for one authored MemoryAuthor; "" otherwise.
	Rule string `json:"rule,omitempty"`
	// Turns is how many turns a digest of the policy covers (it stands
	// for them in the summary tier).
	Turns int `json:"turns,omitempty"`
	// Version is the session version this operation's creation produced.
	Version uint64 `json:"version"`
}

// OpPayload carries what each type needs beyond its targets.
type OpPayload struct {
	Tags    []string `json:"tags,omitempty"`    // tag
	Summary string   `json:"summary,omitempty"` // digest
	// SummaryTokens is counted when the digest is made, so applying never
	// runs a tokenizer.
	SummaryTokens int `json:"summary_tokens,omitempty"`
	// SummarySource says what wrote a digest's summary, when weft had it
	// written (sampling, endpoint, extractive, upstream), and
	// SummaryModel the model, when known; "" for a summary given.
	SummarySource string       `json:"summary_source,omitempty"`
	SummaryModel  string       `json:"summary_model,omitempty"`
	Messages      []NewMessage `json:"messages,omitempty"` // revise, insert
}

// Reverted reports whether the operation has been reverted.
func (o *Op) Reverted() bool { return o.RevertedAt != nil }

// Applies reports whether the operation takes part in Apply given the
// session's active tags.
func (o *Op) Applies(activeTags []string) bool {
	if !o.Active || o.Reverted() {
		return false
	}
	return TagsSatisfied(o.WhenTags, activeTags)
}

// TagsSatisfied reports whether every tag in want is in active.
func TagsSatisfied(want, active []string) bool {
	for _, t := range want {
		if !slices.Contains(active, t) {
			return false
		}
	}
	return true
}

// OpStatus is what an operation did in the latest view.
type OpStatus string

const (
	StatusActive   OpStatus = "active"   // applied to all its targets
	StatusInactive OpStatus = "inactive" // switched off, or its when_tags are not active
	StatusReverted OpStatus = "reverted" // reverted; kept for the record
	StatusPartial  OpStatus = "partial"  // applied to the targets still present
	StatusOrphaned OpStatus = "orphaned" // none of its targets is present: did nothing
)

// Over reports whether targets hold an item operation id made (its
// summary, its replacements, what it inserted): an operation over such
// an item stands over what id had replaced while id is off or reverted.
func Over(targets []ItemID, id string) bool {
	for _, t := range targets {
		if o, _, ok := t.Synthetic(); ok && o == id {
			return true
		}
	}
	return false
}
