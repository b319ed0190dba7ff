package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"weft/model"
)

// lastSeq is the highest seq in a msgs bucket (0 when empty).
func lastSeq(sessionID string, b *bolt.Bucket) (uint64, error) {
	k, _ := b.Cursor().Last()
	if k == nil {
		return 0, nil
	}
	if len(k) != 8 {
		return 0, fmt.Errorf("session %q: corrupt message key %x", sessionID, k)
	}
	return be64(k), nil
}

// LastSeq returns the seq of a session's last stored message, 0 if none.
func (t *Tx) LastSeq(sessionID string) (uint64, error) {
	b, err := t.sub(sessionID, bktMsgs)
	if err != nil {
		return 0, err
	}
	return lastSeq(sessionID, b)
}

// AppendMessages stores messages whose Seq, ID, Digest and Tokens the caller
// has set. Their seqs must continue the stored ones exactly. It writes the
// msgs, bytime and heads buckets and leaves the session record alone. On
// error nothing has been written.
func (t *Tx) AppendMessages(sessionID string, msgs []model.Message) error {
	th, err := t.thread(sessionID)
	if err != nil {
		return err
	}
	var bs [3]*bolt.Bucket
	for i, name := range [][]byte{bktMsgs, bktByTime, bktHeads} {
		if bs[i] = th.Bucket(name); bs[i] == nil {
			return fmt.Errorf("session %q: %s bucket is missing", sessionID, name)
		}
	}
	mb, tb, hb := bs[0], bs[1], bs[2]
	last, err := lastSeq(sessionID, mb)
	if err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}

	// Check everything before writing anything.
	ats := make([]int64, len(msgs))
	total := 0
	for i := range msgs {
		m := &msgs[i]
		want := last + uint64(i) + 1
		if m.Seq != want {
			return fmt.Errorf("session %q: message seq %d does not continue the stored messages: expected seq %d", sessionID, m.Seq, want)
		}
		if m.ID != "" && m.ID != model.MessageID(m.Seq) {
			return fmt.Errorf("session %q: message seq %d has ID %q, want %q", sessionID, m.Seq, m.ID, model.MessageID(m.Seq))
		}
		if !m.Role.Valid() {
			return fmt.Errorf("session %q: message seq %d: role %q is not one of system, user, assistant, tool", sessionID, m.Seq, m.Role)
		}
		at, ok := storableNanos(m.CreatedAt)
		if !ok {
			return fmt.Errorf("session %q: message seq %d: created_at %s is outside the storable range (years 1678-2262)", sessionID, m.Seq, m.CreatedAt)
		}
		ats[i] = at
		total += encodedLen(m)
	}
	pos := last % headsPerChunk // heads already in the chunk the first new head goes to
	var partial []byte          // the first chunk touched, when it already holds heads
	if pos > 0 {
		old := hb.Get(put64(last / headsPerChunk))
		if uint64(len(old)) != pos*headLen {
			return fmt.Errorf("session %q: heads index chunk %d has %d bytes, want %d for %d messages: corrupt", sessionID, last/headsPerChunk, len(old), pos*headLen, last)
		}
		partial = make([]byte, (int(pos)+min(headsPerChunk-int(pos), len(msgs)))*headLen)
		copy(partial, old)
	}

	// bbolt keeps references to keys and values until commit, so every
	// slice handed to Put is fresh; one arena serves them all.
	arena := make([]byte, 0, total)
	keys := make([]byte, 24*len(msgs))
	mb.FillPercent, tb.FillPercent, hb.FillPercent = 1.0, 1.0, 1.0
	empty := []byte{}
	for i := range msgs {
		m := &msgs[i]
		start := len(arena)
		arena = encodeMessage(arena, m, ats[i])
		k := keys[i*24 : i*24+8 : i*24+8]
		binary.BigEndian.PutUint64(k, m.Seq)
		if err := mb.Put(k, arena[start:len(arena):len(arena)]); err != nil {
			return fmt.Errorf("session %q: message seq %d: %w", sessionID, m.Seq, err)
		}
		tk := keys[i*24+8 : i*24+24 : i*24+24]
		putTimeKey(tk, ats[i], m.Seq)
		if err := tb.Put(tk, empty); err != nil {
			return fmt.Errorf("session %q: message seq %d: %w", sessionID, m.Seq, err)
		}
	}
	for i := 0; i < len(msgs); {
		seq := msgs[i].Seq
		chunk := (seq - 1) / headsPerChunk
		at := int((seq - 1) % headsPerChunk)
		n := min(headsPerChunk-at, len(msgs)-i)
		val := partial
		if at == 0 {
			val = make([]byte, n*headLen)
		}
		for j := range n {
			putHead(val[(at+j)*headLen:], msgs[i+j].Head())
		}
		if err := hb.Put(put64(chunk), val); err != nil {
			return fmt.Errorf("session %q: heads chunk %d: %w", sessionID, chunk, err)
		}
		i += n
	}
	return nil
}

// Message returns one stored message.
func (t *Tx) Message(sessionID string, seq uint64) (model.Message, error) {
	b, err := t.sub(sessionID, bktMsgs)
	if err != nil {
		return model.Message{}, err
	}
	v := b.Get(put64(seq))
	if v == nil {
		return model.Message{}, fmt.Errorf("session %q: message %d %w", sessionID, seq, ErrNotFound)
	}
	m, err := decodeMessage(v, seq)
	if err != nil {
		return model.Message{}, corrupt(sessionID, seq, err)
	}
	return m, nil
}

// Messages calls fn with the stored messages whose seq is in [from, to], in
// seq order, stopping at fn's first error, which it returns. fn must not
// write to the session's messages.
func (t *Tx) Messages(sessionID string, from, to uint64, fn func(model.Message) error) error {
	b, err := t.sub(sessionID, bktMsgs)
	if err != nil {
		return err
	}
	if from > to {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(put64(from)); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return fmt.Errorf("session %q: corrupt message key %x", sessionID, k)
		}
		seq := be64(k)
		if seq > to {
			break
		}
		m, err := decodeMessage(v, seq)
		if err != nil {
			return corrupt(sessionID, seq, err)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// ScanContent calls fn with every stored message's content in seq order,
// without decoding the rest of the message and without copying: content
// points into the database's memory map and is valid only during the call.
// fn returns false to stop.
func (t *Tx) ScanContent(sessionID string, fn func(seq uint64, content []byte) bool) error {
	b, err := t.sub(sessionID, bktMsgs)
	if err != nil {
		return err
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return fmt.Errorf("session %q: corrupt message key %x", sessionID, k)
		}
		seq := be64(k)
		content, err := contentOf(v)
		if err != nil {
			return corrupt(sessionID, seq, err)
		}
		if !fn(seq, content) {
			break
		}
	}
	return nil
}

// Heads returns the heads of all of a session's messages: index seq-1.
func (t *Tx) Heads(sessionID string) ([]model.Head, error) {
	th, err := t.thread(sessionID)
	if err != nil {
		return nil, err
	}
	mb, hb := th.Bucket(bktMsgs), th.Bucket(bktHeads)
	if mb == nil || hb == nil {
		return nil, fmt.Errorf("session %q: msgs or heads bucket is missing", sessionID)
	}
	last, err := lastSeq(sessionID, mb)
	if err != nil || last == 0 {
		return nil, err
	}
	// Check the count against the last chunk before allocating, so a
	// corrupt key cannot ask for an absurd slice.
	c := hb.Cursor()
	lk, lv := c.Last()
	if len(lk) != 8 || len(lv)%headLen != 0 || len(lv) > chunkLen || be64(lk) > last/headsPerChunk ||
		be64(lk)*headsPerChunk+uint64(len(lv)/headLen) != last {
		return nil, fmt.Errorf("session %q: heads index ends at chunk %x with %d bytes, which does not fit %d messages: corrupt", sessionID, lk, len(lv), last)
	}
	out := make([]model.Head, last)
	n := 0
	want := uint64(0)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || be64(k) != want {
			return nil, fmt.Errorf("session %q: heads index: chunk key %x where chunk %d belongs: corrupt", sessionID, k, want)
		}
		if n%headsPerChunk != 0 || len(v) == 0 || len(v) > chunkLen || len(v)%headLen != 0 || n+len(v)/headLen > len(out) {
			return nil, fmt.Errorf("session %q: heads index: chunk %d (seqs from %d) has %d bytes for %d messages: corrupt", sessionID, want, want*headsPerChunk+1, len(v), last)
		}
		dst := out[n : n+len(v)/headLen]
		for i := range dst {
			dst[i] = getHead(v[i*headLen : i*headLen+headLen])
		}
		n += len(dst)
		want++
	}
	if n != len(out) {
		return nil, fmt.Errorf("session %q: heads index has %d entries for %d messages: corrupt", sessionID, n, last)
	}
	return out, nil
}

// TimeAscend calls fn with the stored messages created at or after from, in
// (created_at, seq) order; fn returns false to stop. at is Unix nanoseconds.
func (t *Tx) TimeAscend(sessionID string, from time.Time, fn func(seq uint64, at int64) bool) error {
	b, err := t.sub(sessionID, bktByTime)
	if err != nil {
		return err
	}
	if from.After(maxTime) {
		return nil
	}
	start := int64(math.MinInt64)
	if !from.Before(minTime) {
		start = from.UnixNano()
	}
	c := b.Cursor()
	for k, _ := c.Seek(timeKey(start, 0)); k != nil; k, _ = c.Next() {
		at, seq, ok := parseTimeKey(k)
		if !ok {
			return fmt.Errorf("session %q: corrupt bytime key %x", sessionID, k)
		}
		if !fn(seq, at) {
			break
		}
	}
	return nil
}
