package migrate

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"weft/model"
	"weft/store"
)

// Verify reads every session of from back from to and compares them: the
// record (version, counts, tags, memory policy, fork link, room), every
// message field by field, the operations in order, import keys, sources,
// pending preferences, the settings, and, with opt.Thread, the effective
// thread. It returns how many sessions are equal and, when any is not,
// an error wrapping ErrMismatch that says what differs.
func Verify(ctx context.Context, from, to store.Store, opt Options) (int, error) {
	ids, err := sessionIDs(from)
	if err != nil {
		return 0, err
	}
	var diffs []string
	equal := 0
	for i, id := range ids {
		if err := ctx.Err(); err != nil {
			return equal, err
		}
		d, err := verifySession(from, to, id, opt)
		if err != nil {
			return equal, err
		}
		if len(d) > 0 {
			for _, x := range d {
				diffs = append(diffs, "session "+id+": "+x)
			}
			continue
		}
		equal++
		if opt.Report != nil {
			opt.Report(Progress{N: i + 1, Of: len(ids), Session: id, Action: Verified})
		}
	}
	d, err := settingsDiff(from, to)
	if err != nil {
		return equal, err
	}
	diffs = append(diffs, d...)
	if len(diffs) > 0 {
		return equal, fmt.Errorf("%w (%s read back from %s): if a weft wrote to %s meanwhile, run migrate again\n  %s",
			ErrMismatch, to.Path(), from.Path(), from.Path(), joinCapped(diffs, 20))
	}
	return equal, nil
}

// verifySession lists what differs in session id.
func verifySession(from, to store.Store, id string, opt Options) ([]string, error) {
	src, dst, found, err := states(from, to, id)
	if err != nil {
		return nil, err
	}
	if !found {
		return []string{"not in the destination"}, nil
	}
	var d []string
	if !sameSession(src.rec, dst.rec) {
		d = append(d, fmt.Sprintf("record: version %d, %d messages, %d operations there; version %d, %d messages, %d operations in the source",
			dst.rec.Version, dst.rec.MessageCount, dst.rec.OpCount, src.rec.Version, src.rec.MessageCount, src.rec.OpCount))
	}
	if dst.last != src.last {
		d = append(d, fmt.Sprintf("%d messages there, %d in the source", dst.last, src.last))
	}
	if len(dst.ops) != len(src.ops) {
		d = append(d, fmt.Sprintf("%d operations there, %d in the source", len(dst.ops), len(src.ops)))
	} else {
		for i := range src.ops {
			if !sameOp(src.ops[i], dst.ops[i]) {
				d = append(d, fmt.Sprintf("operation %d (%s) differs", i+1, src.ops[i].ID))
				break
			}
		}
	}
	if !maps.Equal(src.keys, dst.keys) {
		d = append(d, fmt.Sprintf("%d import keys there, %d in the source, or other seqs", len(dst.keys), len(src.keys)))
	}
	if !slices.Equal(src.sources, dst.sources) {
		d = append(d, fmt.Sprintf("sources %q there, %q in the source", dst.sources, src.sources))
	}
	if string(src.prefs) != string(dst.prefs) {
		d = append(d, "pending preferences differ")
	}
	md, err := messagesDiff(from, to, id, min(src.last, dst.last), opt)
	if err != nil {
		return nil, err
	}
	if md != "" {
		d = append(d, md)
	}
	if opt.Thread != nil && len(d) == 0 {
		td, err := threadDiff(from, to, id, src, dst, opt.Thread)
		if err != nil {
			return nil, err
		}
		if td != "" {
			d = append(d, td)
		}
	}
	return d, nil
}

// messagesDiff compares messages 1..last of session id, a batch at a
// time, and names the first that differs.
func messagesDiff(from, to store.Store, id string, last uint64, opt Options) (string, error) {
	n, size := opt.batch()
	for next := uint64(1); next <= last; {
		a, err := readBatch(from, id, next, last, n, size)
		if err != nil {
			return "", err
		}
		b, err := readBatch(to, id, next, next+uint64(len(a))-1, len(a), math.MaxInt)
		if err != nil {
			return "", err
		}
		for i := range a {
			if i >= len(b) {
				return fmt.Sprintf("message %d is not there", a[i].Seq), nil
			}
			if what := messageDiff(a[i], b[i]); what != "" {
				return fmt.Sprintf("message %d differs: %s", a[i].Seq, what), nil
			}
		}
		if len(a) == 0 {
			return fmt.Sprintf("message %d is not in the source", next), nil
		}
		next += uint64(len(a))
	}
	return "", nil
}

// threadDiff compares session id's effective threads, made by thread
// from each side's heads and operations.
func threadDiff(from, to store.Store, id string, src, dst state, thread Threader) (string, error) {
	heads := func(s store.Store) (h []model.Head, err error) {
		err = s.View(func(tx store.Tx) error {
			h, err = tx.Heads(id)
			return err
		})
		return h, err
	}
	hs, err := heads(from)
	if err != nil {
		return "", err
	}
	hd, err := heads(to)
	if err != nil {
		return "", err
	}
	if !slices.Equal(hs, hd) {
		return "the messages' heads differ", nil
	}
	a := thread(hs, src.ops, src.rec.ActiveTags)
	b := thread(hd, dst.ops, dst.rec.ActiveTags)
	if !slices.Equal(a, b) {
		return fmt.Sprintf("the effective thread differs: %d items there, %d in the source", len(b), len(a)), nil
	}
	return "", nil
}

// settingsDiff lists the source's settings the destination lacks or
// holds with another value.
func settingsDiff(from, to store.Store) ([]string, error) {
	src := map[string][]byte{}
	if err := from.View(func(tx store.Tx) error {
		return tx.Settings(func(name string, value []byte) error {
			src[name] = slices.Clone(value)
			return nil
		})
	}); err != nil {
		return nil, err
	}
	var d []string
	err := to.View(func(tx store.Tx) error {
		for _, name := range sortedKeys(src) {
			switch have := tx.Setting(name); {
			case have == nil:
				d = append(d, fmt.Sprintf("setting %q is not there", name))
			case !sameJSONBytes(have, src[name]):
				d = append(d, fmt.Sprintf("setting %q differs", name))
			}
		}
		return nil
	})
	return d, err
}
