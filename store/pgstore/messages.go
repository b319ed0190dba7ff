package pgstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/model"
	"weft/store"
)

// storable is t's Unix nanoseconds, as the bbolt file stores them (years
// 1678-2262).
func storable(t time.Time) (int64, bool) {
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return 0, false
	}
	return t.UnixNano(), true
}

// LastSeq is the seq of a session's last stored message, 0 if none:
// one round trip, which also says whether the session is there.
func (t *Tx) LastSeq(sessionID string) (uint64, error) {
	var ok bool
	var n int64
	err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM weft_sessions WHERE id = $1),
		COALESCE((SELECT max(seq) FROM weft_messages WHERE session_id = $1), 0)`, sessionID).Scan(&ok, &n)
	if err != nil {
		return 0, t.fail(err)
	}
	if !ok {
		return 0, notFound(fmt.Sprintf("session %q", sessionID))
	}
	return uint64(n), nil
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
		switch {
		case len(m.Parts) > 0:
			parts = m.Parts
		case len(m.ReadParts) > 0:
			// Parts as read, written here (the database keeps their
			// JSON as it is).
			parts = model.MarshalParts(m.ReadParts)
		}
		rows[i] = []any{sessionID, int64(m.Seq), at, int16(m.Role.Code()), int32(m.Tokens), len(parts) > 0, m.Content, m.Name, m.Digest, parts, meta}
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

// message is one stored message, read on its own.
func (t *Tx) message(sessionID string, seq uint64) (model.Message, error) {
	m, err := scanMessage(t.tx.QueryRow(t.ctx, `SELECT `+messageColumns+` FROM weft_messages WHERE session_id = $1 AND seq = $2`, sessionID, int64(min(seq, math.MaxInt64))))
	if errors.Is(err, pgx.ErrNoRows) {
		if err := t.exists(sessionID); err != nil {
			return model.Message{}, err
		}
		return model.Message{}, notFound(fmt.Sprintf("session %q: message %d", sessionID, seq))
	}
	return m, t.fail(err)
}

// Messages calls fn with the messages seq from..to, in seq order,
// stopping at fn's first error, which it returns.
func (t *Tx) Messages(sessionID string, from, to uint64, fn func(model.Message) error) error {
	rows, err := t.tx.Query(t.ctx, `SELECT `+messageColumns+` FROM weft_messages WHERE session_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`,
		sessionID, int64(min(from, math.MaxInt64)), int64(min(to, math.MaxInt64)))
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	some := false
	for rows.Next() {
		some = true
		m, err := scanMessage(rows)
		if err != nil {
			return t.fail(err)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return t.scanned(sessionID, rows, some)
}

// scanned ends a query of a session's rows (rows.Next has returned
// false, which closed them): its error, or, when it gave no row, whether
// the session is there. A missing session is not found as it would be
// had it been looked up first, while a query that gives rows costs no
// round trip more.
func (t *Tx) scanned(sessionID string, rows pgx.Rows, some bool) error {
	if err := rows.Err(); err != nil {
		return t.fail(err)
	}
	if !some {
		return t.exists(sessionID)
	}
	return nil
}

// ScanContent calls fn with every message's content in seq order; fn
// returns false to stop.
func (t *Tx) ScanContent(sessionID string, fn func(seq uint64, content []byte) bool) error {
	rows, err := t.tx.Query(t.ctx, `SELECT seq, content FROM weft_messages WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	some := false
	for rows.Next() {
		some = true
		var seq int64
		var content []byte
		if err := rows.Scan(&seq, &content); err != nil {
			return t.fail(err)
		}
		if !fn(uint64(seq), content) {
			return nil
		}
	}
	return t.scanned(sessionID, rows, some)
}

// Heads are every message's head: index seq-1. They come from the
// covering index weft_messages_heads (an index-only scan where vacuum
// has marked the pages all-visible), and each row's four numbers are
// read straight from PostgreSQL's binary format: a 100,000-message
// session's heads are that many rows.
func (t *Tx) Heads(sessionID string) ([]model.Head, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT created_at, role, tokens, has_parts FROM weft_messages WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return nil, t.fail(err)
	}
	defer rows.Close()
	raw := true
	for _, fd := range rows.FieldDescriptions() {
		raw = raw && fd.Format == pgx.BinaryFormatCode
	}
	var out []model.Head
	for rows.Next() {
		h, err := scanHead(rows, raw)
		if err != nil {
			return nil, t.fail(err)
		}
		out = append(out, h)
	}
	return out, t.scanned(sessionID, rows, len(out) > 0)
}

// scanHead reads a head's row: created_at (int8), role (int2), tokens
// (int4), has_parts (bool), from their binary encodings when raw.
func scanHead(rows pgx.Rows, raw bool) (model.Head, error) {
	var at int64
	var role int16
	var tokens int32
	var parts bool
	if v := rows.RawValues(); raw && len(v) == 4 && len(v[0]) == 8 && len(v[1]) == 2 && len(v[2]) == 4 && len(v[3]) == 1 {
		at = int64(binary.BigEndian.Uint64(v[0]))
		role = int16(binary.BigEndian.Uint16(v[1]))
		tokens = int32(binary.BigEndian.Uint32(v[2]))
		parts = v[3][0] != 0
	} else if err := rows.Scan(&at, &role, &tokens, &parts); err != nil {
		return model.Head{}, err
	}
	h := model.Head{At: at, Role: uint8(role), Tokens: uint32(max(tokens, 0))}
	if parts {
		h.Flags |= model.HeadHasParts
	}
	return h, nil
}

// TimeAscend calls fn with the messages created at or after from, in
// (created_at, seq) order; fn returns false to stop.
func (t *Tx) TimeAscend(sessionID string, from time.Time, fn func(seq uint64, at int64) bool) error {
	lo, ok := storable(from)
	if !ok {
		lo = math.MinInt64
		if from.After(time.Unix(0, 0)) {
			return t.exists(sessionID)
		}
	}
	rows, err := t.tx.Query(t.ctx, `SELECT seq, created_at FROM weft_messages WHERE session_id = $1 AND created_at >= $2 ORDER BY created_at, seq`, sessionID, lo)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	some := false
	for rows.Next() {
		some = true
		var seq, at int64
		if err := rows.Scan(&seq, &at); err != nil {
			return t.fail(err)
		}
		if !fn(uint64(seq), at) {
			return nil
		}
	}
	return t.scanned(sessionID, rows, some)
}

// TimeSpan is when a session's earliest and latest messages were
// created (Unix ns); ok is false when it has none.
func (t *Tx) TimeSpan(sessionID string) (first, latest int64, ok bool, err error) {
	var lo, hi *int64
	if err := t.tx.QueryRow(t.ctx, `SELECT min(created_at), max(created_at) FROM weft_messages WHERE session_id = $1`, sessionID).Scan(&lo, &hi); err != nil {
		return 0, 0, false, t.fail(err)
	}
	if lo == nil || hi == nil {
		return 0, 0, false, t.exists(sessionID)
	}
	return *lo, *hi, true, nil
}
