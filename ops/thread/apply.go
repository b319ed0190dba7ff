// Package thread is the pure heart of weft: Apply folds operations over
// stored messages into the effective thread (with markers), AppendToView
// extends a view by new messages, and the navigation plans choose which
// items a request returns. Nothing here reads or writes a store.
package thread

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"weft/model"
)

// Apply folds operations over stored messages and returns the effective
// thread. It is pure and deterministic: the same heads, operations and
// active tags always give the same view.
//
// heads[i] describes the stored message with seq i+1; bodies are never
// needed. Operations are folded in the order given (creation order),
// skipping inactive and reverted ones and those whose when_tags are not
// all active.
//
// Each operation costs time in proportion to its targets, not to the
// thread: the thread is a linked list of slots carrying order labels, and
// is walked once at the end to lay out the view.
func Apply(heads []model.Head, ops []model.Op, activeTags []string) *model.View {
	a := newApplier(heads, len(ops))
	for i := range ops {
		a.ops[ops[i].ID] = &ops[i]
	}
	for i := range ops {
		a.apply(&ops[i], activeTags)
	}
	return a.materialize()
}

// ApplyMessages is Apply for callers that hold whole messages.
func ApplyMessages(msgs []model.Message, ops []model.Op, activeTags []string) *model.View {
	heads := make([]model.Head, len(msgs))
	for i := range msgs {
		heads[i] = msgs[i].Head()
	}
	return Apply(heads, ops, activeTags)
}

// AppendToView returns the view extended by newly stored messages, without
// applying anything again. This is exact: no stored operation can name a
// message that did not exist when it was made, and nothing is ever placed
// after the last stored message's slot, so new messages always land at the
// end of the effective thread, untagged. heads are the new messages' heads;
// the first has seq len(v.Where)+1.
func AppendToView(v *model.View, heads []model.Head) *model.View {
	nv := *v
	for _, h := range heads {
		seq := uint64(len(nv.Where) + 1)
		nv.Where = append(nv.Where, int32(len(nv.Items)))
		nv.Items = append(nv.Items, model.Item{Seq: seq, Synth: -1})
		nv.Tokens += int(h.Tokens)
		nv.RawTokens += int(h.Tokens)
	}
	return &nv
}

const (
	slotItem uint8 = iota
	slotMarker
	slotSentinel
)

const nilSlot = -1

// slot is one place in the list. Its links, label and item are kept as
// differences from what slot i holds when Apply starts (prev i-1, next
// i+1, label i*labelGap, stored message i), so a slot that no operation
// touched is all zeros: newApplier writes nothing into a million slots,
// and the memory of those it only reads is never the process's own (the
// kernel maps the zero page). Read and write them through the accessors
// below (prev, next, label, item and their setters).
type slot struct {
	dprev, dnext int32
	dlabel       uint64
	kind         uint8
	ditem        model.Item // for slotItem; Seq less i, Synth plus 1
	marker       int32      // for slotMarker: index into applier.markers
	seen         uint32     // the last present() call that took this slot
}

func (a *applier) prev(s int32) int32   { return s - 1 + a.slots[s].dprev }
func (a *applier) next(s int32) int32   { return s + 1 + a.slots[s].dnext }
func (a *applier) label(s int32) uint64 { return uint64(s)*labelGap + a.slots[s].dlabel }

func (a *applier) setPrev(s, p int32) {
	a.touch(s)
	a.slots[s].dprev = p - (s - 1)
}

func (a *applier) setNext(s, n int32) {
	a.touch(s)
	a.slots[s].dnext = n - (s + 1)
}

func (a *applier) setLabel(s int32, l uint64) {
	a.touch(s)
	a.slots[s].dlabel = l - uint64(s)*labelGap
}

// touch marks stored message s's slot as no longer what it started as
// (a change to its seen mark alone does not count): materialize lays out
// the runs of untouched slots between marked ones without reading them.
func (a *applier) touch(s int32) {
	if s >= 1 && int(s) <= len(a.seqSlot) {
		a.touched[s>>6] |= 1 << (s & 63)
	}
}

// untouchedTo is the first slot from s on that is touched, or the tail;
// s itself must be a stored message's.
func (a *applier) untouchedTo(s int32) int32 {
	end := int32(len(a.seqSlot) + 1) // the tail
	for w := s >> 6; w < int32(len(a.touched)); w++ {
		word := a.touched[w]
		if w == s>>6 {
			word &^= 1<<(s&63) - 1 // the bits before s
		}
		if word != 0 {
			return min(w<<6+int32(bits.TrailingZeros64(word)), end)
		}
	}
	return end
}

func (a *applier) item(s int32) model.Item {
	d := a.slots[s].ditem
	return model.Item{Seq: d.Seq + uint64(s), Synth: d.Synth - 1, Tags: d.Tags}
}

func (a *applier) setItem(s int32, it model.Item) {
	a.touch(s)
	a.slots[s].ditem = model.Item{Seq: it.Seq - uint64(s), Synth: it.Synth + 1, Tags: it.Tags}
}

type markerBuild struct {
	m model.Marker
	// nested marks a marker swallowed by a later operation: it is reported
	// inside that operation's marker, not on its own.
	nested bool
	// children are markers swallowed by this one, as indexes.
	children []int32
}

type synthInfo struct {
	slot   int32 // current slot, nilSlot when not present
	marker int32 // marker this item carries (first item of its op), or -1
	covers int   // stored messages this item stands for
	start  int64 // time span of what it covers (unix nanos)
	end    int64
}

type applier struct {
	heads []model.Head

	slots      []slot
	head, tail int32

	// seqSlot is the slot of stored seq (index seq-1), nilSlot when not
	// present, less seq: zero while the message is where it started.
	seqSlot []int32
	touched []uint64 // bit s: stored message s's slot was changed (see touch)

	synth     []model.Synthetic
	synthInfo []synthInfo
	opSynth   map[string][2]int32 // op ID -> first synth index, count
	ops       map[string]*model.Op
	epoch     uint32 // counts present() calls, for slot.seen

	markers []markerBuild

	tagSets  [][]string
	tagIndex map[string]int32

	status map[string]model.OpStatus
}

const labelGap = uint64(1) << 32

func newApplier(heads []model.Head, nops int) *applier {
	n := len(heads)
	a := &applier{
		heads:    heads,
		slots:    make([]slot, n+2, n+2+nops),
		seqSlot:  make([]int32, n),
		touched:  make([]uint64, n/64+1),
		opSynth:  make(map[string][2]int32),
		ops:      make(map[string]*model.Op, nops),
		tagSets:  [][]string{nil},
		tagIndex: map[string]int32{"": 0},
		status:   make(map[string]model.OpStatus, nops),
	}
	// Slot 0 is the head sentinel, slot n+1 the tail; stored seq s sits in
	// slot s to begin with.
	a.head, a.tail = 0, int32(n+1)
	// Every other slot's zeros already say what it starts as (see slot).
	a.slots[a.head].kind, a.slots[a.tail].kind = slotSentinel, slotSentinel
	a.setPrev(a.head, nilSlot)
	a.setNext(a.tail, nilSlot)
	a.setLabel(a.tail, math.MaxUint64)
	a.setItem(a.head, model.Item{})
	a.setItem(a.tail, model.Item{})
	return a
}

// slotOf returns the slot an item occupies, or nilSlot if the item is not
// present in the thread as it stands.
func (a *applier) slotOf(id model.ItemID) int32 {
	if seq, ok := id.Seq(); ok {
		if seq > uint64(len(a.seqSlot)) {
			return nilSlot
		}
		return a.seqSlot[seq-1] + int32(seq)
	}
	opID, k, ok := id.Synthetic()
	if !ok {
		return nilSlot
	}
	r, ok := a.opSynth[opID]
	if !ok || k >= int(r[1]) {
		return nilSlot
	}
	return a.synthInfo[int(r[0])+k].slot
}

func (a *applier) setSlotOf(it model.Item, s int32) {
	if it.Seq > 0 {
		a.seqSlot[it.Seq-1] = s - int32(it.Seq)
	} else {
		a.synthInfo[it.Synth].slot = s
	}
}

// present resolves targets to the slots they occupy, in the targets'
// order, and counts the targets that resolve to nothing. A synthetic
// target whose operation has not made its items (switched off,
// reverted, waiting for its tags, or orphaned) stands for what that
// operation targeted, recursively, in thread order: so switching an
// inner operation off never lets a message out of an outer one. One made
// by an insert stands for nothing.
func (a *applier) present(targets []model.ItemID) (out []int32, missing int) {
	a.epoch++
	out = make([]int32, 0, len(targets))
	take := func(s int32) {
		if a.slots[s].seen != a.epoch { // each item once
			a.slots[s].seen = a.epoch
			out = append(out, s)
		}
	}
	for _, id := range targets {
		if s := a.slotOf(id); s != nilSlot {
			take(s)
			continue
		}
		stand := a.standIn(id, nil)
		if len(stand) == 0 {
			missing++
		}
		for _, s := range stand {
			take(s)
		}
	}
	return out, missing
}

// standIn resolves a synthetic item that is not in the thread to the
// slots of what its operation targeted, when the operation did not make
// its items; nil otherwise. visiting guards against operations that name
// each other (a damaged or hand-made file).
func (a *applier) standIn(id model.ItemID, visiting map[string]bool) []int32 {
	opID, _, ok := id.Synthetic()
	if !ok {
		return nil
	}
	if _, made := a.opSynth[opID]; made {
		return nil // made, and gone since: it stands for nothing now
	}
	op := a.ops[opID]
	if op == nil || op.Type == model.OpInsert || visiting[opID] {
		return nil
	}
	if visiting == nil {
		visiting = map[string]bool{}
	}
	visiting[opID] = true
	var out []int32
	for _, t := range op.Targets {
		if s := a.slotOf(t); s != nilSlot {
			out = append(out, s)
		} else {
			out = append(out, a.standIn(t, visiting)...)
		}
	}
	delete(visiting, opID)
	if len(out) > 1 {
		out = slices.Compact(a.byLabel(out))
	}
	return out
}

func (a *applier) byLabel(slots []int32) []int32 {
	sorted := slices.Clone(slots)
	slices.SortFunc(sorted, func(x, y int32) int {
		lx, ly := a.label(x), a.label(y)
		switch {
		case lx < ly:
			return -1
		case lx > ly:
			return 1
		}
		return 0
	})
	return sorted
}

func (a *applier) apply(op *model.Op, activeTags []string) {
	switch {
	case op.Reverted():
		a.status[op.ID] = model.StatusReverted
		return
	case !op.Active || !model.TagsSatisfied(op.WhenTags, activeTags):
		a.status[op.ID] = model.StatusInactive
		return
	}

	var pres []int32
	missing := 0
	if op.Type == model.OpInsert {
		anchor := a.head
		if op.Anchor != "" {
			anchor = a.slotOf(op.Anchor)
			if anchor == nilSlot {
				// After the last of what a switched-off item stood for.
				if stand := a.standIn(op.Anchor, nil); len(stand) > 0 {
					anchor = stand[len(stand)-1]
				}
			}
		}
		if anchor != nilSlot {
			pres = []int32{anchor}
		}
	} else {
		pres, missing = a.present(op.Targets)
	}
	switch {
	case len(pres) == 0:
		a.status[op.ID] = model.StatusOrphaned
		return
	case missing > 0:
		a.status[op.ID] = model.StatusPartial
	default:
		a.status[op.ID] = model.StatusActive
	}

	switch op.Type {
	case model.OpTag:
		for _, s := range pres {
			a.touch(s)
			it := &a.slots[s].ditem // Tags are kept as they are
			it.Tags = a.addTags(it.Tags, op.Payload.Tags)
		}
	case model.OpDigest:
		msg := model.NewMessage{Role: model.RoleSystem, Content: op.Payload.Summary, Tokens: op.Payload.SummaryTokens}
		a.replace(op, pres, []model.NewMessage{msg})
	case model.OpRevise:
		a.replace(op, pres, op.Payload.Messages)
	case model.OpSnip:
		a.replace(op, pres, nil)
	case model.OpResequence:
		a.resequence(op, pres)
	case model.OpInsert:
		a.insert(op, pres[0])
	default:
		// An unknown type (from a newer weft) changes nothing here.
		a.status[op.ID] = model.StatusOrphaned
	}
}

// replace removes the present targets and puts msgs where the first of
// them (in thread order) stood. With no msgs it leaves only a marker.
func (a *applier) replace(op *model.Op, pres []int32, msgs []model.NewMessage) {
	ordered := a.byLabel(pres)
	first := ordered[0]

	mk := a.newMarker(op)
	// Swallow markers standing between the first and the last target, and
	// the markers carried by synthetic targets: they are part of what this
	// operation hides.
	// A resequence marker stands just before the slots it reordered and
	// describes them, so it goes with them. (A snip marker there describes
	// what stood before the targets, and stays.)
	for s := a.prev(first); a.slots[s].kind == slotMarker; {
		prev := a.prev(s)
		if a.markers[a.slots[s].marker].m.OpType == model.OpResequence {
			a.nest(mk, a.slots[s].marker)
			a.unlink(s)
		}
		s = prev
	}
	// Markers standing between two targets (with only markers between
	// them) are inside what this operation hides. Looking only next to the
	// targets keeps this in proportion to them, and leaves alone markers
	// between far-apart targets, which belong to the items in between.
	if len(ordered) > 1 {
		isTarget := make(map[int32]bool, len(ordered))
		for _, s := range ordered {
			isTarget[s] = true
		}
		for _, t := range ordered[:len(ordered)-1] {
			n := a.next(t)
			for a.slots[n].kind == slotMarker {
				n = a.next(n)
			}
			if !isTarget[n] {
				continue
			}
			for m := a.next(t); m != n; {
				next := a.next(m)
				a.nest(mk, a.slots[m].marker)
				a.unlink(m)
				m = next
			}
		}
	}
	covers, start, end := 0, int64(math.MaxInt64), int64(math.MinInt64)
	hidden := make([]model.Item, 0, len(ordered))
	for _, s := range ordered {
		it := a.item(s)
		hidden = append(hidden, it)
		c, st, en := a.coverOf(it)
		covers += c
		start, end = min(start, st), max(end, en)
		if it.Synth >= 0 {
			if m := a.synthInfo[it.Synth].marker; m >= 0 {
				a.nest(mk, m)
			}
		}
		a.setSlotOf(it, nilSlot)
	}
	a.markers[mk].m.Hidden = hidden
	a.markers[mk].m.Added = len(msgs)

	for _, s := range ordered[1:] {
		a.unlink(s)
	}
	if len(msgs) == 0 {
		a.touch(first)
		a.slots[first].kind = slotMarker
		a.slots[first].marker = mk
		a.setItem(first, model.Item{})
		return
	}
	// A revise of exactly one summary into one item keeps it a summary.
	summary := op.Type == model.OpDigest ||
		op.Type == model.OpRevise && len(msgs) == 1 && len(hidden) == 1 && hidden[0].Synth >= 0 && a.synth[hidden[0].Synth].Summary
	if start > end { // nothing dated was replaced (a dangling target)
		start, end = op.CreatedAt.UnixNano(), op.CreatedAt.UnixNano()
	}
	slots := append([]int32{first}, a.insertAfter(first, len(msgs)-1)...)
	for k, s := range slots {
		si := a.addSynth(op, k, msgs[k], start)
		sy := &a.synth[si]
		sy.Summary = summary
		sy.TimeSpanStart, sy.TimeSpanEnd = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
		a.synthInfo[si].start, a.synthInfo[si].end = start, end
		if k == 0 {
			a.synthInfo[si].marker = mk
			a.synthInfo[si].covers = covers
			sy.MessageCount = covers
		}
		a.touch(s)
		a.slots[s].kind = slotItem
		a.setItem(s, model.Item{Synth: si})
		a.synthInfo[si].slot = s
	}
}

// coverOf returns how many stored messages an item stands for and the
// time span it stands for (a synthetic item's own, when it covers none).
func (a *applier) coverOf(it model.Item) (int, int64, int64) {
	if it.Seq > 0 {
		t := a.heads[it.Seq-1].At
		return 1, t, t
	}
	si := a.synthInfo[it.Synth]
	return si.covers, si.start, si.end
}

// resequence refills the present targets' positions, sorted, with the
// targets in their new order.
func (a *applier) resequence(op *model.Op, pres []int32) {
	positions := a.byLabel(pres)
	items := make([]model.Item, len(pres))
	for i, s := range pres {
		items[i] = a.item(s)
	}
	mk := a.newMarker(op)
	prev := make([]model.Item, len(positions))
	for i, s := range positions {
		prev[i] = a.item(s)
	}
	a.markers[mk].m.Hidden = prev
	for i, s := range positions {
		a.setItem(s, items[i])
		a.setSlotOf(items[i], s)
	}
	ms := a.insertBefore(positions[0])
	a.touch(ms)
	a.slots[ms].kind = slotMarker
	a.slots[ms].marker = mk
}

// insert puts the operation's messages right after the anchor slot.
func (a *applier) insert(op *model.Op, anchor int32) {
	mk := a.newMarker(op)
	msgs := op.Payload.Messages
	a.markers[mk].m.Added = len(msgs)
	at := a.timeNear(anchor, op)
	for k, s := range a.insertAfter(anchor, len(msgs)) {
		si := a.addSynth(op, k, msgs[k], at)
		a.synthInfo[si].start, a.synthInfo[si].end = at, at
		a.synth[si].TimeSpanStart = time.Unix(0, at).UTC()
		a.synth[si].TimeSpanEnd = a.synth[si].TimeSpanStart
		if k == 0 {
			a.synthInfo[si].marker = mk
		}
		a.touch(s)
		a.slots[s].kind = slotItem
		a.setItem(s, model.Item{Synth: si})
		a.synthInfo[si].slot = s
	}
}

// timeNear is the time an insertion after slot s stands at: the end of
// what the item there stands for, or at the start of the thread the
// start of the first item's; the operation's own time in an empty thread.
func (a *applier) timeNear(s int32, op *model.Op) int64 {
	for s != nilSlot {
		if sl := &a.slots[s]; sl.kind == slotItem {
			if c, start, end := a.coverOf(a.item(s)); c > 0 || start <= end {
				if s == a.head {
					return start
				}
				return end
			}
		}
		if s == a.head { // at the start: look forward instead
			for n := a.next(s); n != a.tail; n = a.next(n) {
				if a.slots[n].kind == slotItem {
					_, start, _ := a.coverOf(a.item(n))
					return start
				}
			}
			break
		}
		s = a.prev(s)
	}
	return op.CreatedAt.UnixNano()
}

func (a *applier) newMarker(op *model.Op) int32 {
	a.markers = append(a.markers, markerBuild{m: model.Marker{
		OpID: op.ID, OpType: op.Type, Author: op.Author, Rule: op.Rule, Summary: op.Payload.Summary,
	}})
	return int32(len(a.markers) - 1)
}

func (a *applier) nest(parent, child int32) {
	a.markers[child].nested = true
	a.markers[parent].children = append(a.markers[parent].children, child)
}

// addSynth records the k-th item an operation puts in, dated at (unix
// nanos) unless the message gives its own time.
func (a *applier) addSynth(op *model.Op, k int, m model.NewMessage, at int64) int32 {
	r, ok := a.opSynth[op.ID]
	if !ok {
		r = [2]int32{int32(len(a.synth)), 0}
	}
	r[1]++
	a.opSynth[op.ID] = r
	when := m.CreatedAt
	if when.IsZero() {
		when = time.Unix(0, at)
	}
	a.synth = append(a.synth, model.Synthetic{
		OpID: op.ID, K: k, OpType: op.Type, Role: m.Role, Content: m.Content, Name: m.Name, Parts: m.Parts,
		CreatedAt: when.UTC(), Tokens: m.Tokens,
	})
	a.synthInfo = append(a.synthInfo, synthInfo{slot: nilSlot, marker: -1})
	return int32(len(a.synth) - 1)
}

func (a *applier) addTags(cur int32, add []string) int32 {
	set := slices.Clone(a.tagSets[cur])
	for _, t := range add {
		if !slices.Contains(set, t) {
			set = append(set, t)
		}
	}
	slices.Sort(set)
	key := strings.Join(set, "\x00")
	if i, ok := a.tagIndex[key]; ok {
		return i
	}
	a.tagSets = append(a.tagSets, set)
	i := int32(len(a.tagSets) - 1)
	a.tagIndex[key] = i
	return i
}

func (a *applier) unlink(s int32) {
	p, n := a.prev(s), a.next(s)
	a.setNext(p, n)
	a.setPrev(n, p)
	a.setPrev(s, nilSlot)
	a.setNext(s, nilSlot)
}

// insertAfter links count new slots after slot s and returns them in order.
func (a *applier) insertAfter(s int32, count int) []int32 {
	if count == 0 {
		return nil
	}
	lo, hi := a.label(s), a.label(a.next(s))
	step := (hi - lo) / uint64(count+1)
	if step == 0 {
		a.relabel()
		lo, hi = a.label(s), a.label(a.next(s))
		step = (hi - lo) / uint64(count+1)
	}
	out := make([]int32, count)
	prev := s
	for i := range count {
		ns := int32(len(a.slots))
		next := a.next(prev)
		a.slots = append(a.slots, slot{})
		a.setPrev(ns, prev)
		a.setNext(ns, next)
		a.setLabel(ns, lo+step*uint64(i+1))
		a.setItem(ns, model.Item{})
		a.setNext(prev, ns)
		a.setPrev(next, ns)
		out[i] = ns
		prev = ns
	}
	return out
}

func (a *applier) insertBefore(s int32) int32 {
	return a.insertAfter(a.prev(s), 1)[0]
}

// relabel spreads the labels evenly again when repeated insertions at one
// place have used up the gap there. It is rare: each gap takes 32 halvings.
func (a *applier) relabel() {
	var l uint64
	for s := a.head; s != a.tail; s = a.next(s) {
		a.setLabel(s, l)
		l += labelGap
	}
}

// materialize walks the list once and lays out the view.
func (a *applier) materialize() *model.View {
	n := len(a.heads)
	v := &model.View{
		Items:   make([]model.Item, 0, n),
		Synth:   a.synth,
		TagSets: a.tagSets,
		Where:   make([]int32, n),
		Status:  a.status,

		SynthWhere: make([]int32, len(a.synth)),
		OpSynth:    make(map[string]int32, len(a.opSynth)),
	}
	for i := range v.SynthWhere {
		v.SynthWhere[i] = -1
	}
	for id, r := range a.opSynth {
		v.OpSynth[id] = r[0]
	}
	const unset = math.MinInt32
	inParts(len(v.Where), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v.Where[i] = unset
		}
	})
	var top []int32
	for s := a.next(a.head); s != a.tail; s = a.next(s) {
		if s <= int32(n) && a.touched[s>>6]&(1<<(s&63)) == 0 {
			// A run of stored messages no operation touched: each
			// slot's next is the one after it, the last one's the
			// touched slot (or the tail) the run ends at.
			end := a.untouchedTo(s)
			for i := s; i < end; i++ {
				v.Where[i-1] = int32(len(v.Items))
				v.Tokens += int(a.heads[i-1].Tokens)
				v.Items = append(v.Items, model.Item{Seq: uint64(i), Synth: -1})
			}
			s = end - 1 // the loop steps on to end
			continue
		}
		sl := &a.slots[s]
		if sl.kind == slotMarker {
			if !a.markers[sl.marker].nested {
				a.markers[sl.marker].m.At = len(v.Items)
				top = append(top, sl.marker)
			}
			continue
		}
		it := a.item(s)
		if it.Synth >= 0 {
			if m := a.synthInfo[it.Synth].marker; m >= 0 && !a.markers[m].nested {
				a.markers[m].m.At = len(v.Items)
				top = append(top, m)
			}
			v.Tokens += a.synth[it.Synth].Tokens
			v.SynthWhere[it.Synth] = int32(len(v.Items))
		} else {
			v.Where[it.Seq-1] = int32(len(v.Items))
			v.Tokens += int(a.heads[it.Seq-1].Tokens)
		}
		v.Items = append(v.Items, it)
	}
	for _, h := range a.heads {
		v.RawTokens += int(h.Tokens)
	}
	v.Markers = make([]model.Marker, len(top))
	for i, m := range top {
		v.Markers[i] = a.buildMarker(m, v, a.markers[m].m.At)
	}
	for i, w := range v.Where {
		if w == unset {
			// Every stored message is either visible or hidden by some
			// marker; this is only reachable by a bug, and placing the
			// message at the end keeps the view usable.
			v.Where[i] = int32(-len(v.Items) - 1)
		}
	}
	return v
}

// buildMarker assembles a top-level marker and its nested markers, and
// records where hidden stored messages went.
func (a *applier) buildMarker(m int32, v *model.View, at int) model.Marker {
	mb := a.markers[m]
	out := mb.m
	out.At = at
	for _, it := range out.Hidden {
		if it.Seq > 0 && v.Where[it.Seq-1] == math.MinInt32 {
			v.Where[it.Seq-1] = int32(-at - 1)
		}
	}
	if len(mb.children) > 0 {
		out.Nested = make([]model.Marker, len(mb.children))
		for i, c := range mb.children {
			out.Nested[i] = a.buildMarker(c, v, at)
		}
	}
	return out
}

// Signature is the effective thread of heads and ops as two copies of a
// session compare it (weft migrate's check): its items' IDs in order,
// each with its tags.
func Signature(heads []model.Head, ops []model.Op, activeTags []string) []model.ItemID {
	v := Apply(heads, ops, activeTags)
	out := make([]model.ItemID, len(v.Items))
	for i, it := range v.Items {
		out[i] = v.ID(it)
		if tags := v.Tags(it); len(tags) > 0 {
			out[i] += model.ItemID("#" + strings.Join(tags, ","))
		}
	}
	return out
}
