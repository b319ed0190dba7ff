package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"weft/model"
)

// Session record, format 1 (the value in the sessions bucket; the key is
// the session's ID):
//
//	byte 0     format (1)
//	bytes 1-4  the session's number, uint32 big-endian
//	field      title
//	time       created_at
//	delta      updated_at, from created_at
//	uvarint    message_count
//	varint     tokens
//	uvarint    op_count
//	uvarint    version
//	uvarint n, n fields   active tags
//	field      source
//	field      interface
//	field      room
//	uvarint n, then n changes: uvarint version, delta at (from updated_at),
//	           field author, field what
//
// Format 2 is format 1 and then a field: the session's memory policy, as
// JSON. A session without a policy keeps format 1, which older wefts
// read. Format 3, a fork's, is format 2 (the policy's field empty for
// none) and then where it was forked from: field source session, field
// item, uvarint index.
//
// A field is a uvarint length and that many bytes; a time is the Unix
// seconds (varint) and nanoseconds (uvarint), read back in UTC; a delta is
// a time as the difference of its seconds and of its nanoseconds from
// another (two varints, two bytes when they are equal). JSON of
// model.Session was the record in schema 1: about three times the size,
// which for a small imported conversation was more than its messages.
// TestSessionRecordKeepsEveryField fails when model.Session gains a field
// this format does not keep.
const (
	recFormat1   = 1
	recFormat2   = 2
	recFormat3   = 3
	recHeaderLen = 5
)

// appendRecord appends the record of session s, numbered num.
func appendRecord(dst []byte, num uint32, s *model.Session) []byte {
	format := byte(recFormat1)
	switch {
	case s.ForkOf != nil:
		format = recFormat3
	case s.Memory != nil:
		format = recFormat2
	}
	dst = append(dst, format)
	dst = binary.BigEndian.AppendUint32(dst, num)
	dst = appendField(dst, s.Title)
	dst = appendTime(dst, s.CreatedAt)
	dst = appendDelta(dst, s.UpdatedAt, s.CreatedAt)
	dst = binary.AppendUvarint(dst, uint64(s.MessageCount))
	dst = binary.AppendVarint(dst, int64(s.Tokens))
	dst = binary.AppendUvarint(dst, uint64(s.OpCount))
	dst = binary.AppendUvarint(dst, s.Version)
	dst = binary.AppendUvarint(dst, uint64(len(s.ActiveTags)))
	for _, tag := range s.ActiveTags {
		dst = appendField(dst, tag)
	}
	dst = appendField(dst, s.Source)
	dst = appendField(dst, s.Interface)
	dst = appendField(dst, s.Room)
	dst = binary.AppendUvarint(dst, uint64(len(s.Changes)))
	for _, c := range s.Changes {
		dst = binary.AppendUvarint(dst, c.Version)
		dst = appendDelta(dst, c.At, s.UpdatedAt)
		dst = appendField(dst, c.Author)
		dst = appendField(dst, c.What)
	}
	if s.Memory != nil {
		policy, _ := json.Marshal(s.Memory) // plain data: it cannot fail
		dst = appendField(dst, string(policy))
	} else if format == recFormat3 {
		dst = appendField(dst, "")
	}
	if format == recFormat3 {
		dst = appendField(dst, s.ForkOf.SessionID)
		dst = appendField(dst, string(s.ForkOf.At))
		dst = binary.AppendUvarint(dst, uint64(s.ForkOf.Index))
	}
	return dst
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = binary.AppendVarint(dst, t.Unix())
	return binary.AppendUvarint(dst, uint64(t.Nanosecond()))
}

func appendDelta(dst []byte, t, base time.Time) []byte {
	dst = binary.AppendVarint(dst, t.Unix()-base.Unix())
	return binary.AppendVarint(dst, int64(t.Nanosecond()-base.Nanosecond()))
}

func (r *reader) delta(base time.Time) time.Time {
	sec := r.varint()
	nsec := r.varint()
	if r.err == nil && (nsec <= -1e9 || nsec >= 1e9) {
		r.err = fmt.Errorf("%d nanoseconds", nsec)
	}
	if r.err != nil {
		return time.Time{}
	}
	return time.Unix(base.Unix()+sec, int64(base.Nanosecond())+nsec).UTC()
}

func (r *reader) time() time.Time {
	sec := r.varint()
	nsec := r.uvarint()
	if r.err == nil && nsec >= 1e9 {
		r.err = fmt.Errorf("%d nanoseconds", nsec)
	}
	if r.err != nil {
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// count reads a count of items each at least min bytes long, refusing one
// the rest of the record cannot hold, so a damaged count cannot ask for an
// absurd allocation.
func (r *reader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = fmt.Errorf("claims %d items in %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// recordNum returns the session number a record starts with.
func recordNum(v []byte) (uint32, error) {
	if len(v) < recHeaderLen {
		return 0, errShort
	}
	if v[0] != recFormat1 && v[0] != recFormat2 && v[0] != recFormat3 {
		return 0, fmt.Errorf("unknown format %d", v[0])
	}
	n := binary.BigEndian.Uint32(v[1:])
	if n == 0 {
		return 0, errors.New("session number 0")
	}
	return n, nil
}

// decodeRecord decodes the record of session id.
func decodeRecord(id string, v []byte) (model.Session, uint32, error) {
	num, err := recordNum(v)
	if err != nil {
		return model.Session{}, 0, err
	}
	r := reader{b: v[recHeaderLen:]}
	s := model.Session{ID: id}
	s.Title = string(r.field())
	s.CreatedAt = r.time()
	s.UpdatedAt = r.delta(s.CreatedAt)
	s.MessageCount = int(r.uvarint())
	s.Tokens = int(r.varint())
	s.OpCount = int(r.uvarint())
	s.Version = r.uvarint()
	if n := r.count(1); n > 0 {
		s.ActiveTags = make([]string, n)
		for i := range s.ActiveTags {
			s.ActiveTags[i] = string(r.field())
		}
	}
	s.Source = string(r.field())
	s.Interface = string(r.field())
	s.Room = string(r.field())
	if n := r.count(4); n > 0 {
		s.Changes = make([]model.Change, n)
		for i := range s.Changes {
			c := &s.Changes[i]
			c.Version = r.uvarint()
			c.At = r.delta(s.UpdatedAt)
			c.Author = string(r.field())
			c.What = string(r.field())
		}
	}
	if (v[0] == recFormat2 || v[0] == recFormat3) && r.err == nil {
		if policy := r.field(); len(policy) > 0 || v[0] == recFormat2 {
			var p model.MemoryPolicy
			if err := json.Unmarshal(policy, &p); err != nil && r.err == nil {
				r.err = fmt.Errorf("memory policy: %w", err)
			}
			s.Memory = &p
		}
	}
	if v[0] == recFormat3 && r.err == nil {
		s.ForkOf = &model.Fork{SessionID: string(r.field()), At: model.ItemID(r.field())}
		s.ForkOf.Index = int(r.uvarint())
	}
	if r.err != nil {
		return model.Session{}, 0, r.err
	}
	if len(r.b) != 0 {
		return model.Session{}, 0, fmt.Errorf("%d stray bytes at the end", len(r.b))
	}
	return s, num, nil
}
