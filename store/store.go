// Package store says what the Service needs of where sessions are kept:
// sessions, append-only messages, operations, import keys, preferences
// and settings, read and written in transactions that make one edit
// atomic (Store, Tx), and the errors every backend gives alike. The
// backends are packages of their own: store/boltstore, the bbolt file
// (the default), and store/pgstore, PostgreSQL. store/storetest is the
// conformance suite every backend passes; store/migrate copies every
// session from one store into another and verifies the copy.
package store

import (
	"context"
	"errors"
	"time"

	"weft/model"
)

// The errors every backend gives (wrapped, with what they are about).
var (
	// ErrNotFound: no such session, message or operation.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt: a record that cannot be decoded while the store
	// around it can.
	ErrCorrupt = errors.New("corrupt record")
	// ErrDamaged: the store itself cannot be read (a damaged file).
	ErrDamaged = errors.New("database file is damaged")
	// ErrInUse: another process holds the store.
	ErrInUse = errors.New("database in use")
	// ErrSchemaTooNew: the store was written by a newer weft.
	ErrSchemaTooNew = errors.New("database schema is newer than this weft")
	// ErrNeedsMigration: an older store opened read-only; it is migrated
	// the first time it is opened for writing.
	ErrNeedsMigration = errors.New("database needs migrating")
	// ErrConflict: an Update met another process's write to the same
	// records and was rolled back; it may be run again from the start.
	ErrConflict = errors.New("a concurrent write conflicted")
)

// Corrupt is an error about one record that cannot be decoded, saying
// which session it belongs to ("" for none).
type Corrupt interface {
	error
	CorruptSession() string
}

// Store is where sessions are kept.
type Store interface {
	// View runs fn in a read transaction; Update in a write one, which
	// stores everything fn wrote or, when fn fails, nothing.
	View(fn func(Tx) error) error
	Update(fn func(Tx) error) error
	// Sessions are every session's record, most recently updated
	// first.
	Sessions() ([]model.Session, error)
	// Encode makes the records of messages ahead of the transaction
	// that appends them (AppendEncoded), on any goroutine.
	Encode(msgs []model.Message) (Encoded, error)
	// Path names the store for messages: a file, a database URL.
	Path() string
	// Schema is the version of the layout the store is written in.
	Schema() uint32
	Close() error
}

// Shared is a store other processes write too (several weft serve on
// one database): the Service then checks, in each write, that what it
// cached of a session is what the store holds.
type Shared interface {
	Shared() bool
}

// Announcer is a transaction that tells the other processes on the store
// of the write it makes, when (and only if) it commits.
type Announcer interface {
	Announce(payload []byte) error
}

// Listener is a store whose processes hear each other's announcements.
// Listen calls fn with each payload as it comes, and with nil after a
// break in which announcements may have been missed; it returns when ctx
// ends or the store closes.
type Listener interface {
	Listen(ctx context.Context, fn func(payload []byte)) error
}

// Encoded are messages' records made ahead of their append.
type Encoded interface {
	Len() int
	// Pick is the records at the given indices; Join these then f's.
	Pick(idx []int) Encoded
	Join(f Encoded) Encoded
}

// SessionEntry is a session record in a page of them (SessionsBefore):
// Err, wrapping ErrCorrupt, when it cannot be read.
type SessionEntry struct {
	ID      string
	Session model.Session
	Err     error
}

// Tx is a transaction. Its methods never open transactions of their
// own, so an Update is stored whole or not at all.
type Tx interface {
	// Sessions.
	Session(id string) (model.Session, error)
	PutSession(s model.Session) error
	DeleteSession(id string) error
	Sessions() ([]model.Session, error)
	// AllSessions are the records that read, and an error for each
	// that does not.
	AllSessions() ([]model.Session, []error)
	// SessionsBefore is a page of n records created before the one of
	// ID before ("" for the newest), newest first, and whether more
	// follow.
	SessionsBefore(before string, n int) (page []SessionEntry, more bool)
	RoomSessions(room string) ([]model.Session, error)

	// Messages: appended only, seq 1, 2, … in each session.
	AppendMessages(sessionID string, msgs []model.Message) error
	AppendEncoded(sessionID string, msgs []model.Message, enc Encoded) error
	LastSeq(sessionID string) (uint64, error)
	Message(sessionID string, seq uint64) (model.Message, error)
	Messages(sessionID string, from, to uint64, fn func(model.Message) error) error
	// ScanContent gives every message's content, valid during the call
	// only; fn returns false to stop.
	ScanContent(sessionID string, fn func(seq uint64, content []byte) bool) error
	Heads(sessionID string) ([]model.Head, error)
	TimeAscend(sessionID string, from time.Time, fn func(seq uint64, at int64) bool) error
	TimeSpan(sessionID string) (first, latest int64, ok bool, err error)

	// Operations.
	Ops(sessionID string) ([]model.Op, error)
	PutOp(sessionID string, op model.Op) error
	OpSession(opID string) (string, error)

	// Import keys and sources: what an import has stored already.
	ImportKey(sessionID, key string) (seq uint64, ok bool, err error)
	PutImportKey(sessionID, key string, seq uint64) error
	EachImportKey(sessionID string, fn func(key string, seq uint64) error) error
	SourceSession(source string) (string, bool)
	PutSourceSession(source, sessionID string) error
	SessionSources(sessionID string) ([]string, error)

	// Preferences (pending context preferences) and settings.
	Prefs(sessionID string) ([]byte, error)
	PutPrefs(sessionID string, prefs []byte) error
	Setting(name string) []byte
	PutSetting(name string, value []byte) error
	Settings(fn func(name string, value []byte) error) error
}
