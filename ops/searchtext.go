package ops

import (
	"slices"
	"sync"
	"sync/atomic"

	"weft/internal/fuzzy"
	"weft/model"
	"weft/store"
)

// searchText is a session's stored messages' text as searches want it:
// lower-cased once, in memory, with each message's byte-class mask
// (fuzzy.Corpus). Stored messages never change and are only appended,
// so it is built on the first search and extended by the messages
// appended since on the next; it goes with the session's cache entry.
type searchText struct {
	mu   sync.Mutex // held while the text is extended
	c    fuzzy.Corpus
	size atomic.Int64 // c's bytes, read without mu
}

// maxSearchText bounds the text kept for searches across sessions (a
// Service's textBudget): past
// it, the texts of the sessions searched longest ago are let go (read
// again on their next search). The session searched last keeps its own
// whatever its size: 1M messages of 650 bytes are about 700 MB.
const maxSearchText = 1 << 30

// searchedLocked notes that session id's text was searched (s.mu held)
// and lets go of the texts of sessions searched before it while all
// those kept are over the budget.
func (s *Service) searchedLocked(id string) {
	s.searched = slices.DeleteFunc(s.searched, func(x string) bool { return x == id })
	s.searched = append(s.searched, id)
	var total int64
	for _, x := range s.searched {
		if th := s.threads[x]; th != nil && th.text != nil {
			total += th.text.size.Load()
		}
	}
	for len(s.searched) > 1 && total > s.textBudget {
		x := s.searched[0]
		s.searched = s.searched[1:]
		if th := s.threads[x]; th != nil && th.text != nil {
			total -= th.text.size.Load()
			th.text = nil
		}
	}
}

// corpus returns the searchable text of session id's first n stored
// messages at least (text k is message seq k+1).
func (s *Service) corpus(id string, n int) (fuzzy.Corpus, error) {
	s.mu.Lock()
	th, err := s.threadLocked(id)
	if err != nil {
		s.mu.Unlock()
		return fuzzy.Corpus{}, err
	}
	if th.text == nil {
		th.text = &searchText{}
	}
	t, heads := th.text, th.Heads
	s.searchedLocked(id)
	s.mu.Unlock()
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
	err = s.st.View(func(tx *store.Tx) error {
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
	s.mu.Lock()
	s.searchedLocked(id)
	s.mu.Unlock()
	return c, nil
}

// PrepareSearch reads session ref's stored messages into the text kept
// for searches, if it is not there yet, so that the first search does
// not wait for it: the TUI calls it (in a command) as the search opens,
// while the operator types.
func (s *Service) PrepareSearch(ref string) error {
	snap, err := s.Snapshot(ref)
	if err != nil {
		return err
	}
	_, err = s.corpus(snap.View.SessionID, len(snap.Heads))
	return err
}

// substringView finds query (ASCII: fuzzy.CanSubstring) in the items of
// view v, whose stored messages are the first n: the stored ones in the
// session's corpus, the synthetic ones read in place. It returns every
// matching item's index, in order.
func (s *Service) substringView(v *model.View, n int, query string) ([]int, error) {
	c, err := s.corpus(v.SessionID, n)
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

// firstHits cuts hits to limit (0: all), returning them and how many
// there were.
func firstHits(hits []int, limit int) ([]int, int) {
	total := len(hits)
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, total
}

// substring is substringView, or with raw the stored messages' indices
// (seq-1) of the first n.
func (s *Service) substring(v *model.View, n int, query string, raw bool) ([]int, error) {
	if !raw {
		return s.substringView(v, n, query)
	}
	c, err := s.corpus(v.SessionID, n)
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
func (s *Service) substringLines(snap Snapshot, query string, limit int) (hits []LineHit, total int, err error) {
	v := snap.View
	found, err := s.substringView(v, len(snap.Heads), query)
	if err != nil {
		return nil, 0, err
	}
	found, total = firstHits(found, limit)
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
		err = s.st.View(func(tx *store.Tx) error {
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
