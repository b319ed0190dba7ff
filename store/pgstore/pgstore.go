// Package pgstore keeps weft's sessions in PostgreSQL (pgx): the store a
// team shares, several weft processes on one database. It passes the
// store's conformance suite (store/storetest) as the bbolt file does.
//
// Layout (schema 1, in the database's search path):
//
//	weft_meta       key -> value: "schema", and "setting/NAME" for settings
//	weft_sessions   id, created order (num), updated_at, room, the record as JSON
//	weft_messages   (session_id, seq): created_at (Unix ns), role, tokens,
//	                has_parts, content, name, digest, parts, meta
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
	"math"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
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

// Schema is the layout's version.
func (s *Store) Schema() uint32 { return schema }

// Close closes the connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// View runs fn in a repeatable-read, read-only transaction.
func (s *Store) View(fn func(store.Tx) error) error {
	ctx := context.Background()
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return fn(&Tx{ctx: ctx, tx: tx, s: s})
	})
}

// Update runs fn in a serializable transaction: everything fn wrote, or,
// when fn fails, nothing.
func (s *Store) Update(fn func(store.Tx) error) error {
	ctx := context.Background()
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, func(tx pgx.Tx) error {
		return fn(&Tx{ctx: ctx, tx: tx, s: s})
	})
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
	ctx context.Context
	tx  pgx.Tx
	s   *Store
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

// storable is t's Unix nanoseconds, as the bbolt file stores them (years
// 1678-2262).
func storable(t time.Time) (int64, bool) {
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return 0, false
	}
	return t.UnixNano(), true
}

// LastSeq is the seq of a session's last stored message, 0 if none.
func (t *Tx) LastSeq(sessionID string) (uint64, error) {
	if err := t.exists(sessionID); err != nil {
		return 0, err
	}
	var n int64
	err := t.tx.QueryRow(t.ctx, `SELECT COALESCE(max(seq), 0) FROM weft_messages WHERE session_id = $1`, sessionID).Scan(&n)
	return uint64(n), t.fail(err)
}

// AppendMessages stores messages whose Seq, ID, Digest and Tokens the
// caller has set; their seqs must continue the stored ones exactly. On
// error nothing has been written.
func (t *Tx) AppendMessages(sessionID string, msgs []model.Message) error {
	last, err := t.LastSeq(sessionID)
	if err != nil || len(msgs) == 0 {
		return err
	}
	rows := make([][]any, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if want := last + uint64(i) + 1; m.Seq != want {
			return fmt.Errorf("session %q: message seq %d does not continue the stored messages: expected seq %d", sessionID, m.Seq, want)
		}
		if m.ID != "" && m.ID != model.MessageID(m.Seq) {
			return fmt.Errorf("session %q: message seq %d has ID %q, want %q", sessionID, m.Seq, m.ID, model.MessageID(m.Seq))
		}
		if !m.Role.Valid() {
			return fmt.Errorf("session %q: message seq %d: role %q is not one of system, user, assistant, tool", sessionID, m.Seq, m.Role)
		}
		at, ok := storable(m.CreatedAt)
		if !ok {
			return fmt.Errorf("session %q: message seq %d: created_at %s is outside the storable range (years 1678-2262)", sessionID, m.Seq, m.CreatedAt)
		}
		var meta []byte
		if len(m.Meta) > 0 {
			meta, _ = json.Marshal(m.Meta)
		}
		var parts []byte
		if len(m.Parts) > 0 {
			parts = m.Parts
		}
		rows[i] = []any{sessionID, int64(m.Seq), at, int16(m.Role.Code()), int32(m.Tokens), len(m.Parts) > 0, m.Content, m.Name, m.Digest, parts, meta}
	}
	_, err = t.tx.CopyFrom(t.ctx, pgx.Identifier{"weft_messages"},
		[]string{"session_id", "seq", "created_at", "role", "tokens", "has_parts", "content", "name", "digest", "parts", "meta"},
		pgx.CopyFromRows(rows))
	return t.fail(err)
}

// AppendEncoded is AppendMessages: the rows are made here.
func (t *Tx) AppendEncoded(sessionID string, msgs []model.Message, _ store.Encoded) error {
	return t.AppendMessages(sessionID, msgs)
}

const messageColumns = `seq, created_at, role, tokens, content, name, digest, parts, meta`

func scanMessage(rows pgx.Row) (model.Message, error) {
	var seq, at int64
	var role int16
	var tokens int32
	var m model.Message
	var parts, meta []byte
	if err := rows.Scan(&seq, &at, &role, &tokens, &m.Content, &m.Name, &m.Digest, &parts, &meta); err != nil {
		return model.Message{}, err
	}
	m.Seq, m.ID = uint64(seq), model.MessageID(uint64(seq))
	m.CreatedAt = time.Unix(0, at).UTC()
	m.Role, m.Tokens = model.RoleFromCode(uint8(role)), int(tokens)
	if len(parts) > 0 {
		m.Parts = parts
	}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m.Meta); err != nil {
			return model.Message{}, fmt.Errorf("meta: %w", err)
		}
	}
	return m, nil
}

// Message is one stored message.
func (t *Tx) Message(sessionID string, seq uint64) (model.Message, error) {
	if err := t.exists(sessionID); err != nil {
		return model.Message{}, err
	}
	m, err := scanMessage(t.tx.QueryRow(t.ctx, `SELECT `+messageColumns+` FROM weft_messages WHERE session_id = $1 AND seq = $2`, sessionID, int64(seq)))
	if errors.Is(err, pgx.ErrNoRows) {
		return model.Message{}, notFound(fmt.Sprintf("session %q: message %d", sessionID, seq))
	}
	return m, t.fail(err)
}

// Messages calls fn with the messages seq from..to, in seq order,
// stopping at fn's first error, which it returns.
func (t *Tx) Messages(sessionID string, from, to uint64, fn func(model.Message) error) error {
	if err := t.exists(sessionID); err != nil {
		return err
	}
	rows, err := t.tx.Query(t.ctx, `SELECT `+messageColumns+` FROM weft_messages WHERE session_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`,
		sessionID, int64(min(from, math.MaxInt64)), int64(min(to, math.MaxInt64)))
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return t.fail(err)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return t.fail(rows.Err())
}

// ScanContent calls fn with every message's content in seq order; fn
// returns false to stop.
func (t *Tx) ScanContent(sessionID string, fn func(seq uint64, content []byte) bool) error {
	if err := t.exists(sessionID); err != nil {
		return err
	}
	rows, err := t.tx.Query(t.ctx, `SELECT seq, content FROM weft_messages WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var content []byte
		if err := rows.Scan(&seq, &content); err != nil {
			return t.fail(err)
		}
		if !fn(uint64(seq), content) {
			return nil
		}
	}
	return t.fail(rows.Err())
}

// Heads are every message's head: index seq-1.
func (t *Tx) Heads(sessionID string) ([]model.Head, error) {
	if err := t.exists(sessionID); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(t.ctx, `SELECT created_at, role, tokens, has_parts FROM weft_messages WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return nil, t.fail(err)
	}
	defer rows.Close()
	var out []model.Head
	for rows.Next() {
		var at int64
		var role int16
		var tokens int32
		var parts bool
		if err := rows.Scan(&at, &role, &tokens, &parts); err != nil {
			return nil, t.fail(err)
		}
		h := model.Head{At: at, Role: uint8(role), Tokens: uint32(max(tokens, 0))}
		if parts {
			h.Flags |= model.HeadHasParts
		}
		out = append(out, h)
	}
	return out, t.fail(rows.Err())
}

// TimeAscend calls fn with the messages created at or after from, in
// (created_at, seq) order; fn returns false to stop.
func (t *Tx) TimeAscend(sessionID string, from time.Time, fn func(seq uint64, at int64) bool) error {
	if err := t.exists(sessionID); err != nil {
		return err
	}
	lo, ok := storable(from)
	if !ok {
		lo = math.MinInt64
		if from.After(time.Unix(0, 0)) {
			return nil
		}
	}
	rows, err := t.tx.Query(t.ctx, `SELECT seq, created_at FROM weft_messages WHERE session_id = $1 AND created_at >= $2 ORDER BY created_at, seq`, sessionID, lo)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq, at int64
		if err := rows.Scan(&seq, &at); err != nil {
			return t.fail(err)
		}
		if !fn(uint64(seq), at) {
			return nil
		}
	}
	return t.fail(rows.Err())
}

// TimeSpan is when a session's earliest and latest messages were
// created (Unix ns); ok is false when it has none.
func (t *Tx) TimeSpan(sessionID string) (first, latest int64, ok bool, err error) {
	if err := t.exists(sessionID); err != nil {
		return 0, 0, false, err
	}
	var lo, hi *int64
	if err := t.tx.QueryRow(t.ctx, `SELECT min(created_at), max(created_at) FROM weft_messages WHERE session_id = $1`, sessionID).Scan(&lo, &hi); err != nil {
		return 0, 0, false, t.fail(err)
	}
	if lo == nil || hi == nil {
		return 0, 0, false, nil
	}
	return *lo, *hi, true, nil
}

// Ops are a session's operations, in the order they were first stored.
func (t *Tx) Ops(sessionID string) ([]model.Op, error) {
	if err := t.exists(sessionID); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(t.ctx, `SELECT id, body FROM weft_ops WHERE session_id = $1 ORDER BY num`, sessionID)
	if err != nil {
		return nil, t.fail(err)
	}
	defer rows.Close()
	var out []model.Op
	for rows.Next() {
		var id string
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return nil, t.fail(err)
		}
		var op model.Op
		if err := json.Unmarshal(body, &op); err != nil {
			return nil, &corruptError{path: t.s.name, session: sessionID, record: "operation " + id, err: err}
		}
		out = append(out, op)
	}
	return out, t.fail(rows.Err())
}

// PutOp stores an operation, new or changed (it keeps its place).
func (t *Tx) PutOp(sessionID string, op model.Op) error {
	if err := t.exists(sessionID); err != nil {
		return err
	}
	body, err := json.Marshal(op)
	if err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx, `INSERT INTO weft_ops (id, session_id, body) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body WHERE weft_ops.session_id = EXCLUDED.session_id`, op.ID, sessionID, body)
	if err != nil {
		return t.fail(err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("operation %s belongs to another session than %q", op.ID, sessionID)
	}
	return nil
}

// OpSession is the session an operation belongs to.
func (t *Tx) OpSession(opID string) (string, error) {
	var sid string
	err := t.tx.QueryRow(t.ctx, `SELECT session_id FROM weft_ops WHERE id = $1`, opID).Scan(&sid)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", notFound(fmt.Sprintf("operation %q", opID))
	}
	return sid, t.fail(err)
}

// ImportKey is the seq an import key was stored as.
func (t *Tx) ImportKey(sessionID, key string) (uint64, bool, error) {
	var seq int64
	err := t.tx.QueryRow(t.ctx, `SELECT seq FROM weft_keys WHERE session_id = $1 AND key = $2`, sessionID, key).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, t.fail(err)
	}
	return uint64(seq), true, nil
}

// PutImportKey records that key was stored as seq.
func (t *Tx) PutImportKey(sessionID, key string, seq uint64) error {
	if err := t.exists(sessionID); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx, `INSERT INTO weft_keys (session_id, key, seq) VALUES ($1, $2, $3)
		ON CONFLICT (session_id, key) DO UPDATE SET seq = EXCLUDED.seq`, sessionID, key, int64(seq))
	return t.fail(err)
}

// EachImportKey calls fn with every import key of a session, in key
// order.
func (t *Tx) EachImportKey(sessionID string, fn func(key string, seq uint64) error) error {
	rows, err := t.tx.Query(t.ctx, `SELECT key, seq FROM weft_keys WHERE session_id = $1 ORDER BY key`, sessionID)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var seq int64
		if err := rows.Scan(&k, &seq); err != nil {
			return t.fail(err)
		}
		if err := fn(k, uint64(seq)); err != nil {
			return err
		}
	}
	return t.fail(rows.Err())
}

// SourceSession is the session a source thread was imported into.
func (t *Tx) SourceSession(source string) (string, bool) {
	var sid string
	if err := t.tx.QueryRow(t.ctx, `SELECT session_id FROM weft_sources WHERE source = $1`, source).Scan(&sid); err != nil {
		return "", false
	}
	return sid, true
}

// PutSourceSession records that a source thread goes into a session.
func (t *Tx) PutSourceSession(source, sessionID string) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO weft_sources (source, session_id) VALUES ($1, $2)
		ON CONFLICT (source) DO UPDATE SET session_id = EXCLUDED.session_id`, source, sessionID)
	return t.fail(err)
}

// SessionSources are the sources recorded as imported into a session,
// in order.
func (t *Tx) SessionSources(sessionID string) ([]string, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT source FROM weft_sources WHERE session_id = $1 ORDER BY source`, sessionID)
	if err != nil {
		return nil, t.fail(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var src string
		if err := rows.Scan(&src); err != nil {
			return nil, t.fail(err)
		}
		out = append(out, src)
	}
	return out, t.fail(rows.Err())
}

// Prefs are a session's pending context preferences (nil: none).
func (t *Tx) Prefs(sessionID string) ([]byte, error) {
	if err := t.exists(sessionID); err != nil {
		return nil, err
	}
	var p []byte
	err := t.tx.QueryRow(t.ctx, `SELECT prefs FROM weft_prefs WHERE session_id = $1`, sessionID).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return p, t.fail(err)
}

// PutPrefs sets a session's pending preferences; empty removes them.
func (t *Tx) PutPrefs(sessionID string, prefs []byte) error {
	if err := t.exists(sessionID); err != nil {
		return err
	}
	var err error
	if len(prefs) == 0 {
		_, err = t.tx.Exec(t.ctx, `DELETE FROM weft_prefs WHERE session_id = $1`, sessionID)
	} else {
		_, err = t.tx.Exec(t.ctx, `INSERT INTO weft_prefs (session_id, prefs) VALUES ($1, $2)
			ON CONFLICT (session_id) DO UPDATE SET prefs = EXCLUDED.prefs`, sessionID, prefs)
	}
	return t.fail(err)
}

const settingPrefix = "setting/"

// Setting is a setting's value, nil when it is not set.
func (t *Tx) Setting(name string) []byte {
	var v []byte
	if err := t.tx.QueryRow(t.ctx, `SELECT value FROM weft_meta WHERE key = $1`, settingPrefix+name).Scan(&v); err != nil {
		return nil
	}
	return v
}

// PutSetting sets a setting.
func (t *Tx) PutSetting(name string, value []byte) error {
	_, err := t.tx.Exec(t.ctx, `INSERT INTO weft_meta (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, settingPrefix+name, value)
	return t.fail(err)
}

// Settings calls fn with every setting, in name order.
func (t *Tx) Settings(fn func(name string, value []byte) error) error {
	rows, err := t.tx.Query(t.ctx, `SELECT key, value FROM weft_meta WHERE key LIKE 'setting/%' ORDER BY key`)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return t.fail(err)
		}
		if err := fn(k[len(settingPrefix):], v); err != nil {
			return err
		}
	}
	return t.fail(rows.Err())
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
