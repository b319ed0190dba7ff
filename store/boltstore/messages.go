package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/record"
)

// lastSeq is the highest seq of session num in a msgs bucket (0 when it
// has none).
func (t *Tx) lastSeq(sessionID string, num uint32, b *bolt.Bucket) (uint64, error) {
	k, _ := last(b, num)
	if k == nil {
		return 0, nil
	}
	if len(k) != 8 {
		return 0, t.corruptf(sessionID, "message key", "%x is not 8 bytes", k)
	}
	return be64(k), nil
}

// LastSeq returns the seq of a session's last stored message, 0 if none.
func (t *Tx) LastSeq(sessionID string) (uint64, error) {
	num, err := t.num(sessionID)
	if err != nil {
		return 0, err
	}
	return t.lastSeq(sessionID, num, t.bucket(bktMsgs))
}

// AppendMessages stores messages whose Seq, ID, Digest and Tokens the caller
// has set. Their seqs must continue the stored ones exactly. It writes the
// msgs and bytime records, and the heads of every chunk of 1024 messages
// it completes; it leaves the session record alone. On error nothing has
// been written.
func (t *Tx) AppendMessages(sessionID string, msgs []model.Message) error {
	return t.appendMessages(sessionID, msgs, nil)
}

// appendMessages is AppendMessages, with the records made beforehand
// (EncodeMessages) where enc is not nil.
func (t *Tx) appendMessages(sessionID string, msgs []model.Message, enc *Encoded) error {
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	var bs [4]*bolt.Bucket
	for i, name := range [][]byte{bktMsgs, bktByTime, bktHeads, bktBig} {
		if bs[i], err = t.wbucket(name); err != nil {
			return err
		}
	}
	mb, tb, hb, big := bs[0], bs[1], bs[2], bs[3]
	stored, err := t.lastSeq(sessionID, num, mb)
	if err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}

	// Check everything before writing anything.
	if enc != nil && len(enc.vals) != len(msgs) {
		return fmt.Errorf("session %q: %d messages with %d records", sessionID, len(msgs), len(enc.vals))
	}
	ats := make([]int64, len(msgs))
	var packs []record.Parts
	var sizes []int // each record's length
	if enc == nil {
		packs = make([]record.Parts, len(msgs))
		sizes = make([]int, len(msgs))
	}
	total := 0
	for i := range msgs {
		m := &msgs[i]
		want := stored + uint64(i) + 1
		if m.Seq != want {
			return fmt.Errorf("session %q: message seq %d does not continue the stored messages: expected seq %d", sessionID, m.Seq, want)
		}
		if m.ID != "" && m.ID != model.MessageID(m.Seq) {
			return fmt.Errorf("session %q: message seq %d has ID %q, want %q", sessionID, m.Seq, m.ID, model.MessageID(m.Seq))
		}
		if enc != nil {
			ats[i] = enc.ats[i] // the rest was checked as they were made
			continue
		}
		if !m.Role.Valid() {
			return fmt.Errorf("session %q: message seq %d: role %q is not one of system, user, assistant, tool", sessionID, m.Seq, m.Role)
		}
		at, ok := record.StorableNanos(m.CreatedAt)
		if !ok {
			return fmt.Errorf("session %q: message seq %d: created_at %s is outside the storable range (years 1678-2262)", sessionID, m.Seq, m.CreatedAt)
		}
		ats[i] = at
		packs[i] = record.PackParts(m)
		if sizes[i] = record.MessageLen(m, packs[i]); sizes[i] < bigRecord {
			total += sizes[i]
		}
	}
	// A small session whose messages are in time order has no time
	// index: TimeAscend reads its few messages instead. An append that
	// breaks the order, or makes the session 1024 messages long, writes
	// the index for every message, and from then on the session keeps
	// it.
	indexed := hasRecords(tb, num)
	writeTimes := indexed || stored+uint64(len(msgs)) >= headsPerChunk
	if !writeTimes {
		prev := int64(math.MinInt64)
		if _, v := last(mb, num); v != nil {
			h, err := record.HeadOf(v)
			if err != nil {
				return t.corruptf(sessionID, fmt.Sprintf("message %d", stored), "%v", err)
			}
			prev = h.At
		}
		for _, at := range ats {
			if at < prev {
				writeTimes = true
				break
			}
			prev = at
		}
	}
	if writeTimes && !indexed {
		if err := t.indexTimes(sessionID, num, stored, tb); err != nil {
			return err
		}
	}
	// The heads of the stored messages in the first chunk this append
	// completes, read before anything is written.
	var first []byte
	if pos := stored % headsPerChunk; pos > 0 && uint64(len(msgs)) >= headsPerChunk-pos {
		first = make([]byte, chunkLen)
		err := t.scanMsgs(sessionID, num, stored-pos+1, stored, func(seq uint64, v []byte) error {
			h, err := record.HeadOf(v)
			if err != nil {
				return t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
			}
			record.PutHead(first[(seq-1)%headsPerChunk*record.HeadLen:], h)
			return nil
		})
		if err != nil {
			return err
		}
	}

	// bbolt keeps references to keys and values until commit, so every
	// slice handed to Put is fresh; one arena serves them all.
	const keyLen = numLen + 8 + numLen + 16
	var arena []byte
	if enc == nil {
		arena = make([]byte, 0, total)
	}
	keys := make([]byte, keyLen*len(msgs))
	empty := []byte{}
	for i := range msgs {
		m := &msgs[i]
		var val []byte
		var segs [][]byte // a large record's, written in chunks
		var flags byte    // and its head flags
		switch {
		case enc != nil:
			val = enc.vals[i]
			if len(val) >= bigRecord {
				segs, flags = [][]byte{val}, m.Head().Flags
			}
		case sizes[i] >= bigRecord:
			rec := record.MessageSegments(m, ats[i], packs[i])
			segs, flags = rec[:], m.Head().Flags
		default:
			start := len(arena)
			arena = record.AppendMessage(arena, m, ats[i], packs[i])
			val = arena[start:len(arena):len(arena)]
		}
		k := keys[i*keyLen : i*keyLen+numLen+8 : i*keyLen+numLen+8]
		binary.BigEndian.PutUint32(k, num)
		binary.BigEndian.PutUint64(k[numLen:], m.Seq)
		if segs != nil {
			var err error
			if val, err = putBig(big, num, m.Seq, segs, flags); err != nil {
				return fmt.Errorf("session %q: message seq %d: %w", sessionID, m.Seq, err)
			}
		}
		if err := mb.Put(k, val); err != nil {
			return fmt.Errorf("session %q: message seq %d: %w", sessionID, m.Seq, err)
		}
		if !writeTimes {
			continue
		}
		tk := keys[i*keyLen+numLen+8 : (i+1)*keyLen : (i+1)*keyLen]
		binary.BigEndian.PutUint32(tk, num)
		putTimeKey(tk[numLen:], ats[i], m.Seq)
		if err := tb.Put(tk, empty); err != nil {
			return fmt.Errorf("session %q: message seq %d: %w", sessionID, m.Seq, err)
		}
	}
	// Each chunk completed gets its heads.
	for i := range msgs {
		seq := msgs[i].Seq
		if seq%headsPerChunk != 0 {
			continue
		}
		chunk := seq/headsPerChunk - 1
		val := make([]byte, chunkLen)
		if first != nil && seq-headsPerChunk < stored {
			copy(val, first)
		}
		for j := max(0, i-headsPerChunk+1); j <= i; j++ {
			record.PutHead(val[(msgs[j].Seq-1)%headsPerChunk*record.HeadLen:], msgs[j].Head())
		}
		if err := hb.Put(key(num, put64(chunk)), val); err != nil {
			return fmt.Errorf("session %q: heads chunk %d: %w", sessionID, chunk, err)
		}
	}
	return nil
}

// hasRecords reports whether bucket b holds any record of session num.
func hasRecords(b *bolt.Bucket, num uint32) bool {
	if b == nil {
		return false
	}
	k, _ := b.Cursor().Seek(key(num))
	return len(k) >= numLen && binary.BigEndian.Uint32(k) == num
}

// indexTimes writes the time index records of a session's stored messages
// 1..last, when an append breaks their time order.
func (t *Tx) indexTimes(sessionID string, num uint32, last uint64, tb *bolt.Bucket) error {
	const keyLen = numLen + 16
	keys := make([]byte, 0, keyLen*last)
	empty := []byte{}
	return t.scanMsgs(sessionID, num, 1, last, func(seq uint64, v []byte) error {
		h, err := record.HeadOf(v)
		if err != nil {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
		}
		start := len(keys)
		keys = binary.BigEndian.AppendUint32(keys, num)
		keys = keys[:start+keyLen]
		putTimeKey(keys[start+numLen:], h.At, seq)
		return tb.Put(keys[start:start+keyLen:start+keyLen], empty)
	})
}

// scanMsgs calls fn with the raw records of seqs from..to of session num,
// in seq order, checking the keys: seqs run on without a gap (a damaged
// key is not taken for a message far away).
func (t *Tx) scanMsgs(sessionID string, num uint32, from, to uint64, fn func(seq uint64, v []byte) error) error {
	from = max(from, 1)
	b := t.bucket(bktMsgs)
	if from > to || b == nil {
		return nil
	}
	// A plain cursor loop: this is every read of message bodies.
	want := from
	c := b.Cursor()
	for k, v := c.Seek(key(num, put64(from))); k != nil; k, v = c.Next() {
		if len(k) < numLen || binary.BigEndian.Uint32(k) != num || want > to {
			return nil
		}
		if len(k) != numLen+8 {
			return t.corruptf(sessionID, "message key", "%x is not 8 bytes", k[numLen:])
		}
		seq := binary.BigEndian.Uint64(k[numLen:])
		if seq != want {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", want), "missing (the next stored is %d)", seq)
		}
		if err := fn(seq, v); err != nil {
			return err
		}
		want++
	}
	return nil
}

// Message returns one stored message.
func (t *Tx) Message(sessionID string, seq uint64) (model.Message, error) {
	num, err := t.num(sessionID)
	if err != nil {
		return model.Message{}, err
	}
	var v []byte
	if b := t.bucket(bktMsgs); b != nil {
		v = b.Get(key(num, put64(seq)))
	}
	if v == nil {
		return model.Message{}, fmt.Errorf("session %q: message %d %w", sessionID, seq, ErrNotFound)
	}
	v, err = whole(t.tx, num, seq, v)
	if err != nil {
		return model.Message{}, t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
	}
	m, err := record.DecodeMessage(v, seq)
	if err != nil {
		return model.Message{}, t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
	}
	return m, nil
}

// Messages calls fn with the stored messages whose seq is in [from, to], in
// seq order, stopping at fn's first error, which it returns. fn must not
// write to the session's messages.
func (t *Tx) Messages(sessionID string, from, to uint64, fn func(model.Message) error) error {
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	return t.scanMsgs(sessionID, num, from, to, func(seq uint64, v []byte) error {
		v, err := whole(t.tx, num, seq, v)
		if err != nil {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
		}
		m, err := record.DecodeMessage(v, seq)
		if err != nil {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
		}
		return fn(m)
	})
}

// ScanContent calls fn with every stored message's content in seq order,
// without decoding the rest of the message and without copying: content
// points into the database's memory map and is valid only during the call.
// fn returns false to stop.
func (t *Tx) ScanContent(sessionID string, fn func(seq uint64, content []byte) bool) error {
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	b := t.bucket(bktMsgs)
	if b == nil {
		return nil
	}
	// scanMsgs's loop, written out: a search runs it over every message.
	want := uint64(1)
	c := b.Cursor()
	for k, v := c.Seek(key(num, put64(1))); k != nil; k, v = c.Next() {
		if len(k) < numLen || binary.BigEndian.Uint32(k) != num {
			return nil
		}
		if len(k) != numLen+8 {
			return t.corruptf(sessionID, "message key", "%x is not 8 bytes", k[numLen:])
		}
		if seq := binary.BigEndian.Uint64(k[numLen:]); seq != want {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", want), "missing (the next stored is %d)", seq)
		}
		var content []byte
		if record.IsStub(v) {
			// Joined from its chunks: a copy, not in the map.
			if v, err = whole(t.tx, num, want, v); err == nil {
				content, err = record.ContentOf(v)
			}
		} else if content, err = record.ContentOf(v); err == nil && !t.inMap(content) {
			err = errors.New("its content lies outside the file")
		}
		if err != nil {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", want), "%v", err)
		}
		if !fn(want, content) {
			return nil
		}
		want++
	}
	return nil
}

// inMap reports whether b, a slice of a record, does not reach past the
// file's pages as bbolt maps them. ScanContent hands out such slices to
// callers that read them elsewhere (a search on several goroutines),
// where a fault is not caught: a damaged record (an offset or a length
// gone wrong, by at most 32 bits' worth) must not point past the file.
// A slice wholly elsewhere is a copy on the heap (a write transaction's
// own records; bbolt copies an unaligned inline bucket).
//
// It compares addresses with bbolt's memory map (DB.Info().Data and
// Tx.Size), which rests on how bbolt hands out values: a read
// transaction's are slices of the map. That holds for the pinned bbolt
// (v1.5.0); were an upgrade to copy values out instead, every slice
// would be "elsewhere" and this check would pass everything, silently.
// TestReadSlicesAreInTheMap holds the assumption against the version
// go.mod pins, so an upgrade that breaks it fails the tests.
func (t *Tx) inMap(b []byte) bool {
	if len(b) == 0 || t.tx == nil {
		return true
	}
	if t.mapEnd == 0 {
		t.mapStart = t.tx.DB().Info().Data
		t.mapEnd = t.mapStart + uintptr(t.tx.Size())
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	switch {
	case p >= t.mapStart && p < t.mapEnd:
		return uintptr(len(b)) <= t.mapEnd-p
	case p >= t.mapEnd && uint64(p-t.mapEnd) < 1<<34:
		return false
	}
	return true
}

// Heads returns the heads of all of a session's messages: index seq-1.
// Complete chunks come from the heads records, the rest from the messages'
// own records.
func (t *Tx) Heads(sessionID string) ([]model.Head, error) {
	num, err := t.num(sessionID)
	if err != nil {
		return nil, err
	}
	last, err := t.lastSeq(sessionID, num, t.bucket(bktMsgs))
	if err != nil || last == 0 {
		return nil, err
	}
	full := last / headsPerChunk
	// Grown as records are read, so a damaged last key cannot ask for an
	// absurd allocation.
	out := make([]model.Head, 0, min(last, 1<<20))
	err = scan(t.bucket(bktHeads), num, nil, func(k, v []byte) (bool, error) {
		want := uint64(len(out)) / headsPerChunk
		switch {
		case len(k) != 8 || be64(k) != want:
			return false, t.corruptf(sessionID, "heads index", "chunk key %x where chunk %d belongs", k, want)
		case want >= full:
			return false, t.corruptf(sessionID, "heads index", "chunk %d, but %d messages fill only %d chunks", want, last, full)
		case len(v) != chunkLen:
			return false, t.corruptf(sessionID, fmt.Sprintf("heads chunk %d", want), "%d bytes, not %d", len(v), chunkLen)
		}
		for i := 0; i < chunkLen; i += record.HeadLen {
			out = append(out, record.GetHead(v[i:i+record.HeadLen]))
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if uint64(len(out)) != full*headsPerChunk {
		return nil, t.corruptf(sessionID, "heads index", "%d chunks for %d messages, not %d", len(out)/headsPerChunk, last, full)
	}
	err = t.scanMsgs(sessionID, num, full*headsPerChunk+1, last, func(seq uint64, v []byte) error {
		if seq != uint64(len(out))+1 {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", len(out)+1), "missing (the next stored is %d)", seq)
		}
		h, err := record.HeadOf(v)
		if err != nil {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
		}
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TimeAscend calls fn with the stored messages created at or after from, in
// (created_at, seq) order; fn returns false to stop. at is Unix nanoseconds.
// A session without a time index (fewer than 1024 messages, in time
// order) has its messages read instead.
func (t *Tx) TimeAscend(sessionID string, from time.Time, fn func(seq uint64, at int64) bool) error {
	num, err := t.num(sessionID)
	if err != nil {
		return err
	}
	start, ok := record.StorableNanos(from)
	switch {
	case ok:
	case from.Before(time.Unix(0, 0)):
		start = math.MinInt64 // before every time that can be stored
	default:
		return nil // after them all
	}
	tb := t.bucket(bktByTime)
	if !hasRecords(tb, num) {
		return t.timeAscendSorted(sessionID, num, start, fn)
	}
	return scan(tb, num, timeKey(start, 0), func(k, _ []byte) (bool, error) {
		at, seq, ok := parseTimeKey(k)
		if !ok {
			return false, t.corruptf(sessionID, "time index", "key %x is not 16 bytes", k)
		}
		return fn(seq, at), nil
	})
}

// timeAscendSorted is TimeAscend over a session without a time index:
// its messages are in time order, so seq order is time order.
func (t *Tx) timeAscendSorted(sessionID string, num uint32, start int64, fn func(seq uint64, at int64) bool) error {
	err := t.scanMsgs(sessionID, num, 1, math.MaxUint64, func(seq uint64, v []byte) error {
		h, err := record.HeadOf(v)
		if err != nil {
			return t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
		}
		if h.At >= start && !fn(seq, h.At) {
			return errStop
		}
		return nil
	})
	if err == errStop {
		return nil
	}
	return err
}

// TimeSpan returns when a session's earliest and latest stored messages
// were created (Unix nanoseconds), from two records: the ends of its time
// index, or, for a session without one (its messages are in time
// order), its first and last messages. ok is false when it has none.
func (t *Tx) TimeSpan(sessionID string) (first, latest int64, ok bool, err error) {
	num, err := t.num(sessionID)
	if err != nil {
		return 0, 0, false, err
	}
	if tb := t.bucket(bktByTime); hasRecords(tb, num) {
		var lo, hi int64
		var good bool
		err = scan(tb, num, nil, func(k, _ []byte) (bool, error) {
			lo, _, good = parseTimeKey(k)
			return false, nil
		})
		if k, _ := last(tb, num); err == nil && good {
			hi, _, good = parseTimeKey(k)
		}
		if err == nil && !good {
			err = t.corruptf(sessionID, "time index", "a key at its ends is not 16 bytes")
		}
		return lo, hi, err == nil, err
	}
	n, err := t.lastSeq(sessionID, num, t.bucket(bktMsgs))
	if err != nil || n == 0 {
		return 0, 0, false, err
	}
	var at []int64
	for _, seq := range []uint64{1, n} {
		err = t.scanMsgs(sessionID, num, seq, seq, func(seq uint64, v []byte) error {
			h, err := record.HeadOf(v)
			if err != nil {
				return t.corruptf(sessionID, fmt.Sprintf("message %d", seq), "%v", err)
			}
			at = append(at, h.At)
			return nil
		})
		if err != nil {
			return 0, 0, false, err
		}
	}
	if len(at) != 2 {
		return 0, 0, false, t.corruptf(sessionID, "messages", "message 1 or %d is missing", n)
	}
	return at[0], at[1], true, nil
}
