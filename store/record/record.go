// Package record is the bolt file's records in their compact binary
// forms: a session's (everything known of a session without reading its
// messages, its session number first, in this file) and a message's, its
// head and the stub of a large one (message.go).
package record

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"weft/model"
	"weft/store/internal/wire"
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
	Format1   = 1
	Format2   = 2
	Format3   = 3
	HeaderLen = 5
)

// Append appends the record of session s, numbered num.
func Append(dst []byte, num uint32, s *model.Session) []byte {
	format := byte(Format1)
	switch {
	case s.ForkOf != nil:
		format = Format3
	case s.Memory != nil:
		format = Format2
	}
	dst = append(dst, format)
	dst = binary.BigEndian.AppendUint32(dst, num)
	dst = wire.AppendField(dst, s.Title)
	dst = wire.AppendTime(dst, s.CreatedAt)
	dst = wire.AppendDelta(dst, s.UpdatedAt, s.CreatedAt)
	dst = binary.AppendUvarint(dst, uint64(s.MessageCount))
	dst = binary.AppendVarint(dst, int64(s.Tokens))
	dst = binary.AppendUvarint(dst, uint64(s.OpCount))
	dst = binary.AppendUvarint(dst, s.Version)
	dst = binary.AppendUvarint(dst, uint64(len(s.ActiveTags)))
	for _, tag := range s.ActiveTags {
		dst = wire.AppendField(dst, tag)
	}
	dst = wire.AppendField(dst, s.Source)
	dst = wire.AppendField(dst, s.Interface)
	dst = wire.AppendField(dst, s.Room)
	dst = binary.AppendUvarint(dst, uint64(len(s.Changes)))
	for _, c := range s.Changes {
		dst = binary.AppendUvarint(dst, c.Version)
		dst = wire.AppendDelta(dst, c.At, s.UpdatedAt)
		dst = wire.AppendField(dst, c.Author)
		dst = wire.AppendField(dst, c.What)
	}
	if s.Memory != nil {
		policy, _ := json.Marshal(s.Memory) // plain data: it cannot fail
		dst = wire.AppendField(dst, string(policy))
	} else if format == Format3 {
		dst = wire.AppendField(dst, "")
	}
	if format == Format3 {
		dst = wire.AppendField(dst, s.ForkOf.SessionID)
		dst = wire.AppendField(dst, string(s.ForkOf.At))
		dst = binary.AppendUvarint(dst, uint64(s.ForkOf.Index))
	}
	return dst
}

// Num returns the session number a record starts with.
func Num(v []byte) (uint32, error) {
	if len(v) < HeaderLen {
		return 0, wire.ErrShort
	}
	if v[0] != Format1 && v[0] != Format2 && v[0] != Format3 {
		return 0, fmt.Errorf("unknown format %d", v[0])
	}
	n := binary.BigEndian.Uint32(v[1:])
	if n == 0 {
		return 0, errors.New("session number 0")
	}
	return n, nil
}

// Decode decodes the record of session id.
func Decode(id string, v []byte) (model.Session, uint32, error) {
	num, err := Num(v)
	if err != nil {
		return model.Session{}, 0, err
	}
	r := wire.Reader{B: v[HeaderLen:]}
	s := model.Session{ID: id}
	s.Title = string(r.Field())
	s.CreatedAt = r.Time()
	s.UpdatedAt = r.Delta(s.CreatedAt)
	s.MessageCount = int(r.Uvarint())
	s.Tokens = int(r.Varint())
	s.OpCount = int(r.Uvarint())
	s.Version = r.Uvarint()
	if n := r.Count(1); n > 0 {
		s.ActiveTags = make([]string, n)
		for i := range s.ActiveTags {
			s.ActiveTags[i] = string(r.Field())
		}
	}
	s.Source = string(r.Field())
	s.Interface = string(r.Field())
	s.Room = string(r.Field())
	if n := r.Count(4); n > 0 {
		s.Changes = make([]model.Change, n)
		for i := range s.Changes {
			c := &s.Changes[i]
			c.Version = r.Uvarint()
			c.At = r.Delta(s.UpdatedAt)
			c.Author = string(r.Field())
			c.What = string(r.Field())
		}
	}
	if (v[0] == Format2 || v[0] == Format3) && r.Err == nil {
		if policy := r.Field(); len(policy) > 0 || v[0] == Format2 {
			var p model.MemoryPolicy
			if err := json.Unmarshal(policy, &p); err != nil && r.Err == nil {
				r.Err = fmt.Errorf("memory policy: %w", err)
			}
			s.Memory = &p
		}
	}
	if v[0] == Format3 && r.Err == nil {
		s.ForkOf = &model.Fork{SessionID: string(r.Field()), At: model.ItemID(r.Field())}
		s.ForkOf.Index = int(r.Uvarint())
	}
	if r.Err != nil {
		return model.Session{}, 0, r.Err
	}
	if len(r.B) != 0 {
		return model.Session{}, 0, fmt.Errorf("%d stray bytes at the end", len(r.B))
	}
	return s, num, nil
}
