package ops

import (
	"fmt"
	"time"

	"weft/model"
	"weft/ops/timeparse"
	"weft/store"
)

// Timeline is the density of a session's stored messages over time: how
// many fall in each of n equal spans from Start to End. Start and End
// are the first and last message's times, unless a few messages lie far
// from the rest (a clock gone wrong, an old note imported): then they
// bound the rest, and Before and After count those left aside, so one
// stray message does not squash the thread into a column.
type Timeline struct {
	Start, End    time.Time
	Counts        []int
	Before, After int
}

// Bucket returns the span a time falls in.
func (t Timeline) Bucket(at time.Time) int {
	return bucket(int64(at.Sub(t.Start)), int64(t.End.Sub(t.Start)), len(t.Counts))
}

// bucket is which of n equal spans of a whole span (in nanoseconds) the
// offset d into it falls in; 0 for an empty span.
func bucket(d, span int64, n int) int {
	if n == 0 || span <= 0 {
		return 0
	}
	return min(max(int(float64(d)/float64(span)*float64(n)), 0), n-1)
}

// Timeline counts a session's stored messages in n spans of time. The
// heads are counted outside the service's lock: they only grow at the
// end, so the slice taken under it stays as it was.
func (s *Service) Timeline(ref string, n int) (Timeline, error) {
	heads, err := s.heads(ref)
	if err != nil || len(heads) == 0 || n <= 0 {
		return Timeline{}, err
	}
	lo, hi := heads[0].At, heads[0].At
	for _, h := range heads {
		lo, hi = min(lo, h.At), max(hi, h.At)
	}
	lo, hi = bulk(heads, lo, hi)
	t := Timeline{Start: time.Unix(0, lo).UTC(), End: time.Unix(0, hi).UTC(), Counts: make([]int, n)}
	// Bucket's arithmetic on the nanoseconds themselves: the same
	// numbers without a time.Time made and subtracted per message, which
	// cost 27 ms of a million-message file's opening.
	for _, h := range heads {
		switch {
		case h.At < lo:
			t.Before++
		case h.At > hi:
			t.After++
		default:
			t.Counts[bucket(h.At-lo, hi-lo, n)]++
		}
	}
	return t, nil
}

// The bulk of a thread is the span from its messages' 0.5th to 99.5th
// percentile in time, found to a 1,024th of the span looked at, then
// looked at again inside it while that narrows the span by more than
// bulkZoom: a thread spread evenly keeps its whole span in one pass.
const (
	bulkBins = 1024
	bulkZoom = 4
)

// bulk returns the span [lo, hi] narrowed to the bulk of heads' times,
// when a few far from the rest would squash the rest into a sliver.
func bulk(heads []model.Head, lo, hi int64) (int64, int64) {
	if len(heads) < 10 {
		return lo, hi // a handful of messages is no thread to squash
	}
	cut := max(len(heads)/200, 1) // 0.5% at each end, at least one message
	counts := make([]int, bulkBins)
	for range 8 {
		span := hi - lo
		if span <= 0 {
			break
		}
		clear(counts)
		for _, h := range heads {
			if h.At >= lo && h.At <= hi {
				counts[bucket(h.At-lo, span, bulkBins)]++
			}
		}
		below, first, last := 0, 0, bulkBins-1
		for below+counts[first] <= cut && first < last {
			below += counts[first]
			first++
		}
		above := 0
		for above+counts[last] <= cut && last > first {
			above += counts[last]
			last--
		}
		nlo := lo + int64(float64(span)*float64(first)/bulkBins)
		nhi := lo + int64(float64(span)*float64(last+1)/bulkBins)
		if (nhi-nlo)*bulkZoom > span {
			break // not narrowed enough to matter
		}
		// The bulk's own first and last times, not the bins' edges.
		blo, bhi := nhi, nlo
		for _, h := range heads {
			if h.At >= nlo && h.At <= nhi {
				blo, bhi = min(blo, h.At), max(bhi, h.At)
			}
		}
		if blo > bhi {
			break
		}
		lo, hi = blo, bhi
	}
	return lo, hi
}

// heads returns a session's heads as they are now; appends after this
// do not change the slice returned.
func (s *Service) heads(ref string) ([]model.Head, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := s.resolveLocked(ref)
	if err != nil {
		return nil, err
	}
	c, err := s.threadLocked(id)
	if err != nil {
		return nil, err
	}
	return c.Heads[:len(c.Heads):len(c.Heads)], nil
}

// ItemAt returns the index of the item of the effective thread that
// stands for the first stored message created at or after a time (the
// item that hides it, if an operation does), or the thread's length when
// nothing is that late. The time is read as every face reads times, with
// base as the reference for the forms that need one: a time of day is on
// base's day, "-2h" two hours before base. The TUI passes the time of the
// message under its cursor; a zero base is now, as for the tools. A time
// that cannot be read is a *timeparse.Error (errors.As finds it), which
// says why and lists the forms.
func (s *Service) ItemAt(ref, when string, base time.Time) (int, time.Time, error) {
	if base.IsZero() {
		base = s.now()
	}
	t, err := timeparse.Parse(when, base, time.Local)
	if err != nil {
		return 0, t, fmt.Errorf("time: %w", err)
	}
	snap, err := s.Snapshot(ref)
	if err != nil {
		return 0, t, err
	}
	idx := snap.View.Len()
	err = s.st.View(func(tx store.Tx) error {
		return tx.TimeAscend(snap.Info.ID, t, func(seq uint64, _ int64) bool {
			if p, _ := snap.View.PlaceOfSeq(seq); p >= 0 {
				idx = p
			}
			return false
		})
	})
	return idx, t, err
}

// SessionSpan returns when session id's earliest and latest stored
// messages were made, from two records of the store rather than the
// thread loaded: the sessions list dates every session of a file with it.
// Both are zero for a session without messages.
func (s *Service) SessionSpan(id string) (first, latest time.Time, err error) {
	err = s.st.View(func(tx store.Tx) error {
		lo, hi, ok, err := tx.TimeSpan(id)
		if ok {
			first, latest = time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC()
		}
		return err
	})
	return first, latest, err
}
