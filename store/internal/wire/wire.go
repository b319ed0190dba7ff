// Package wire is the store's compact encoding: uvarints, varints,
// length-prefixed fields and times, written with Append functions and
// read back with a Reader whose first error sticks. Message and session
// records (store/record) are made of it.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// ErrShort is a record that ends too soon.
var ErrShort = errors.New("truncated")

// AppendField appends s as a field: its length as a uvarint, then its
// bytes.
func AppendField(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendTime appends a time: Unix seconds (varint) and nanoseconds
// (uvarint), read back in UTC.
func AppendTime(dst []byte, t time.Time) []byte {
	dst = binary.AppendVarint(dst, t.Unix())
	return binary.AppendUvarint(dst, uint64(t.Nanosecond()))
}

// AppendDelta appends t as the difference of its seconds and of its
// nanoseconds from base (two varints, two bytes when they are equal).
func AppendDelta(dst []byte, t, base time.Time) []byte {
	dst = binary.AppendVarint(dst, t.Unix()-base.Unix())
	return binary.AppendVarint(dst, int64(t.Nanosecond()-base.Nanosecond()))
}

// Reader walks a record; the first error sticks.
type Reader struct {
	B   []byte
	Err error
}

// Uvarint reads a uvarint.
func (r *Reader) Uvarint() uint64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Err = ErrShort
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Varint reads a varint.
func (r *Reader) Varint() int64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Err = ErrShort
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Field returns the next length-prefixed field, pointing into the record.
func (r *Reader) Field() []byte {
	n := r.Uvarint()
	if r.Err != nil {
		return nil
	}
	if n > uint64(len(r.B)) {
		r.Err = ErrShort
		return nil
	}
	f := r.B[:n:n]
	r.B = r.B[n:]
	return f
}

// Delta reads a time AppendDelta wrote from base.
func (r *Reader) Delta(base time.Time) time.Time {
	sec := r.Varint()
	nsec := r.Varint()
	if r.Err == nil && (nsec <= -1e9 || nsec >= 1e9) {
		r.Err = fmt.Errorf("%d nanoseconds", nsec)
	}
	if r.Err != nil {
		return time.Time{}
	}
	return time.Unix(base.Unix()+sec, int64(base.Nanosecond())+nsec).UTC()
}

// Time reads a time AppendTime wrote.
func (r *Reader) Time() time.Time {
	sec := r.Varint()
	nsec := r.Uvarint()
	if r.Err == nil && nsec >= 1e9 {
		r.Err = fmt.Errorf("%d nanoseconds", nsec)
	}
	if r.Err != nil {
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// Count reads a count of items each at least min bytes long, refusing
// one the rest of the record cannot hold, so a damaged count cannot ask
// for an absurd allocation.
func (r *Reader) Count(min int) int {
	n := r.Uvarint()
	if r.Err == nil && n > uint64(len(r.B)/min) {
		r.Err = fmt.Errorf("claims %d items in %d bytes", n, len(r.B))
	}
	if r.Err != nil {
		return 0
	}
	return int(n)
}
