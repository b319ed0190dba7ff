package boltstore

import (
	"bytes"
	"cmp"
	"slices"

	"weft/model"
	"weft/store/record"
)

// RoomSessions returns the sessions of a room (model.Session.Room equal
// to room), most recently updated first (ties by ID). It reads every
// session record, decoding only those whose bytes hold the room's name,
// so in a write transaction it sees every session the write can: a
// lookup and a create in one Update cannot race another create. A
// candidate record that cannot be decoded is an error wrapping
// ErrCorrupt: it may be of the room. An empty room has no sessions.
func (t *Tx) RoomSessions(room string) ([]model.Session, error) {
	b := t.bucket(bktSessions)
	if b == nil || room == "" {
		return nil, nil
	}
	want := []byte(room)
	var out []model.Session
	err := b.ForEach(func(k, v []byte) error {
		if !bytes.Contains(v[min(len(v), record.HeaderLen):], want) {
			return nil
		}
		s, _, err := record.Decode(string(k), v)
		if err != nil {
			return t.corruptf(string(k), "session record", "%v", err)
		}
		if s.Room == room {
			out = append(out, s)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b model.Session) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}
