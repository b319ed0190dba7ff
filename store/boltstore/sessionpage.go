package boltstore

import (
	"weft/store"
	"weft/store/record"
)

// SessionsBefore returns up to n sessions whose IDs sort before before
// ("": from the last ID), in descending ID order, and whether more
// follow. The IDs weft makes sort in creation order, so this is newest
// created first; and since an ID never changes, pages read one after the
// other list every session that was there throughout exactly once,
// however the sessions are written meanwhile. It reads only the page's
// records: a file of many sessions costs no more per page than a small
// one.
//
// A record that cannot be decoded keeps its place in the page, with the
// error (a *CorruptError naming the session) instead of the session.
func (t *Tx) SessionsBefore(before string, n int) (page []SessionEntry, more bool) {
	b := t.bucket(bktSessions)
	if b == nil || n <= 0 {
		return nil, false
	}
	c := b.Cursor()
	var k, v []byte
	if before == "" {
		k, v = c.Last()
	} else if k, _ = c.Seek([]byte(before)); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil; k, v = c.Prev() {
		if len(page) == n {
			return page, true
		}
		s, _, err := record.Decode(string(k), v)
		if err != nil {
			page = append(page, SessionEntry{ID: string(k), Err: t.corruptf(string(k), "session record", "%v", err)})
			continue
		}
		page = append(page, SessionEntry{ID: s.ID, Session: s})
	}
	return page, false
}

// SessionEntry is one session of a page: its record, or why the record
// cannot be read.
type SessionEntry = store.SessionEntry
