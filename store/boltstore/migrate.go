package boltstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"weft/model"
)

// Schema 1 kept, beside meta, sessions (JSON of model.Session), opindex
// and sources, a bucket "threads" with one nested bucket per session ID
// holding six buckets: msgs (seq -> message, the same encoding as now),
// bytime, heads (partial chunks too), ops (the session's own sequence ->
// op JSON), keys (import key -> seq, 8 bytes big-endian) and prefs
// ("pending" -> bytes).
var (
	bktThreads = []byte("threads")
	keyPending = []byte("pending")
)

// layout1 reads a schema-1 file.
type layout1 struct{}

func (layout1) session(id string, v []byte) (model.Session, place, bool, error) {
	var s model.Session
	if err := json.Unmarshal(v, &s); err != nil {
		return model.Session{}, place{id: id}, true, err
	}
	s.ID = id
	return s, place{id: id}, true, nil
}

func (layout1) records(tx *bolt.Tx, p place, kind []byte) (*bolt.Bucket, []byte) {
	th := tx.Bucket(bktThreads)
	if th == nil {
		return nil, nil
	}
	sb := th.Bucket([]byte(p.id))
	if sb == nil {
		return nil, nil
	}
	return sb.Bucket(kind), nil
}

func (layout1) importSeq(v []byte) (uint64, bool) {
	if len(v) != 8 || be64(v) == 0 {
		return 0, false
	}
	return be64(v), true
}

func (l layout1) prefs(tx *bolt.Tx, p place) []byte {
	if b, _ := l.records(tx, p, bktPrefs); b != nil {
		return b.Get(keyPending)
	}
	return nil
}

func (layout1) numbered() bool { return false }

// migrations rewrite a file of an older schema (the key) into dst, a new,
// empty store of the current schema, reading it in src's transactions.
// A migration fails rather than leave anything out. It is a variable so
// tests can swap it.
var migrations = map[uint32]func(src *bolt.DB, srcPath string, dst *Store) error{
	1: func(src *bolt.DB, srcPath string, dst *Store) error {
		return newCopier(src, srcPath, layout1{}, dst, true).copyAll()
	},
}

// errMigrated tells open that the file was replaced by its migrated copy
// and must be opened again.
var errMigrated = errors.New("migrated")

// migrate rewrites the file in the current schema: into a new file next
// to it (path + ".migrating"), in transactions of a few megabytes so a
// file of any size migrates in bounded memory, which then replaces the
// file by a rename. The old file is untouched until the rename, so a
// failed or interrupted migration leaves it as it was; the new file holds
// only live data, so it is as small as the data. Other processes waiting
// for the lock see the file replaced and open the new one (see
// replaced).
func (s *Store) migrate(from uint32) error {
	m, ok := migrations[from]
	if !ok {
		return fmt.Errorf("%s has schema %d and this weft has no migration from it", s.path, from)
	}
	fail := func(err error) error {
		return fmt.Errorf("migrating %s from schema %d to %d: %w", s.path, from, currentSchema, err)
	}
	real, err := filepath.EvalSymlinks(s.path)
	if err != nil {
		return fail(err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return fail(err)
	}
	tmp := real + ".migrating"
	// A leftover of an interrupted migration: this process holds the
	// file's lock, so nobody else is writing it.
	_ = os.Remove(tmp)
	dst, err := Open(tmp, Options{})
	if err != nil {
		return fail(err)
	}
	dst.db.NoSync = true // one sync at the end
	err = m(s.db, s.path, dst)
	if err != nil {
		// A record the migration cannot read stops it; salvage reads
		// past such records.
		err = fmt.Errorf("%w (weft salvage --db %s OUT copies what can be read into a new file OUT)", err, shellQuote(s.path))
	}
	if err == nil {
		dst.db.NoSync = false
		err = dst.db.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, info.Mode().Perm())
	}
	if err == nil {
		err = os.Rename(tmp, real)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fail(err)
	}
	if d, err := os.Open(filepath.Dir(real)); err == nil {
		_ = d.Sync() // the rename itself is durable
		_ = d.Close()
	}
	return errMigrated
}
