// Package store keeps weft's sessions, messages and operations in one bbolt
// file.
//
// Layout (schema 1):
//
//	meta      schema -> uint32 big-endian
//	sessions  session id -> JSON of model.Session
//	opindex   op id -> session id + 8-byte op key
//	threads   one nested bucket per session id, holding
//	  msgs    seq (8-byte big-endian) -> encoded message (see codec.go)
//	  bytime  created_at (8 bytes, sign bit flipped) + seq (8 bytes) -> empty
//	  heads   chunk number (8-byte big-endian) -> up to 1024 16-byte head records
//	  ops     creation counter (8-byte big-endian) -> op JSON
//	  keys    import key -> seq (8-byte big-endian)
//	  prefs   "pending" -> opaque bytes
//
// All access goes through View and Update; a Tx's methods never open
// transactions of their own, so an Update is stored whole or not at all.
package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"weft/model"

	bolt "go.etcd.io/bbolt"
)

var (
	// ErrNotFound is wrapped by every error about a missing session,
	// message or operation.
	ErrNotFound = errors.New("not found")
	// ErrInUse means another process holds the database file's lock.
	ErrInUse = errors.New("database in use")
	// ErrSchemaTooNew means the file was written by a newer weft.
	ErrSchemaTooNew = errors.New("database schema is newer than this weft")
)

// currentSchema is the schema version this code reads and writes.
const currentSchema uint32 = 1

// SchemaVersion is the schema this weft reads and writes, for faces that
// report it (the HTTP listener's /healthz).
const SchemaVersion = currentSchema

// migrations upgrade a file from schema N (the key) to N+1, all inside the
// one transaction that Open runs. It is a variable so tests can swap it.
var migrations = map[uint32]func(*bolt.Tx) error{}

// defaultTimeout is how long Open waits for the file lock when
// Options.Timeout is zero.
const defaultTimeout = 2 * time.Second

// Bucket and key names.
var (
	bktMeta     = []byte("meta")
	bktSessions = []byte("sessions")
	bktOpIndex  = []byte("opindex")
	bktThreads  = []byte("threads")
	bktSources  = []byte("sources")

	bktMsgs   = []byte("msgs")
	bktByTime = []byte("bytime")
	bktHeads  = []byte("heads")
	bktOps    = []byte("ops")
	bktKeys   = []byte("keys")
	bktPrefs  = []byte("prefs")

	keySchema  = []byte("schema")
	keyPending = []byte("pending")
)

var topBuckets = [][]byte{bktMeta, bktSessions, bktOpIndex, bktThreads, bktSources}
var threadBuckets = [][]byte{bktMsgs, bktByTime, bktHeads, bktOps, bktKeys, bktPrefs}

// Options configure Open.
type Options struct {
	Timeout  time.Duration // how long to wait for the file lock; 0 means 2s
	ReadOnly bool
}

// Store is an open database file.
type Store struct {
	db   *bolt.DB
	path string
}

// Open opens (creating if needed, unless read-only) the database at path,
// checks its schema and migrates an older one.
func Open(path string, opt Options) (*Store, error) {
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	if !opt.ReadOnly {
		if dir := filepath.Dir(path); dir != "" {
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return nil, fmt.Errorf("open %s: %w", path, err)
				}
			}
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, ReadOnly: opt.ReadOnly})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, inUseError(path)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if opt.ReadOnly {
		err = db.View(func(tx *bolt.Tx) error { return checkSchema(tx, path) })
	} else {
		err = db.Update(func(tx *bolt.Tx) error { return prepare(tx, path) })
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// inUseError explains a lock timeout, naming the running weft's listener
// when it left its address next to the file.
func inUseError(path string) error {
	msg := fmt.Sprintf("another process (a running weft) has %s open", path)
	if b, err := os.ReadFile(path + ".addr"); err == nil {
		if addr := strings.TrimSpace(string(b)); addr != "" {
			msg += fmt.Sprintf("; a weft listening at %s has it open", addr)
		}
	}
	return fmt.Errorf("%w: %s", ErrInUse, msg)
}

// readSchema returns the file's schema version; fresh reports a file with
// no buckets at all (just created).
func readSchema(tx *bolt.Tx, path string) (v uint32, fresh bool, err error) {
	meta := tx.Bucket(bktMeta)
	if meta == nil {
		empty := true
		tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if empty {
			return 0, true, nil
		}
		return 0, false, fmt.Errorf("%s is not a weft database (it has no schema version)", path)
	}
	b := meta.Get(keySchema)
	if len(b) != 4 {
		return 0, false, fmt.Errorf("%s: corrupt schema version (%d bytes)", path, len(b))
	}
	return be32(b), false, nil
}

func tooNew(path string, v uint32) error {
	return fmt.Errorf("%s has schema %d but this weft knows schema %d at most: %w", path, v, currentSchema, ErrSchemaTooNew)
}

// checkSchema is the read-only check: no migrating, no creating.
func checkSchema(tx *bolt.Tx, path string) error {
	v, fresh, err := readSchema(tx, path)
	switch {
	case err != nil:
		return err
	case fresh:
		return nil // an empty file reads as an empty database
	case v > currentSchema:
		return tooNew(path, v)
	case v < currentSchema:
		return fmt.Errorf("%s has schema %d and needs migrating to %d: open it once without read-only", path, v, currentSchema)
	}
	return nil
}

// prepare creates a new file's buckets or migrates an older one, in one
// transaction.
func prepare(tx *bolt.Tx, path string) error {
	v, fresh, err := readSchema(tx, path)
	if err != nil {
		return err
	}
	if !fresh {
		if v > currentSchema {
			return tooNew(path, v)
		}
		for ; v < currentSchema; v++ {
			m, ok := migrations[v]
			if !ok {
				return fmt.Errorf("%s has schema %d and this weft has no migration from it", path, v)
			}
			if err := m(tx); err != nil {
				return fmt.Errorf("migrating %s from schema %d to %d: %w", path, v, v+1, err)
			}
		}
	}
	for _, name := range topBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("%s: create bucket %s: %w", path, name, err)
		}
	}
	meta := tx.Bucket(bktMeta)
	if cur := meta.Get(keySchema); len(cur) != 4 || be32(cur) != currentSchema {
		if err := meta.Put(keySchema, put32(currentSchema)); err != nil {
			return fmt.Errorf("%s: write schema: %w", path, err)
		}
	}
	return nil
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close closes the file and releases its lock.
func (s *Store) Close() error { return s.db.Close() }

// Sessions returns every session, most recently updated first.
func (s *Store) Sessions() ([]model.Session, error) {
	var out []model.Session
	err := s.View(func(tx *Tx) error {
		var err error
		out, err = tx.Sessions()
		return err
	})
	return out, err
}

// View runs fn in a read transaction.
func (s *Store) View(fn func(*Tx) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
}

// Update runs fn in one write transaction: if fn returns an error (or
// panics) nothing it wrote is kept.
func (s *Store) Update(fn func(*Tx) error) error {
	return s.db.Update(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
}
