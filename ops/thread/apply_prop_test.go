package thread

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"weft/model"
)

// refItem is an element of the reference implementation's thread.
type refItem struct {
	id   model.ItemID
	tags []string
}

// referenceApply is DESIGN.md's definition of Apply, written as plainly as
// possible over a slice: slow, and obviously right.
func referenceApply(n int, ops []model.Op, active []string) ([]refItem, map[string]model.OpStatus) {
	var th []refItem
	for s := 1; s <= n; s++ {
		th = append(th, refItem{id: model.MessageID(uint64(s))})
	}
	status := map[string]model.OpStatus{}
	find := func(id model.ItemID) int {
		return slices.IndexFunc(th, func(x refItem) bool { return x.id == id })
	}
	byID := map[string]*model.Op{}
	for i := range ops {
		byID[ops[i].ID] = &ops[i]
	}
	made := map[string]bool{} // ops that have put synthetic items in
	// resolve is where an item stands, or, for a synthetic item whose
	// operation made none, where what that operation targeted stands.
	var resolve func(id model.ItemID, visiting map[string]bool) []int
	resolve = func(id model.ItemID, visiting map[string]bool) []int {
		if j := find(id); j >= 0 {
			return []int{j}
		}
		opID, _, ok := id.Synthetic()
		inner := byID[opID]
		if !ok || made[opID] || inner == nil || inner.Type == model.OpInsert || visiting[opID] {
			return nil
		}
		visiting[opID] = true
		var out []int
		for _, t := range inner.Targets {
			out = append(out, resolve(t, visiting)...)
		}
		delete(visiting, opID)
		slices.Sort(out)
		return slices.Compact(out)
	}
	synth := func(op *model.Op, k int) refItem {
		made[op.ID] = true
		return refItem{id: model.SyntheticID(op.ID, k)}
	}
	for i := range ops {
		op := &ops[i]
		if op.Reverted() {
			status[op.ID] = model.StatusReverted
			continue
		}
		if !op.Active || !model.TagsSatisfied(op.WhenTags, active) {
			status[op.ID] = model.StatusInactive
			continue
		}
		if op.Type == model.OpInsert {
			at := 0
			if op.Anchor != "" {
				stand := resolve(op.Anchor, map[string]bool{})
				if len(stand) == 0 {
					status[op.ID] = model.StatusOrphaned
					continue
				}
				at = stand[len(stand)-1] + 1
			}
			status[op.ID] = model.StatusActive
			var ins []refItem
			for k := range op.Payload.Messages {
				ins = append(ins, synth(op, k))
			}
			th = slices.Insert(th, at, ins...)
			continue
		}
		var present []int // positions, in the targets' order, each once
		missing := 0
		for _, id := range op.Targets {
			ps := resolve(id, map[string]bool{})
			if len(ps) == 0 {
				missing++
			}
			for _, p := range ps {
				if !slices.Contains(present, p) {
					present = append(present, p)
				}
			}
		}
		switch {
		case len(present) == 0:
			status[op.ID] = model.StatusOrphaned
			continue
		case missing > 0:
			status[op.ID] = model.StatusPartial
		default:
			status[op.ID] = model.StatusActive
		}
		pos := slices.Clone(present)
		slices.Sort(pos)
		switch op.Type {
		case model.OpTag:
			for _, p := range pos {
				for _, t := range op.Payload.Tags {
					if !slices.Contains(th[p].tags, t) {
						th[p].tags = append(th[p].tags, t)
					}
				}
				slices.Sort(th[p].tags)
			}
		case model.OpResequence:
			moved := make([]refItem, len(present))
			for k, p := range present {
				moved[k] = th[p]
			}
			for k, p := range pos {
				th[p] = moved[k]
			}
		case model.OpDigest, model.OpRevise, model.OpSnip:
			var repl []refItem
			switch op.Type {
			case model.OpDigest:
				repl = []refItem{synth(op, 0)}
			case model.OpRevise:
				for k := range op.Payload.Messages {
					repl = append(repl, synth(op, k))
				}
			}
			first := pos[0]
			for k := len(pos) - 1; k >= 0; k-- {
				th = slices.Delete(th, pos[k], pos[k]+1)
			}
			th = slices.Insert(th, first, repl...)
		}
	}
	return th, status
}

// randomOps makes operations the way the service would: each one's
// targets are taken from the view as it stands when the op is made, with
// now and then a stale or unknown target, and some ops are later
// switched off, reverted or made conditional.
func randomOps(r *rand.Rand, n, count int) []model.Op {
	var ops []model.Op
	tags := []string{"a", "b", "c"}
	for i := range count {
		v := Apply(heads(n), ops, nil)
		if v.Len() == 0 {
			break
		}
		id := fmt.Sprintf("o%02d", i)
		typ := model.OpTypes[r.IntN(len(model.OpTypes))]
		o := model.Op{ID: id, Type: typ, Active: true, CreatedAt: t0, Author: "prop"}
		pick := func() []model.ItemID {
			lo := r.IntN(v.Len())
			hi := min(v.Len()-1, lo+r.IntN(6))
			var out []model.ItemID
			for j := lo; j <= hi; j++ {
				out = append(out, v.ID(v.Items[j]))
			}
			return out
		}
		switch typ {
		case model.OpTag:
			o.Targets, o.Payload.Tags = pick(), []string{tags[r.IntN(3)]}
		case model.OpDigest:
			o.Targets, o.Payload.Summary = pick(), "s"
		case model.OpSnip:
			o.Targets = pick()
		case model.OpRevise:
			o.Targets = pick()
			for range r.IntN(3) {
				o.Payload.Messages = append(o.Payload.Messages, model.NewMessage{Role: model.RoleUser, Content: "r"})
			}
		case model.OpResequence:
			o.Targets = pick()
			r.Shuffle(len(o.Targets), func(a, b int) { o.Targets[a], o.Targets[b] = o.Targets[b], o.Targets[a] })
		case model.OpInsert:
			if r.IntN(4) > 0 {
				o.Anchor = v.ID(v.Items[r.IntN(v.Len())])
			}
			for range 1 + r.IntN(2) {
				o.Payload.Messages = append(o.Payload.Messages, model.NewMessage{Role: model.RoleAssistant, Content: "i"})
			}
		}
		if r.IntN(10) == 0 && len(o.Targets) > 0 {
			o.Targets = append(o.Targets, "m9999", "zz/0") // never present
		}
		if r.IntN(8) == 0 {
			o.WhenTags = []string{tags[r.IntN(3)]}
		}
		ops = append(ops, o)
	}
	for i := range ops {
		switch r.IntN(10) {
		case 0:
			ops[i].Active = false
		case 1:
			at := t0
			ops[i].RevertedAt = &at
		}
	}
	return ops
}

func viewItems(v *model.View) []refItem {
	out := make([]refItem, len(v.Items))
	for i, it := range v.Items {
		out[i] = refItem{id: v.ID(it), tags: v.Tags(it)}
	}
	return out
}

func sameItems(a, b []refItem) bool {
	return slices.EqualFunc(a, b, func(x, y refItem) bool {
		return x.id == y.id && slices.Equal(x.tags, y.tags)
	})
}

// checkAgainstReference applies ops to n messages with tags active and
// checks the view against referenceApply: its items, their statuses,
// where each message went and the markers.
func checkAgainstReference(t *testing.T, seed uint64, n int, ops []model.Op, active []string) {
	t.Helper()
	v := Apply(heads(n), ops, active)
	want, wantStatus := referenceApply(n, ops, active)
	if got := viewItems(v); !sameItems(got, want) {
		t.Fatalf("seed %d: view differs from the reference\n got: %v\nwant: %v\nops: %+v", seed, got, want, ops)
	}
	for id, st := range wantStatus {
		if v.Status[id] != st {
			t.Fatalf("seed %d: status of %s = %s, reference says %s", seed, id, v.Status[id], st)
		}
	}
	checkWhere(t, v, n)
	checkMarkers(t, v, ops)
}

func TestApplyMatchesReference(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 1 + r.IntN(30)
		ops := randomOps(r, n, r.IntN(14))
		active := []string{"a", "b", "c"}[:r.IntN(4)]
		checkAgainstReference(t, seed, n, ops, active)
	}
}

// checkMarkers: every structural op in effect left exactly one marker,
// top-level or nested; top-level markers are in order and in range.
func checkMarkers(t *testing.T, v *model.View, ops []model.Op) {
	t.Helper()
	seen := map[string]int{}
	var walk func([]model.Marker)
	walk = func(ms []model.Marker) {
		for _, m := range ms {
			seen[m.OpID]++
			walk(m.Nested)
		}
	}
	walk(v.Markers)
	for i, m := range v.Markers {
		if m.At < 0 || m.At > v.Len() || (i > 0 && m.At < v.Markers[i-1].At) {
			t.Fatalf("marker %d of %s at %d: out of order or range (len %d)", i, m.OpID, m.At, v.Len())
		}
	}
	for _, op := range ops {
		st := v.Status[op.ID]
		want := 0
		if op.Type.Structural() && (st == model.StatusActive || st == model.StatusPartial) {
			want = 1
		}
		if seen[op.ID] != want {
			t.Fatalf("%s %s (%s) has %d markers, want %d", op.Type, op.ID, st, seen[op.ID], want)
		}
	}
}

func TestApplyProperties(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 11))
		n := 1 + r.IntN(40)
		ops := randomOps(r, n, r.IntN(16))
		raw := Apply(heads(n), nil, nil)
		v := Apply(heads(n), ops, nil)

		// Replaying the same operations gives the same view.
		if again := Apply(heads(n), slices.Clone(ops), nil); render(again) != render(v) {
			t.Fatalf("seed %d: apply is not deterministic", seed)
		}

		// Reverting every operation gives back the raw thread.
		all := slices.Clone(ops)
		for i := range all {
			at := t0
			all[i].RevertedAt = &at
		}
		if got := Apply(heads(n), all, nil); render(got) != render(raw) {
			t.Fatalf("seed %d: reverting everything left %s", seed, render(got))
		}

		// Toggling an operation off and on again gives the same view.
		if len(ops) > 0 {
			i := r.IntN(len(ops))
			off := slices.Clone(ops)
			off[i].Active = !off[i].Active
			_ = Apply(heads(n), off, nil)
			off[i].Active = !off[i].Active
			if got := Apply(heads(n), off, nil); render(got) != render(v) {
				t.Fatalf("seed %d: toggling op %d off and on changed the view", seed, i)
			}
		}

		// Tokens of the effective thread add up.
		sum := 0
		for _, it := range v.Items {
			if it.Seq > 0 {
				sum += 10
			} else {
				sum += v.Synth[it.Synth].Tokens
			}
		}
		if sum != v.Tokens {
			t.Fatalf("seed %d: view says %d tokens, items add up to %d", seed, v.Tokens, sum)
		}
	}
}

// TestApplyManyInsertsAtOnePlace exhausts the label gap between two slots
// so the list must be relabelled.
func TestApplyManyInsertsAtOnePlace(t *testing.T) {
	var ops []model.Op
	for i := range 100 {
		ops = append(ops, withAnchor(withMsgs(op(fmt.Sprintf("i%03d", i), model.OpInsert, nil), "x"), "m1"))
	}
	v := Apply(heads(3), ops, nil)
	want, _ := referenceApply(3, ops, nil)
	if !sameItems(viewItems(v), want) {
		t.Fatalf("after 100 inserts at one place the order is wrong")
	}
}

func FuzzApply(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(5))
	f.Add(uint64(99), uint8(1), uint8(20))
	f.Fuzz(func(t *testing.T, seed uint64, n, count uint8) {
		r := rand.New(rand.NewPCG(seed, 3))
		size := 1 + int(n)%60
		ops := randomOps(r, size, int(count)%24)
		v := Apply(heads(size), ops, []string{"a"})
		want, _ := referenceApply(size, ops, []string{"a"})
		if !sameItems(viewItems(v), want) {
			t.Fatalf("view differs from the reference")
		}
	})
}

// covered is the stored messages an operation's marker hides, nested
// markers included (a resequence's marker lists what it moved, which
// it does not hide); nil when it left no marker.
func covered(v *model.View, opID string) map[uint64]bool {
	var find func([]model.Marker) *model.Marker
	find = func(ms []model.Marker) *model.Marker {
		for i := range ms {
			if ms[i].OpID == opID {
				return &ms[i]
			}
			if m := find(ms[i].Nested); m != nil {
				return m
			}
		}
		return nil
	}
	m := find(v.Markers)
	if m == nil {
		return nil
	}
	out := map[uint64]bool{}
	var walk func(m *model.Marker)
	walk = func(m *model.Marker) {
		for _, it := range m.Hidden {
			if it.Seq > 0 && m.OpType != model.OpResequence {
				out[it.Seq] = true
			}
		}
		for i := range m.Nested {
			walk(&m.Nested[i])
		}
	}
	walk(m)
	return out
}

// reaches reports whether an operation targets a synthetic item of
// inner, directly or through the synthetic items of other operations.
func reaches(ops []model.Op, outer int, inner string) bool {
	byID := map[string]int{}
	for i, o := range ops {
		byID[o.ID] = i
	}
	seen := map[string]bool{}
	var walk func(i int) bool
	walk = func(i int) bool {
		for _, t := range ops[i].Targets {
			id, _, ok := t.Synthetic()
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			if j, ok := byID[id]; ok && (id == inner || walk(j)) {
				return true
			}
		}
		return false
	}
	return walk(outer)
}

// TestSwitchingAnInnerOperationKeepsTheOuter: switching off or reverting
// an inner operation (one whose synthetic item a later digest, revise or
// snip targets, directly or through others) never lets a message out of
// that outer operation while it is in effect: the target stands for what
// the inner one replaced. Switching it back gives the view as it was.
func TestSwitchingAnInnerOperationKeepsTheOuter(t *testing.T) {
	checked := 0
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 13))
		n := 2 + r.IntN(40)
		ops := randomOps(r, n, 2+r.IntN(16))
		v := Apply(heads(n), ops, nil)
		for inner := range ops {
			if st := v.Status[ops[inner].ID]; st != model.StatusActive && st != model.StatusPartial {
				continue
			}
			for _, how := range []string{"off", "reverted"} {
				changed := slices.Clone(ops)
				if how == "off" {
					changed[inner].Active = false
				} else {
					at := t0
					changed[inner].RevertedAt = &at
				}
				w := Apply(heads(n), changed, nil)
				for outer := inner + 1; outer < len(ops); outer++ {
					o := ops[outer]
					if o.Type != model.OpDigest && o.Type != model.OpRevise && o.Type != model.OpSnip || !reaches(ops, outer, ops[inner].ID) {
						continue
					}
					before := covered(v, o.ID)
					if len(before) == 0 {
						continue
					}
					checked++
					for seq := range before {
						if _, visible := w.PlaceOfSeq(seq); visible {
							t.Fatalf("seed %d: with %s %s %s, m%d came out of %s %s\nops: %+v", seed, ops[inner].Type, ops[inner].ID, how, seq, o.Type, o.ID, ops)
						}
					}
				}
				if how == "off" {
					changed[inner].Active = true
					if render(Apply(heads(n), changed, nil)) != render(v) {
						t.Fatalf("seed %d: switching %s off and on changed the view", seed, ops[inner].ID)
					}
				}
			}
		}
	}
	if checked < 200 {
		t.Fatalf("only %d outer operations checked: the random operations nest too seldom", checked)
	}
}

// TestApplyMatchesReferenceLong is TestApplyMatchesReference on threads
// of a few hundred messages, so that the runs of slots no operation
// touched (laid out without reading them, see applier.touch) start and
// end on both sides of a word of the touched bits, and at the thread's
// ends.
func TestApplyMatchesReferenceLong(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		n := 60 + r.IntN(260)
		ops := randomOps(r, n, r.IntN(30))
		active := []string{"a", "b", "c"}[:r.IntN(4)]
		checkAgainstReference(t, seed, n, ops, active)
	}
}
