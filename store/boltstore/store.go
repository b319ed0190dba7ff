// Package boltstore keeps weft's sessions, messages and operations in one
// bbolt file.
//
// Layout (schema 4; schema 3 without the big bucket, schema 2 without packed parts either): top-level buckets only. A session's records are keyed
// by its number (4 bytes big-endian, given when the session is first
// stored), so one session's records sit together in key order and a small
// session costs what its records cost, not a page of its own.
//
//	meta      "schema" -> uint32 big-endian
//	sessions  session id -> session record (store/record), its number first
//	msgs      num + seq (8) -> message record (store/record), or the stub
//	          of one kept in big
//	bytime    num + created_at (8, sign bit flipped) + seq (8) -> empty, for
//	          every message of a session with 1024 messages or more, or with
//	          messages out of time order (by seq); a small session in time
//	          order has none (its messages are read instead)
//	heads     num + chunk (8) -> the 1024 16-byte heads of a complete
//	          chunk (seqs chunk*1024+1 .. chunk*1024+1024); the heads of
//	          the messages after the last complete chunk are read from
//	          their records
//	ops       num + op key (8, the bucket's sequence: creation order) -> op JSON
//	opindex   op id -> session id + op key (8)
//	keys      num + import key -> seq (uvarint)
//	prefs     num -> opaque bytes
//	sources   source thread key -> session id
//	big       num + seq (8) + chunk (4) -> a chunk of a large message's
//	          record, whose stub msgs holds (bigrecord.go)
//
// Schema 1 kept a nested bucket per session with six buckets inside; a
// bucket holding buckets is never inlined, so every session cost at least
// a page. Open rewrites such a file in the current layout (migrate.go).
//
// All access goes through View and Update; a Tx's methods never open
// transactions of their own, so an Update is stored whole or not at all.
// Opening a file never writes to it unless it is new or needs migrating.
//
// A damaged file (truncated, bit-flipped) makes bbolt panic or fault on
// its memory map. Open, View, Update, Check and Salvage catch that at the
// store's boundary (guard.go) and return an error wrapping ErrDamaged that
// names the file and says how to check and salvage it; a record that
// cannot be decoded is an error wrapping ErrCorrupt that names the session
// and the record. A branch page pointing round a cycle would send bbolt's
// reads round it for ever, or overflow the stack, which nothing catches:
// Open refuses such a file, and Check and Salvage read past its damaged
// pages (store/boltfile reads the pages without bbolt).
package boltstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"weft/model"
	"weft/store"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

var (
	// ErrNotFound is wrapped by every error about a missing session,
	// message or operation.
	ErrNotFound = store.ErrNotFound
	// ErrInUse means another process holds the database file's lock.
	ErrInUse = store.ErrInUse
	// ErrSchemaTooNew means the file was written by a newer weft.
	ErrSchemaTooNew = store.ErrSchemaTooNew
	// ErrNeedsMigration means a read-only Open found a file of an older
	// schema: opening it read-write migrates it (a write, so only a
	// caller that may write should do it).
	ErrNeedsMigration = store.ErrNeedsMigration
)

// currentSchema is the schema version this code reads and writes.
// Schema 3 is schema 2 with messages' parts packed over their content
// (codec.go): a file of schema 2 reads as it is, and opening it for
// writing only says it is schema 3 now (an older weft, which would not
// read the packed parts, then refuses it as newer).
// Schema 4 keeps large records in chunks (the big bucket,
// bigrecord.go): a file of schema 2 or 3 reads as it is, and opening it
// for writing adds the bucket and says it is schema 4.
const currentSchema uint32 = 4

// packedSince is the schema from which messages' parts may be packed;
// a file of the schema before it has the same layout.
const packedSince uint32 = 3

// bigSince is the schema from which large records may be kept in
// chunks, in the big bucket.
const bigSince uint32 = 4

// sameLayout reports whether a file of schema v is laid out as the
// current schema is (its records read as they are).
func sameLayout(v uint32) bool { return v >= packedSince-1 && v <= currentSchema }

// SchemaVersion is the schema this weft reads and writes, for faces that
// report it (the HTTP listener's /healthz).
const SchemaVersion = currentSchema

// defaultTimeout is how long Open waits for the file lock when
// Options.Timeout is zero.
const defaultTimeout = 2 * time.Second

// Bucket and key names.
var (
	bktMeta     = []byte("meta")
	bktSessions = []byte("sessions")
	bktMsgs     = []byte("msgs")
	bktByTime   = []byte("bytime")
	bktHeads    = []byte("heads")
	bktOps      = []byte("ops")
	bktOpIndex  = []byte("opindex")
	bktKeys     = []byte("keys")
	bktPrefs    = []byte("prefs")
	bktSources  = []byte("sources")

	keySchema = []byte("schema")
)

// topBuckets are the buckets of the current schema, all at the top level.
var topBuckets = [][]byte{bktMeta, bktSessions, bktMsgs, bktByTime, bktHeads, bktOps, bktOpIndex, bktKeys, bktPrefs, bktSources, bktBig}

// Options configure Open.
type Options struct {
	Timeout time.Duration // how long to wait for the file lock; 0 means 2s
	// ReadOnly opens the file for reading only: nothing is created,
	// migrated or written, and Update fails. A path that does not exist
	// is an error wrapping fs.ErrNotExist.
	ReadOnly bool
	// NoCreate makes a read-write Open of a path that does not exist fail
	// with an error wrapping fs.ErrNotExist that names the path, creating
	// neither the file nor its folders. Without it, Open creates both.
	NoCreate bool
}

// Store is an open database file.
type Store struct {
	db       *bolt.DB // nil for an empty file opened read-only
	path     string
	readOnly bool
	// broken is set when a write transaction panicked on a damaged page:
	// bbolt's in-memory state may no longer match the file, so every
	// later Update is refused with this error.
	broken atomic.Pointer[DamagedError]
}

// Open opens the database at path, checks its schema and migrates an older
// one. Unless opt.ReadOnly or opt.NoCreate, a missing file is created
// (0600, its folders 0700). Opening an existing, current file writes
// nothing to it.
func Open(path string, opt Options) (*Store, error) {
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a database file", path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if opt.ReadOnly || opt.NoCreate {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("cannot create the folder of %s: %w", path, err)
			}
		}
	}
	if err == nil && fi.Size() == 0 && opt.ReadOnly {
		// A file created but never written (bbolt writes its first pages
		// when it opens it for writing) reads as an empty database.
		return &Store{path: path, readOnly: true}, nil
	}
	// Opened again after a migration (this process's or another's)
	// replaced the file; a third time would mean it keeps being replaced.
	for range 3 {
		s, retry, err := open(path, opt.ReadOnly, timeout)
		if !retry {
			return s, err
		}
	}
	return nil, fmt.Errorf("%s keeps being replaced while weft opens it", path)
}

// open is one attempt at Open. retry reports that the file was replaced
// (by a migration in another process) while this one waited for its lock.
func open(path string, readOnly bool, timeout time.Duration) (s *Store, retry bool, err error) {
	db, f, err := openBolt(path, readOnly, timeout)
	if err != nil {
		return nil, false, err
	}
	s = &Store{db: db, path: path, readOnly: readOnly}
	if replaced(path, f) {
		_ = db.Close()
		return nil, true, nil
	}
	if err := s.prepare(); err != nil {
		_ = db.Close()
		if errors.Is(err, errMigrated) {
			return nil, true, nil // open the migrated file
		}
		return nil, false, err
	}
	return s, false, nil
}

// replaced reports whether path now names another file than the one db
// holds open (f): a migration renamed its result over it while this process
// waited for the lock.
func replaced(path string, f *os.File) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	return err == nil && !os.SameFile(held, now)
}

// openError explains a failure of bbolt's Open. A lock timeout means a
// running weft has the file; an error that already names the file (an
// *fs.PathError from opening it) is not prefixed with it again.
func openError(path string, err error) error {
	if errors.Is(err, berrors.ErrTimeout) {
		return inUseError(path)
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return damaged(path, "neither of its two header pages is valid ("+err.Error()+"): it is not a bbolt file, or they were overwritten")
	}
	if strings.Contains(err.Error(), "file size too small") {
		return damaged(path, "it is shorter than its two header pages")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Path == path || strings.Contains(err.Error(), path)) {
		return err
	}
	return fmt.Errorf("open %s: %w", path, err)
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
		_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if empty {
			return 0, true, nil
		}
		return 0, false, fmt.Errorf("%s is not a weft database (it has no schema version)", path)
	}
	b := meta.Get(keySchema)
	if len(b) != 4 {
		return 0, false, damaged(path, fmt.Sprintf("its schema version is %d bytes long, not 4", len(b)))
	}
	return be32(b), false, nil
}

func tooNew(path string, v uint32) error {
	return fmt.Errorf("%s has schema %d but this weft knows schema %d at most: %w", path, v, currentSchema, ErrSchemaTooNew)
}

// prepare checks the schema in a read transaction, and writes only when
// it must: a new file gets its buckets, an older one is migrated.
func (s *Store) prepare() error {
	var v uint32
	var fresh bool
	err := s.viewRaw(func(tx *bolt.Tx) error {
		var err error
		v, fresh, err = readSchema(tx, s.path)
		if err == nil && !fresh && sameLayout(v) {
			err = checkBuckets(tx, s.path, v)
		}
		return err
	})
	switch {
	case err != nil:
		return err
	case v > currentSchema:
		return tooNew(s.path, v)
	case fresh && s.readOnly:
		return nil // an empty file reads as an empty database
	case fresh:
		return s.updateRaw(createBuckets)
	case v == currentSchema:
		return nil
	case sameLayout(v) && s.readOnly:
		return nil // read as it is
	case sameLayout(v):
		// Its records read as they are; from now on it may hold
		// packed parts and large records in chunks (the big bucket).
		return s.updateRaw(func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucketIfNotExists(bktBig); err != nil {
				return err
			}
			return tx.Bucket(bktMeta).Put(keySchema, put32(currentSchema))
		})
	case s.readOnly:
		return fmt.Errorf("%s has schema %d, older than this weft's %d: it is migrated the first time weft opens it for writing (weft import, weft new, an edit): %w", s.path, v, currentSchema, ErrNeedsMigration)
	}
	return s.migrate(v)
}

// checkBuckets makes sure a current file has every bucket, so Tx methods
// can rely on them.
func checkBuckets(tx *bolt.Tx, path string, schema uint32) error {
	var missing []string
	for _, name := range topBuckets {
		if string(name) == string(bktBig) && schema < bigSince {
			continue // added when the file is first written to
		}
		if tx.Bucket(name) == nil {
			missing = append(missing, string(name))
		}
	}
	if len(missing) > 0 {
		return damaged(path, "it has no "+strings.Join(missing, ", ")+" bucket")
	}
	return nil
}

// createBuckets makes a new file's buckets and records its schema.
func createBuckets(tx *bolt.Tx) error {
	for _, name := range topBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return tx.Bucket(bktMeta).Put(keySchema, put32(currentSchema))
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close closes the file and releases its lock.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// Sessions returns every session, most recently updated first.
func (s *Store) Sessions() ([]model.Session, error) {
	var out []model.Session
	err := s.view(func(tx *Tx) error {
		var err error
		out, err = tx.Sessions()
		return err
	})
	return out, err
}

// View runs fn in a read transaction. A damaged page met on the way is an
// error wrapping ErrDamaged, never a crash.
func (s *Store) View(fn func(store.Tx) error) error {
	return s.view(func(t *Tx) error { return fn(t) })
}

// view is View with the bbolt file's own Tx.
func (s *Store) view(fn func(*Tx) error) error {
	return s.viewRaw(func(tx *bolt.Tx) error { return fn(s.tx(tx)) })
}

// Update runs fn in one write transaction: if fn returns an error (or
// panics) nothing it wrote is kept. A damaged page met on the way is an
// error wrapping ErrDamaged, and every later Update on this Store fails
// with it.
func (s *Store) Update(fn func(store.Tx) error) error {
	return s.update(func(t *Tx) error { return fn(t) })
}

// update is Update with the bbolt file's own Tx.
func (s *Store) update(fn func(*Tx) error) error {
	return s.updateRaw(func(tx *bolt.Tx) error { return fn(s.tx(tx)) })
}

// Encode makes messages' records ahead of their append (EncodeMessages).
func (s *Store) Encode(msgs []model.Message) (store.Encoded, error) {
	return EncodeMessages(msgs)
}

// Schema is the file's layout version: the current one, once it is open.
func (s *Store) Schema() uint32 { return currentSchema }

var _ store.Store = (*Store)(nil)
var _ store.Tx = (*Tx)(nil)

// tx wraps a bbolt transaction for fn.
func (s *Store) tx(tx *bolt.Tx) *Tx {
	return &Tx{tx: tx, path: s.path}
}

// viewRaw is View over bbolt's own transaction.
func (s *Store) viewRaw(fn func(*bolt.Tx) error) error {
	if s.db == nil {
		return fn(nil) // an empty file: no buckets
	}
	return guard(s.path, func() error { return s.db.View(fn) })
}

// updateRaw is Update over bbolt's own transaction.
func (s *Store) updateRaw(fn func(*bolt.Tx) error) error {
	if d := s.broken.Load(); d != nil {
		return d
	}
	if s.db == nil {
		return fmt.Errorf("%s is empty and open read-only: nothing can be written to it", s.path)
	}
	err := guard(s.path, func() error { return s.db.Update(fn) })
	var d *DamagedError
	if errors.As(err, &d) && d.panicked {
		s.broken.CompareAndSwap(nil, d)
	}
	return err
}
