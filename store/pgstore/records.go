package pgstore

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"weft/model"
)

// Ops are a session's operations, in the order they were first stored.
func (t *Tx) Ops(sessionID string) ([]model.Op, error) {
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
	return out, t.scanned(sessionID, rows, len(out) > 0)
}

// PutOp stores an operation, new or changed (it keeps its place), in
// one round trip: the insert finds the session itself, and only when it
// stores nothing is it asked why.
func (t *Tx) PutOp(sessionID string, op model.Op) error {
	body, err := json.Marshal(op)
	if err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx, `INSERT INTO weft_ops (id, session_id, body)
		SELECT $1::text, $2::text, $3::jsonb WHERE EXISTS (SELECT 1 FROM weft_sessions WHERE id = $2)
		ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body WHERE weft_ops.session_id = EXCLUDED.session_id`, op.ID, sessionID, body)
	if err != nil {
		return t.fail(err)
	}
	if tag.RowsAffected() == 0 {
		if err := t.exists(sessionID); err != nil {
			return err
		}
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
	var p []byte
	err := t.tx.QueryRow(t.ctx, `SELECT prefs FROM weft_prefs WHERE session_id = $1`, sessionID).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, t.exists(sessionID)
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
