package search

import "weft/ops"

// What the package's external tests reach of its insides.

var ViewDocs = viewDocs

const MaxHitLine = maxHitLine

// KeptText is how many messages' text service s keeps for session id's
// searches; -1 when it keeps none.
func KeptText(s *ops.Service, id string) int {
	t := keptFor(s, id)
	if t == nil {
		return -1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c.Len()
}

// SetTextBudget sets what the texts service s keeps may hold in all.
func SetTextBudget(s *ops.Service, n int64) {
	ts := textsOf(s)
	ts.mu.Lock()
	ts.budget = n
	ts.mu.Unlock()
}

// KeptTextBytes is the bytes of the text service s keeps for session
// id's searches.
func KeptTextBytes(s *ops.Service, id string) int {
	t := keptFor(s, id)
	if t == nil {
		return 0
	}
	return int(t.size.Load())
}

// keptFor is the text service s keeps for session id's searches, or nil.
func keptFor(s *ops.Service, id string) *text {
	ts := textsOf(s)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.bySession[id]
}
