// Package pgstore keeps weft's sessions in PostgreSQL (pgx): the store a
// team shares, several weft processes on one database. It passes the
// store's conformance suite (store/storetest) as the bbolt file does.
//
// Layout (schema 1, in the database's search path):
//
//	weft_meta       key -> value: "schema", and "setting/NAME" for settings
//	weft_sessions   id, created order (num), updated_at, room, the record as JSON
//	weft_messages   (session_id, seq): created_at (Unix ns), role, tokens,
//	                has_parts, content, name, digest, parts, meta; the
//	                heads (the first four) also in an index of their own,
//	                read without the rows
//	weft_ops        id, session_id, creation order (num), the operation as JSON
//	weft_keys       (session_id, key) -> seq: what an import stored
//	weft_sources    source -> session_id
//	weft_prefs      session_id -> pending context preferences
//
// A session's rows go with it (ON DELETE CASCADE). Reads run in
// repeatable-read transactions, writes in serializable ones, so one
// Update is stored whole or not at all, and sees what it reads as it
// was when it began.
package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/model"
	"weft/store"
)

// schema is the version of the layout this package reads and writes.
const schema = 1

const ddl = `
CREATE TABLE IF NOT EXISTS weft_meta (
	key   text PRIMARY KEY,
	value bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS weft_sessions (
	id         text PRIMARY KEY,
	num        bigserial UNIQUE,
	updated_at timestamptz NOT NULL,
	room       text NOT NULL DEFAULT '',
	record     jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS weft_sessions_updated ON weft_sessions (updated_at DESC, id);
CREATE INDEX IF NOT EXISTS weft_sessions_room ON weft_sessions (room) WHERE room <> '';
CREATE TABLE IF NOT EXISTS weft_messages (
	session_id text NOT NULL REFERENCES weft_sessions (id) ON DELETE CASCADE,
	seq        bigint NOT NULL,
	created_at bigint NOT NULL,
	role       smallint NOT NULL,
	tokens     integer NOT NULL,
	has_parts  boolean NOT NULL,
	content    text NOT NULL,
	name       text NOT NULL,
	digest     text NOT NULL,
	parts      bytea,
	meta       jsonb,
	PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS weft_messages_time ON weft_messages (session_id, created_at, seq);
CREATE INDEX IF NOT EXISTS weft_messages_heads ON weft_messages (session_id, seq) INCLUDE (created_at, role, tokens, has_parts);
CREATE TABLE IF NOT EXISTS weft_ops (
	id         text PRIMARY KEY,
	session_id text NOT NULL REFERENCES weft_sessions (id) ON DELETE CASCADE,
	num        bigserial,
	body       jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS weft_ops_session ON weft_ops (session_id, num);
CREATE TABLE IF NOT EXISTS weft_keys (
	session_id text NOT NULL REFERENCES weft_sessions (id) ON DELETE CASCADE,
	key        text NOT NULL,
	seq        bigint NOT NULL,
	PRIMARY KEY (session_id, key)
);
CREATE TABLE IF NOT EXISTS weft_sources (
	source     text PRIMARY KEY,
	session_id text NOT NULL REFERENCES weft_sessions (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS weft_sources_session ON weft_sources (session_id);
CREATE TABLE IF NOT EXISTS weft_prefs (
	session_id text PRIMARY KEY REFERENCES weft_sessions (id) ON DELETE CASCADE,
	prefs      bytea NOT NULL
);
`

// Store is a PostgreSQL database holding weft's sessions.
type Store struct {
	pool *pgxpool.Pool
	name string // the URL, its password left out
	// closed ends the listeners (Listen) when the store closes.
	closed context.Context
	close  context.CancelFunc
}

var (
	_ store.Store = (*Store)(nil)
	_ store.Tx    = (*Tx)(nil)
)

// Open connects to the database at url (postgres://…), makes weft's
// tables if they are not there, and checks their schema: a database a
// newer weft wrote is refused.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%s is not a PostgreSQL URL: %w", redact(url), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(url), err)
	}
	s := &Store{pool: pool, name: redact(url)}
	s.closed, s.close = context.WithCancel(context.Background())
	if err := s.prepare(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// prepare makes the tables (once: concurrent first opens take an
// advisory lock) and checks the schema.
func (s *Store) prepare(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7423001)`); err != nil {
			return s.fail(err)
		}
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return s.fail(err)
		}
		var v []byte
		err := tx.QueryRow(ctx, `SELECT value FROM weft_meta WHERE key = 'schema'`).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			_, err = tx.Exec(ctx, `INSERT INTO weft_meta (key, value) VALUES ('schema', $1)`, []byte(fmt.Sprint(schema)))
			return s.fail(err)
		case err != nil:
			return s.fail(err)
		case string(v) != fmt.Sprint(schema):
			return fmt.Errorf("%s has weft's schema %s but this weft knows schema %d at most: %w", s.name, v, schema, store.ErrSchemaTooNew)
		}
		return nil
	})
}

// fail names the database in an error from it.
func (s *Store) fail(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", s.name, err)
}

// redact is url without its password.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Path names the database: its URL, the password left out.
func (s *Store) Path() string { return s.name }

// Shared: several weft processes may use one database.
func (s *Store) Shared() bool { return true }

// Schema is the layout's version.
func (s *Store) Schema() uint32 { return schema }

// Close closes the connections.
func (s *Store) Close() error {
	s.close()
	s.pool.Close()
	return nil
}

// View runs fn in a repeatable-read, read-only transaction.
func (s *Store) View(fn func(store.Tx) error) error {
	ctx := context.Background()
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return fn(&Tx{ctx: ctx, tx: tx, s: s, readOnly: true})
	})
}

// Update runs fn in a serializable transaction: everything fn wrote, or,
// when fn fails, nothing.
//
// A write that another process's serializable write conflicts with
// (PostgreSQL's serialization failure or deadlock) is an error wrapping
// store.ErrConflict: the caller runs it again from the start, reading
// afresh.
func (s *Store) Update(fn func(store.Tx) error) error {
	ctx := context.Background()
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, func(tx pgx.Tx) error {
		return fn(&Tx{ctx: ctx, tx: tx, s: s})
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01") {
		return fmt.Errorf("%s: %w (%s)", s.name, store.ErrConflict, pe.Message)
	}
	return err
}

// Sessions are every session's record, most recently updated first.
func (s *Store) Sessions() ([]model.Session, error) {
	var out []model.Session
	err := s.View(func(tx store.Tx) error {
		var err error
		out, err = tx.Sessions()
		return err
	})
	return out, err
}

// Encode keeps the messages as they are: the rows are made in the
// append.
func (s *Store) Encode(msgs []model.Message) (store.Encoded, error) {
	return encoded(append([]model.Message(nil), msgs...)), nil
}

// encoded are messages to append.
type encoded []model.Message

func (e encoded) Len() int { return len(e) }

func (e encoded) Pick(idx []int) store.Encoded {
	out := make(encoded, len(idx))
	for j, i := range idx {
		out[j] = e[i]
	}
	return out
}

func (e encoded) Join(f store.Encoded) store.Encoded {
	g, _ := f.(encoded)
	return append(append(encoded(nil), e...), g...)
}

// Tx is a transaction of the database.
type Tx struct {
	ctx      context.Context
	tx       pgx.Tx
	s        *Store
	readOnly bool
	ahead    ahead // messages read ahead of a reader (readOnly only)
}

func (t *Tx) fail(err error) error { return t.s.fail(err) }

func notFound(what string) error { return fmt.Errorf("%s %w", what, store.ErrNotFound) }

// exists reports whether session id is stored, failing when it is not.
func (t *Tx) exists(id string) error {
	var one int
	err := t.tx.QueryRow(t.ctx, `SELECT 1 FROM weft_sessions WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(fmt.Sprintf("session %q", id))
	}
	return t.fail(err)
}

// Session is session id's record.
func (t *Tx) Session(id string) (model.Session, error) {
	var rec []byte
	err := t.tx.QueryRow(t.ctx, `SELECT record FROM weft_sessions WHERE id = $1`, id).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return model.Session{}, notFound(fmt.Sprintf("session %q", id))
	}
	if err != nil {
		return model.Session{}, t.fail(err)
	}
	return t.decodeSession(id, rec)
}

func (t *Tx) decodeSession(id string, rec []byte) (model.Session, error) {
	var s model.Session
	if err := json.Unmarshal(rec, &s); err != nil {
		return model.Session{}, &corruptError{path: t.s.name, session: id, record: "session record", err: err}
	}
	s.ID = id
	return s, nil
}

// PutSession creates or replaces a session's record.
func (t *Tx) PutSession(s model.Session) error {
	if s.ID == "" {
		return errors.New("a session needs an ID")
	}
	rec, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = t.tx.Exec(t.ctx, `INSERT INTO weft_sessions (id, updated_at, room, record) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET updated_at = EXCLUDED.updated_at, room = EXCLUDED.room, record = EXCLUDED.record`,
		s.ID, s.UpdatedAt, s.Room, rec)
	return t.fail(err)
}

// DeleteSession removes a session and everything it holds.
func (t *Tx) DeleteSession(id string) error {
	tag, err := t.tx.Exec(t.ctx, `DELETE FROM weft_sessions WHERE id = $1`, id)
	if err != nil {
		return t.fail(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(fmt.Sprintf("session %q", id))
	}
	return nil
}

// sessions are the records a query gives, with an error for each that
// does not decode.
func (t *Tx) sessions(query string, args ...any) ([]model.Session, []error, error) {
	rows, err := t.tx.Query(t.ctx, query, args...)
	if err != nil {
		return nil, nil, t.fail(err)
	}
	defer rows.Close()
	var out []model.Session
	var bad []error
	for rows.Next() {
		var id string
		var rec []byte
		if err := rows.Scan(&id, &rec); err != nil {
			return nil, nil, t.fail(err)
		}
		s, err := t.decodeSession(id, rec)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		out = append(out, s)
	}
	return out, bad, t.fail(rows.Err())
}

const byUpdate = ` ORDER BY updated_at DESC, id`

// Sessions are every record, most recently updated first (ties by ID).
func (t *Tx) Sessions() ([]model.Session, error) {
	out, bad, err := t.sessions(`SELECT id, record FROM weft_sessions` + byUpdate)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return out, err
}

// AllSessions are the records that decode, and an error for each that
// does not.
func (t *Tx) AllSessions() ([]model.Session, []error) {
	out, bad, err := t.sessions(`SELECT id, record FROM weft_sessions` + byUpdate)
	if err != nil {
		bad = append(bad, err)
	}
	return out, bad
}

// SessionsBefore is up to n records whose IDs sort before before ("":
// from the last), in descending ID order (weft's IDs sort in creation
// order), and whether more follow.
func (t *Tx) SessionsBefore(before string, n int) ([]store.SessionEntry, bool) {
	q := `SELECT id, record FROM weft_sessions WHERE ($1 = '' OR id < $1) ORDER BY id DESC LIMIT $2`
	rows, err := t.tx.Query(t.ctx, q, before, n+1)
	if err != nil {
		return []store.SessionEntry{{ID: before, Err: t.fail(err)}}, false
	}
	defer rows.Close()
	var page []store.SessionEntry
	for rows.Next() {
		var id string
		var rec []byte
		if err := rows.Scan(&id, &rec); err != nil {
			return append(page, store.SessionEntry{ID: id, Err: t.fail(err)}), false
		}
		s, err := t.decodeSession(id, rec)
		page = append(page, store.SessionEntry{ID: id, Session: s, Err: err})
	}
	if len(page) > n {
		return page[:n], true
	}
	return page, false
}

// RoomSessions are the sessions of a room, most recently updated first.
func (t *Tx) RoomSessions(room string) ([]model.Session, error) {
	if room == "" {
		return nil, nil
	}
	out, bad, err := t.sessions(`SELECT id, record FROM weft_sessions WHERE room = $1`+byUpdate, room)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return out, err
}

// corruptError is a record that cannot be decoded. It wraps
// store.ErrCorrupt.
type corruptError struct {
	path, session, record string
	err                   error
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("%s: session %q: %s: corrupt record: %v", e.path, e.session, e.record, e.err)
}

func (e *corruptError) Is(target error) bool   { return target == store.ErrCorrupt }
func (e *corruptError) Unwrap() error          { return e.err }
func (e *corruptError) CorruptSession() string { return e.session }
