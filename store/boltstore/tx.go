package boltstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/record"
)

// Tx is a transaction as given to View and Update. Its methods run inside
// that transaction and never open one of their own. A Tx must not be used
// after its View or Update returns, nor from two goroutines at once.
type Tx struct {
	tx   *bolt.Tx
	path string
	// The last session number looked up: callers read one session's
	// records in loops.
	lastID  string
	lastNum uint32
	// The file's pages as bbolt maps them, once looked up (inMap).
	mapStart, mapEnd uintptr
}

// numLen is the length of a session number at the front of its records'
// keys.
const numLen = 4

func sessionNotFound(id string) error {
	return fmt.Errorf("session %q %w", id, ErrNotFound)
}

// bucket returns a top-level bucket, nil in a read-only view of a file
// that was never set up (or is empty: no bbolt transaction at all).
func (t *Tx) bucket(name []byte) *bolt.Bucket {
	if t.tx == nil {
		return nil
	}
	return t.tx.Bucket(name)
}

// wbucket returns a top-level bucket to write to, filled to the brim
// when it splits: records are mostly appended in key order.
func (t *Tx) wbucket(name []byte) (*bolt.Bucket, error) {
	b := t.bucket(name)
	if b == nil {
		return nil, fmt.Errorf("%s: the database has no %s bucket (opened read-only before it was set up?)", t.path, name)
	}
	b.FillPercent = 1.0
	return b, nil
}

// num returns a session's number.
func (t *Tx) num(id string) (uint32, error) {
	if id == "" {
		return 0, sessionNotFound(id)
	}
	if id == t.lastID {
		return t.lastNum, nil
	}
	b := t.bucket(bktSessions)
	if b == nil {
		return 0, sessionNotFound(id)
	}
	v := b.Get([]byte(id))
	if v == nil {
		return 0, sessionNotFound(id)
	}
	n, err := record.Num(v)
	if err != nil {
		return 0, t.corruptf(id, "session record", "%v", err)
	}
	t.lastID, t.lastNum = id, n
	return n, nil
}

// key returns a record key: the session number, then rest.
func key(num uint32, rest ...[]byte) []byte {
	n := numLen
	for _, r := range rest {
		n += len(r)
	}
	k := binary.BigEndian.AppendUint32(make([]byte, 0, n), num)
	for _, r := range rest {
		k = append(k, r...)
	}
	return k
}

// scan calls fn with the records of session num in bucket b whose keys
// (after the number) start at or after from, in key order, until fn
// returns false or an error. fn gets the key without the number; k and v
// are valid only during the call.
func scan(b *bolt.Bucket, num uint32, from []byte, fn func(k, v []byte) (bool, error)) error {
	if b == nil {
		return nil
	}
	prefix := key(num)
	c := b.Cursor()
	for k, v := c.Seek(key(num, from)); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		more, err := fn(k[numLen:], v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// last returns the last record of session num in bucket b (key without
// the number), or nil.
func last(b *bolt.Bucket, num uint32) (k, v []byte) {
	if b == nil {
		return nil, nil
	}
	c := b.Cursor()
	if num == math.MaxUint32 {
		k, v = c.Last()
	} else if k, _ = c.Seek(key(num + 1)); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, key(num)) {
		return nil, nil
	}
	return k[numLen:], v
}

// Sessions returns every session, most recently updated first (ties by
// ID). A record that cannot be decoded is an error wrapping ErrCorrupt;
// AllSessions reads past it.
func (t *Tx) Sessions() ([]model.Session, error) {
	out, bad := t.AllSessions()
	if len(bad) > 0 {
		return nil, bad[0]
	}
	return out, nil
}

// AllSessions returns every session whose record can be read, most
// recently updated first (ties by ID), and an error wrapping ErrCorrupt
// for each record that cannot.
func (t *Tx) AllSessions() ([]model.Session, []error) {
	b := t.bucket(bktSessions)
	if b == nil {
		return nil, nil
	}
	var out []model.Session
	var bad []error
	_ = b.ForEach(func(k, v []byte) error {
		s, _, err := record.Decode(string(k), v)
		if err != nil {
			bad = append(bad, t.corruptf(string(k), "session record", "%v", err))
			return nil
		}
		out = append(out, s)
		return nil
	})
	slices.SortFunc(out, func(a, b model.Session) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, bad
}

// Session returns one session.
func (t *Tx) Session(id string) (model.Session, error) {
	b := t.bucket(bktSessions)
	if b == nil || id == "" {
		return model.Session{}, sessionNotFound(id)
	}
	v := b.Get([]byte(id))
	if v == nil {
		return model.Session{}, sessionNotFound(id)
	}
	s, _, err := record.Decode(id, v)
	if err != nil {
		return model.Session{}, t.corruptf(id, "session record", "%v", err)
	}
	return s, nil
}

// PutSession creates or replaces a session record. A new session gets
// the next session number.
func (t *Tx) PutSession(s model.Session) error {
	if s.ID == "" {
		return errors.New("put session: empty session ID")
	}
	b, err := t.wbucket(bktSessions)
	if err != nil {
		return err
	}
	num, err := t.num(s.ID)
	if errors.Is(err, ErrNotFound) {
		seq, err := b.NextSequence()
		if err != nil {
			return fmt.Errorf("session %q: %w", s.ID, err)
		}
		if seq > math.MaxUint32 {
			return fmt.Errorf("session %q: this file has numbered %d sessions, the most it can", s.ID, uint32(math.MaxUint32))
		}
		num = uint32(seq)
	} else if err != nil {
		return err
	}
	if err := b.Put([]byte(s.ID), record.Append(nil, num, &s)); err != nil {
		return fmt.Errorf("session %q: %w", s.ID, err)
	}
	t.lastID, t.lastNum = s.ID, num
	return nil
}

// Ops returns a session's operations in creation order. An operation
// that cannot be decoded is an error wrapping ErrCorrupt.
func (t *Tx) Ops(sessionID string) ([]model.Op, error) {
	num, err := t.num(sessionID)
	if err != nil {
		return nil, err
	}
	var out []model.Op
	err = scan(t.bucket(bktOps), num, nil, func(k, v []byte) (bool, error) {
		var op model.Op
		if err := json.Unmarshal(v, &op); err != nil {
			return false, t.corruptf(sessionID, fmt.Sprintf("op #%x", k), "%v", err)
		}
		out = append(out, op)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseOpIndex splits an opindex value into session ID and op key.
func parseOpIndex(v []byte) (sessionID string, key []byte, ok bool) {
	if len(v) <= 8 {
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
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	b, err := t.wbucket(bktOps)
	if err != nil {
		return err
	}
	idx, err := t.wbucket(bktOpIndex)
	if err != nil {
		return err
	}
	data, err := json.Marshal(op)
	if err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	if v := idx.Get([]byte(op.ID)); v != nil {
		owner, opKey, ok := parseOpIndex(v)
		if !ok {
			return t.corruptf("", fmt.Sprintf("op index entry %q", op.ID), "%d bytes", len(v))
		}
		if owner != sessionID {
			return fmt.Errorf("op %q belongs to session %q, not %q", op.ID, owner, sessionID)
		}
		if err := b.Put(key(num, opKey), data); err != nil {
			return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
		}
		return nil
	}
	n, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	opKey := put64(n)
	if err := b.Put(key(num, opKey), data); err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	if err := idx.Put([]byte(op.ID), append([]byte(sessionID), opKey...)); err != nil {
		return fmt.Errorf("session %q: op %q: %w", sessionID, op.ID, err)
	}
	return nil
}

// OpSession returns the ID of the session that holds an operation.
func (t *Tx) OpSession(opID string) (string, error) {
	idx := t.bucket(bktOpIndex)
	var v []byte
	if idx != nil && opID != "" {
		v = idx.Get([]byte(opID))
	}
	if v == nil {
		return "", fmt.Errorf("op %q %w", opID, ErrNotFound)
	}
	sid, _, ok := parseOpIndex(v)
	if !ok {
		return "", t.corruptf("", fmt.Sprintf("op index entry %q", opID), "%d bytes", len(v))
	}
	return sid, nil
}

// ImportKey returns the seq recorded for an import key, if any.
func (t *Tx) ImportKey(sessionID, k string) (seq uint64, ok bool, err error) {
	num, err := t.num(sessionID)
	if err != nil || k == "" {
		return 0, false, err
	}
	b := t.bucket(bktKeys)
	if b == nil {
		return 0, false, nil
	}
	v := b.Get(key(num, []byte(k)))
	if v == nil {
		return 0, false, nil
	}
	seq, n := binary.Uvarint(v)
	if n != len(v) || seq == 0 {
		return 0, false, t.corruptf(sessionID, fmt.Sprintf("import key %q", k), "seq %x", v)
	}
	return seq, true, nil
}

// PutImportKey records the seq an import key produced.
func (t *Tx) PutImportKey(sessionID, k string, seq uint64) error {
	if k == "" {
		return fmt.Errorf("session %q: empty import key", sessionID)
	}
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	b, err := t.wbucket(bktKeys)
	if err != nil {
		return err
	}
	if err := b.Put(key(num, []byte(k)), binary.AppendUvarint(nil, seq)); err != nil {
		return fmt.Errorf("session %q: import key %q: %w", sessionID, k, err)
	}
	return nil
}

// SourceSession returns the session a source thread (format and key, as
// an importer names it) was imported into, if any.
func (t *Tx) SourceSession(source string) (string, bool) {
	b := t.bucket(bktSources)
	if b == nil {
		return "", false
	}
	v := b.Get([]byte(source))
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
	b, err := t.wbucket(bktSources)
	if err != nil {
		return err
	}
	return b.Put([]byte(source), []byte(sessionID))
}

// PutPrefs stores pending context preferences (opaque bytes), replacing any
// pending ones. Empty prefs clear them.
func (t *Tx) PutPrefs(sessionID string, prefs []byte) error {
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	b, err := t.wbucket(bktPrefs)
	if err != nil {
		return err
	}
	if len(prefs) == 0 {
		err = b.Delete(key(num))
	} else {
		err = b.Put(key(num), bytes.Clone(prefs))
	}
	if err != nil {
		return fmt.Errorf("session %q: prefs: %w", sessionID, err)
	}
	return nil
}

// Prefs returns the pending preferences, or nil if none are pending.
// Clear them with PutPrefs(sessionID, nil) once they are used.
func (t *Tx) Prefs(sessionID string) ([]byte, error) {
	num, err := t.num(sessionID)
	if err != nil {
		return nil, err
	}
	b := t.bucket(bktPrefs)
	if b == nil {
		return nil, nil
	}
	return bytes.Clone(b.Get(key(num))), nil
}
