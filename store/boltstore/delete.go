package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// DeleteSession removes a session and everything it holds: its record,
// messages, heads, time index, operations (and their index entries),
// import keys, pending preferences, and the source threads that lead to
// it. Inside one Update it is all or nothing. The session's number is
// not given to another session.
func (t *Tx) DeleteSession(id string) error {
	num, err := t.num(id)
	if err != nil {
		return err
	}
	// Operations first: their IDs name their index entries.
	if ops := t.bucket(bktOps); ops != nil {
		idx, err := t.wbucket(bktOpIndex)
		if err != nil {
			return err
		}
		err = scan(ops, num, nil, func(_, v []byte) (bool, error) {
			var op struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(v, &op) == nil && op.ID != "" {
				if owner, _, ok := parseOpIndex(idx.Get([]byte(op.ID))); ok && owner == id {
					if err := idx.Delete([]byte(op.ID)); err != nil {
						return false, err
					}
				}
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("session %q: deleting its operations' index: %w", id, err)
		}
	}
	for _, name := range [][]byte{bktMsgs, bktByTime, bktHeads, bktOps, bktKeys, bktPrefs, bktBig} {
		b := t.bucket(name)
		if b == nil {
			continue
		}
		if err := deletePrefix(b, key(num)); err != nil {
			return fmt.Errorf("session %q: deleting its %s: %w", id, name, err)
		}
	}
	if src := t.bucket(bktSources); src != nil {
		var gone [][]byte
		_ = src.ForEach(func(k, v []byte) error {
			if bytes.Equal(v, []byte(id)) {
				gone = append(gone, bytes.Clone(k))
			}
			return nil
		})
		for _, k := range gone {
			if err := src.Delete(k); err != nil {
				return fmt.Errorf("session %q: deleting its sources: %w", id, err)
			}
		}
	}
	if err := t.bucket(bktSessions).Delete([]byte(id)); err != nil {
		return fmt.Errorf("session %q: %w", id, err)
	}
	t.lastID, t.lastNum = "", 0
	return nil
}

// deletePrefix deletes every record of b whose key starts with prefix.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}
