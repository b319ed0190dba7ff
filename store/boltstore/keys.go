package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// What a session is known by to the importers, read back whole, so an
// export can carry it to another file: its messages' import keys and the
// source threads that lead to it.

// EachImportKey calls fn with every import key of a session and the seq
// it names, in key order. An error from fn stops the walk and is
// returned.
func (t *Tx) EachImportKey(sessionID string, fn func(key string, seq uint64) error) error {
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	return scan(t.bucket(bktKeys), num, nil, func(k, v []byte) (bool, error) {
		seq, n := binary.Uvarint(v)
		if n != len(v) || seq == 0 {
			return false, t.corruptf(sessionID, fmt.Sprintf("import key %q", k), "seq %x", v)
		}
		return true, fn(string(k), seq)
	})
}

// SessionSources returns the source keys (format and key, as an importer
// names a thread) recorded as imported into a session, in key order. The
// sources bucket is keyed by source, so this reads all of it.
func (t *Tx) SessionSources(sessionID string) ([]string, error) {
	b := t.tx.Bucket(bktSources)
	if b == nil || sessionID == "" {
		return nil, nil
	}
	id := []byte(sessionID)
	var out []string
	err := b.ForEach(func(k, v []byte) error {
		if bytes.Equal(v, id) {
			out = append(out, string(k))
		}
		return nil
	})
	return out, err
}
