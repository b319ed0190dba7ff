package search

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"weft/ops"

	"weft/internal/fuzzy"
	"weft/model"
	"weft/store"
)

// text is a session's stored messages' text as searches want it:
// lower-cased once, in memory, with each message's byte-class mask
// (fuzzy.Corpus). Stored messages never change and are only appended,
// so it is built on the first search and extended by the messages
// appended since on the next.
type text struct {
	created time.Time  // the session's: a session made again is read again
	mu      sync.Mutex // held while the text is extended
	c       fuzzy.Corpus
	size    atomic.Int64 // c's bytes, read without mu
}

// maxSearchText bounds the text kept for searches across sessions (a
// service's texts' budget): past it, the texts of the sessions searched
// longest ago are let go (read again on their next search). The session
// searched last keeps its own whatever its size: 1M messages of 650
// bytes are about 700 MB.
const maxSearchText = 1 << 30

// texts are the texts one service's sessions keep for searches (kept
// with the service: textsOf).
type texts struct {
	mu        sync.Mutex
	bySession map[string]*text
	searched  []string // the sessions whose text is kept, searched last at the end
	budget    int64    // what their texts may hold in all
}

type textsKey struct{}

// textsOf returns the texts kept for searches with service s.
func textsOf(s *ops.Service) *texts {
	return s.Keep(textsKey{}, func() any {
		return &texts{bySession: map[string]*text{}, budget: maxSearchText}
	}).(*texts)
}

// searchedLocked notes that session id's text was searched (ts.mu held)
// and lets go of the texts of sessions searched before it while all
// those kept are over the budget.
func (ts *texts) searchedLocked(id string) {
	ts.searched = slices.DeleteFunc(ts.searched, func(x string) bool { return x == id })
	ts.searched = append(ts.searched, id)
	var total int64
	for _, x := range ts.searched {
		if t := ts.bySession[x]; t != nil {
			total += t.size.Load()
		}
	}
	for len(ts.searched) > 1 && total > ts.budget {
		x := ts.searched[0]
		ts.searched = ts.searched[1:]
		if t := ts.bySession[x]; t != nil {
			total -= t.size.Load()
			delete(ts.bySession, x)
		}
	}
}

// corpus returns the searchable text of the stored messages snap has
// (text k is message seq k+1), at least.
func corpus(s *ops.Service, snap ops.Snapshot) (fuzzy.Corpus, error) {
	id, heads, n := snap.Info.ID, snap.Heads, len(snap.Heads)
	ts := textsOf(s)
	ts.mu.Lock()
	t := ts.bySession[id]
	if t == nil || !t.created.Equal(snap.Info.CreatedAt) {
		t = &text{created: snap.Info.CreatedAt}
		ts.bySession[id] = t
	}
	ts.searchedLocked(id)
	ts.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c.Len() >= n {
		return t.c, nil
	}
	c := t.c
	if c.Len() == 0 {
		// Room for the text, guessed from the messages' tokens (a token
		// is about four bytes of prose; more room is made when short).
		tokens := 0
		for _, h := range heads[:min(n, len(heads))] {
			tokens += int(h.Tokens)
		}
		c = c.Grow(n, tokens*9/2)
	}
	err := s.Store().View(func(tx store.Tx) error {
		if c.Len() > 0 {
			return tx.Messages(id, uint64(c.Len()+1), uint64(n), func(m model.Message) error {
				c = c.Append([]byte(m.Content))
				return nil
			})
		}
		return tx.ScanContent(id, func(seq uint64, content []byte) bool {
			c = c.Append(content)
			return int(seq) < n
		})
	})
	if err != nil {
		return fuzzy.Corpus{}, err
	}
	t.c = c
	t.size.Store(int64(c.Bytes()))
	ts.mu.Lock()
	ts.searchedLocked(id)
	ts.mu.Unlock()
	return c, nil
}

// Prepare reads session ref's stored messages into the text kept
// for searches, if it is not there yet, so that the first search does
// not wait for it: the TUI calls it (in a command) as the search opens,
// while the operator types.
func Prepare(s *ops.Service, ref string) error {
	snap, err := s.Snapshot(ref)
	if err != nil {
		return err
	}
	_, err = corpus(s, snap)
	return err
}

// substringView finds query (ASCII: fuzzy.CanSubstring) in the items of
// snap's view: the stored ones in the session's corpus, the synthetic
// ones read in place. It returns every matching item's index, in order.
func substringView(s *ops.Service, snap ops.Snapshot, query string) ([]int, error) {
	v := snap.View
	c, err := corpus(s, snap)
	if err != nil {
		return nil, err
	}
	var hits []int
	for _, k := range c.Substring(query) {
		if i := v.IndexOfSeq(uint64(k + 1)); i >= 0 {
			hits = append(hits, i)
		}
	}
	m := fuzzy.NewMatcher(query)
	synth := false
	for si, w := range v.SynthWhere {
		if w >= 0 && m.Match([]byte(v.Synth[si].Content)) {
			hits, synth = append(hits, int(w)), true
		}
	}
	if synth || !slices.IsSorted(hits) {
		slices.Sort(hits)
	}
	return hits, nil
}

// FirstHits cuts hits to limit (0: all), returning them and how many
// there were.
func FirstHits(hits []int, limit int) ([]int, int) {
	total := len(hits)
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, total
}

// Substring finds query (ASCII: fuzzy.CanSubstring) in snap's thread,
// from the text kept for searches: the indices of the items that hold it,
// in order, or with raw those of the stored messages (seq-1).
func Substring(s *ops.Service, snap ops.Snapshot, query string, raw bool) ([]int, error) {
	if !raw {
		return substringView(s, snap, query)
	}
	n := len(snap.Heads)
	c, err := corpus(s, snap)
	if err != nil {
		return nil, err
	}
	hits := c.Substring(query)
	end, _ := slices.BinarySearch(hits, n)
	return hits[:end], nil
}

// substringLines is SubstringLines's hits for an ASCII query: the items
// found in the session's corpus, then only the hits kept read for their
// line (the store's bodies, up to the last hit).
func substringLines(s *ops.Service, snap ops.Snapshot, query string, limit int) (hits []LineHit, total int, err error) {
	v := snap.View
	found, err := substringView(s, snap, query)
	if err != nil {
		return nil, 0, err
	}
	found, total = FirstHits(found, limit)
	hits = make([]LineHit, len(found))
	at := make(map[int]int, len(found)) // item index -> place in found
	var last uint64                     // the last stored message to read
	for k, i := range found {
		at[i] = k
		if it := v.Items[i]; it.Synth < 0 {
			last = max(last, it.Seq)
		} else {
			hits[k] = lineHit(fuzzy.Doc{Index: i, Text: []byte(v.Synth[it.Synth].Content)}, query)
		}
	}
	if last > 0 {
		err = s.Store().View(func(tx store.Tx) error {
			return tx.ScanContent(v.SessionID, func(seq uint64, content []byte) bool {
				if i := v.IndexOfSeq(seq); i >= 0 {
					if k, ok := at[i]; ok {
						hits[k] = lineHit(fuzzy.Doc{Index: i, Text: content}, query)
					}
				}
				return seq < last
			})
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return hits, total, nil
}
