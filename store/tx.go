package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"weft/model"
)

// Tx is a transaction as given to View and Update. Its methods run inside
// that transaction and never open one of their own. A Tx must not be used
// after its View or Update returns, nor from two goroutines at once.
type Tx struct {
	tx *bolt.Tx
}

func sessionNotFound(id string) error {
	return fmt.Errorf("session %q %w", id, ErrNotFound)
}

// thread returns a session's bucket in threads.
func (t *Tx) thread(id string) (*bolt.Bucket, error) {
	if id == "" {
		return nil, sessionNotFound(id)
	}
	th := t.tx.Bucket(bktThreads)
	if th == nil {
		return nil, sessionNotFound(id)
	}
	b := th.Bucket([]byte(id))
	if b == nil {
		return nil, sessionNotFound(id)
	}
	return b, nil
}

// sub returns one of a session's nested buckets.
func (t *Tx) sub(id string, name []byte) (*bolt.Bucket, error) {
	th, err := t.thread(id)
	if err != nil {
		return nil, err
	}
	b := th.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("session %q: %s bucket is missing", id, name)
	}
	return b, nil
}

// Sessions returns every session, most recently updated first (ties by ID).
func (t *Tx) Sessions() ([]model.Session, error) {
	b := t.tx.Bucket(bktSessions)
	if b == nil {
		return nil, nil
	}
	var out []model.Session
	err := b.ForEach(func(k, v []byte) error {
		var s model.Session
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("session %q: corrupt record: %w", k, err)
		}
		out = append(out, s)
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

// Session returns one session.
func (t *Tx) Session(id string) (model.Session, error) {
	var s model.Session
	b := t.tx.Bucket(bktSessions)
	if b == nil {
		return s, sessionNotFound(id)
	}
	v := b.Get([]byte(id))
	if v == nil || id == "" {
		return s, sessionNotFound(id)
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return model.Session{}, fmt.Errorf("session %q: corrupt record: %w", id, err)
	}
	return s, nil
}

// PutSession creates or replaces a session record and makes sure the
// session's buckets exist.
func (t *Tx) PutSession(s model.Session) error {
	if s.ID == "" {
		return errors.New("put session: empty session ID")
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("session %q: %w", s.ID, err)
	}
	b := t.tx.Bucket(bktSessions)
	th := t.tx.Bucket(bktThreads)
	if b == nil || th == nil {
		return errors.New("put session: database has no sessions bucket (opened read-only before it was set up?)")
	}
	if err := b.Put([]byte(s.ID), data); err != nil {
		return fmt.Errorf("session %q: %w", s.ID, err)
	}
	sb, err := th.CreateBucketIfNotExists([]byte(s.ID))
	if err != nil {
		return fmt.Errorf("session %q: %w", s.ID, err)
	}
	for _, name := range threadBuckets {
		if _, err := sb.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("session %q: create %s bucket: %w", s.ID, name, err)
		}
	}
	return nil
}

// Ops returns a session's operations in creation order.
func (t *Tx) Ops(sessionID string) ([]model.Op, error) {
	b, err := t.sub(sessionID, bktOps)
	if err != nil {
		return nil, err
	}
	var out []model.Op
	err = b.ForEach(func(k, v []byte) error {
		var op model.Op
		if err := json.Unmarshal(v, &op); err != nil {
			return fmt.Errorf("session %q: op #%x: corrupt record: %w", sessionID, k, err)
		}
		out = append(out, op)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseOpIndex splits an opindex value into session ID and op key.
func parseOpIndex(v []byte) (sessionID string, key []byte, ok bool) {
	if len(v) < 8 {
		return "", nil, false
	}
	return string(v[:len(v)-8]), bytes.Clone(v[len(v)-8:]), true
}

// PutOp records an operation: a new ID goes at the end of the creation
// order, an existing one is replaced where it stands.
func (t *Tx) PutOp(sessionID string, op model.Op) error {
	if op.ID == "" {
		return fmt.Errorf("session %q: put op: empty op ID", sessionID)
	}
	b, err := t.sub(sessionID, bktOps)
	if err != nil {
		return err
	}
	idx := t.tx.Bucket(bktOpIndex)
	if idx == nil {
		return errors.New("put op: database has no opindex bucket")
	}
	data, err := json.Marshal(op)
	if err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	b.FillPercent = 1.0
	if v := idx.Get([]byte(op.ID)); v != nil {
		owner, key, ok := parseOpIndex(v)
		if !ok {
			return fmt.Errorf("op %q: corrupt index record", op.ID)
		}
		if owner != sessionID {
			return fmt.Errorf("op %q belongs to session %q, not %q", op.ID, owner, sessionID)
		}
		if err := b.Put(key, data); err != nil {
			return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
		}
		return nil
	}
	n, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	key := put64(n)
	if err := b.Put(key, data); err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	iv := append([]byte(sessionID), key...)
	if err := idx.Put([]byte(op.ID), iv); err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	return nil
}

// OpSession returns the ID of the session that holds an operation.
func (t *Tx) OpSession(opID string) (string, error) {
	idx := t.tx.Bucket(bktOpIndex)
	var v []byte
	if idx != nil && opID != "" {
		v = idx.Get([]byte(opID))
	}
	if v == nil {
		return "", fmt.Errorf("op %q %w", opID, ErrNotFound)
	}
	sid, _, ok := parseOpIndex(v)
	if !ok {
		return "", fmt.Errorf("op %q: corrupt index record", opID)
	}
	return sid, nil
}

// ImportKey returns the seq recorded for an import key, if any.
func (t *Tx) ImportKey(sessionID, key string) (seq uint64, ok bool, err error) {
	b, err := t.sub(sessionID, bktKeys)
	if err != nil {
		return 0, false, err
	}
	if key == "" {
		return 0, false, nil
	}
	v := b.Get([]byte(key))
	if v == nil {
		return 0, false, nil
	}
	if len(v) != 8 {
		return 0, false, fmt.Errorf("session %q: import key %q: corrupt record", sessionID, key)
	}
	return be64(v), true, nil
}

// PutImportKey records the seq an import key produced.
func (t *Tx) PutImportKey(sessionID, key string, seq uint64) error {
	if key == "" {
		return fmt.Errorf("session %q: empty import key", sessionID)
	}
	b, err := t.sub(sessionID, bktKeys)
	if err != nil {
		return err
	}
	if err := b.Put([]byte(key), put64(seq)); err != nil {
		return fmt.Errorf("session %q: import key %q: %w", sessionID, key, err)
	}
	return nil
}

// SourceSession returns the session a source thread (format and key, as
// an importer names it) was imported into, if any.
func (t *Tx) SourceSession(source string) (string, bool) {
	v := t.tx.Bucket(bktSources).Get([]byte(source))
	if v == nil {
		return "", false
	}
	return string(v), true
}

// PutSourceSession records the session a source thread was imported into.
func (t *Tx) PutSourceSession(source, sessionID string) error {
	if source == "" || sessionID == "" {
		return fmt.Errorf("empty source key or session ID")
	}
	return t.tx.Bucket(bktSources).Put([]byte(source), []byte(sessionID))
}

// PutPrefs stores pending context preferences (opaque bytes), replacing any
// pending ones. Empty prefs clear them.
func (t *Tx) PutPrefs(sessionID string, prefs []byte) error {
	b, err := t.sub(sessionID, bktPrefs)
	if err != nil {
		return err
	}
	if len(prefs) == 0 {
		err = b.Delete(keyPending)
	} else {
		err = b.Put(keyPending, bytes.Clone(prefs))
	}
	if err != nil {
		return fmt.Errorf("session %q: prefs: %w", sessionID, err)
	}
	return nil
}

// Prefs returns the pending preferences, or nil if none are pending.
// Clear them with PutPrefs(sessionID, nil) once they are used.
func (t *Tx) Prefs(sessionID string) ([]byte, error) {
	b, err := t.sub(sessionID, bktPrefs)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b.Get(keyPending)), nil
}
