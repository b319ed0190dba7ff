package boltstore

import (
	"fmt"

	"weft/model"
	"weft/store"
	"weft/store/record"
)

// Encoded holds the records of messages made before the transaction that
// stores them, on any goroutine (EncodeMessages): an import encodes a
// batch on every core while the one writer stores the last, whose
// transaction then only puts them.
type Encoded struct {
	vals [][]byte
	ats  []int64
}

// EncodeMessages checks and encodes messages, all but their seqs and IDs,
// which AppendEncoded checks once they are known: a message's record
// does not hold them. Its records stay valid until the transaction that
// stores them ends, so each call has an arena of its own.
func EncodeMessages(msgs []model.Message) (Encoded, error) {
	e := Encoded{vals: make([][]byte, len(msgs)), ats: make([]int64, len(msgs))}
	packs := make([]record.Parts, len(msgs))
	total := 0
	for i := range msgs {
		m := &msgs[i]
		if !m.Role.Valid() {
			return Encoded{}, fmt.Errorf("message %d of %d: role %q is not one of system, user, assistant, tool", i+1, len(msgs), m.Role)
		}
		at, ok := record.StorableNanos(m.CreatedAt)
		if !ok {
			return Encoded{}, fmt.Errorf("message %d of %d: created_at %s is outside the storable range (years 1678-2262)", i+1, len(msgs), m.CreatedAt)
		}
		e.ats[i] = at
		packs[i] = record.PackParts(m)
		total += record.MessageLen(m, packs[i])
	}
	arena := make([]byte, 0, total)
	for i := range msgs {
		start := len(arena)
		arena = record.AppendMessage(arena, &msgs[i], e.ats[i], packs[i])
		e.vals[i] = arena[start:len(arena):len(arena)]
	}
	return e, nil
}

// Len is how many messages' records e holds.
func (e Encoded) Len() int { return len(e.vals) }

// Pick returns the records of the messages at the given places of e, in
// that order: those of a batch that are to be stored.
func (e Encoded) Pick(idx []int) store.Encoded {
	p := Encoded{vals: make([][]byte, len(idx)), ats: make([]int64, len(idx))}
	for j, i := range idx {
		p.vals[j], p.ats[j] = e.vals[i], e.ats[i]
	}
	return p
}

// AppendEncoded is AppendMessages with the messages' records made
// beforehand: enc holds those of msgs, in order (EncodeMessages of the
// same messages, their seqs and IDs set since).
func (t *Tx) AppendEncoded(sessionID string, msgs []model.Message, enc store.Encoded) error {
	e, ok := enc.(Encoded)
	if !ok {
		return fmt.Errorf("session %q: records made by another store (%T)", sessionID, enc)
	}
	return t.appendMessages(sessionID, msgs, &e)
}

// Join returns e's records followed by f's.
func (e Encoded) Join(other store.Encoded) store.Encoded {
	f, _ := other.(Encoded)
	return Encoded{vals: append(e.vals, f.vals...), ats: append(e.ats, f.ats...)}
}
