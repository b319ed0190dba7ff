package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"weft/store/record"
)

// Large message records (schema 4).
//
// bbolt writes a leaf page whole whenever a key on it changes, and a
// leaf holds two to four records however large they are: a message
// appended after a few large ones rewrote them all (three 1 MB tool
// outputs made each of the next small appends write 3 MB), and a large
// one appended after others rewrote them too. So a record of bigRecord
// bytes or more is kept in chunks in the big bucket, written once, and
// the msgs bucket holds a stub in its place: the record's header and
// tokens (so record.HeadOf reads it as it reads any record), with
// its flag of a stub set, then the whole record's length and its head flags
// (record.StubOf).
//
//	big   num + seq (8) + chunk (4) -> up to bigChunk bytes of the record
//
// Appends touch the last leaf of each bucket only, and that leaf holds
// at most a few chunks. A record is read whole by joining its chunks
// (whole), a copy.
const (
	bigRecord = 16 << 10
	// bigChunk fills four of bbolt's 4 KB pages exactly, with its page
	// header (16 bytes), its element (16) and its key (16): bbolt
	// writes a page a multiple of 4 KB long, and 16 KB chunks took five
	// pages each. Readers join chunks of any size.
	bigChunk = 4<<12 - 16 - 16 - (numLen + 12)
)

// bktBig holds the chunks of large records.
var bktBig = []byte("big")

// putBig stores a record of message seq of session num in chunks in
// big, and returns the stub msgs keeps for it. The record is the
// concatenation of segs (the first holding its header and tokens); its
// head flags are headFlags. bbolt keeps references to keys and values
// until commit and only reads them: a chunk within one segment is a
// slice of it, so a large message's content (record.MessageSegments) reaches
// bbolt's pages without a copy on the way; a chunk across segments is
// joined in a fresh slice, and the keys are fresh.
func putBig(big *bolt.Bucket, num uint32, seq uint64, segs [][]byte, headFlags byte) ([]byte, error) {
	length := 0
	for _, s := range segs {
		length += len(s)
	}
	n := (length + bigChunk - 1) / bigChunk
	keys := make([]byte, n*(numLen+12))
	seg, off := 0, 0 // where the next chunk starts: segs[seg][off:]
	for i := range n {
		k := keys[i*(numLen+12) : (i+1)*(numLen+12) : (i+1)*(numLen+12)]
		binary.BigEndian.PutUint32(k, num)
		binary.BigEndian.PutUint64(k[numLen:], seq)
		binary.BigEndian.PutUint32(k[numLen+8:], uint32(i))
		size := min(bigChunk, length-i*bigChunk)
		for off == len(segs[seg]) {
			seg, off = seg+1, 0
		}
		var chunk []byte
		if rest := segs[seg][off:]; len(rest) >= size {
			chunk = rest[:size:size]
			off += size
		} else {
			chunk = make([]byte, 0, size)
			for len(chunk) < size {
				for off == len(segs[seg]) {
					seg, off = seg+1, 0
				}
				take := min(size-len(chunk), len(segs[seg])-off)
				chunk = append(chunk, segs[seg][off:off+take]...)
				off += take
			}
		}
		if err := big.Put(k, chunk); err != nil {
			return nil, err
		}
	}
	return record.StubOf(segs[0], length, headFlags), nil
}

// maxRecord bounds what a stub may claim, so a damaged one cannot ask
// for an absurd allocation.
const maxRecord = 1 << 34

// whole is record v of message seq of session num in full: v itself, or,
// for a stub, its chunks from the big bucket joined (a copy, on the
// heap).
func whole(tx *bolt.Tx, num uint32, seq uint64, v []byte) ([]byte, error) {
	if !record.IsStub(v) {
		return v, nil
	}
	length, _, err := record.StubInfo(v)
	if err != nil {
		return nil, err
	}
	if length > maxRecord {
		return nil, fmt.Errorf("a large record's stub says %d bytes", length)
	}
	var big *bolt.Bucket
	if tx != nil {
		big = tx.Bucket(bktBig)
	}
	if big == nil {
		return nil, errors.New("its record is kept in the big bucket, which the file does not have")
	}
	prefix := key(num, put64(seq))
	out := make([]byte, 0, length)
	want := uint32(0)
	c := big.Cursor()
	for k, chunk := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, chunk = c.Next() {
		if len(k) != len(prefix)+4 || binary.BigEndian.Uint32(k[len(prefix):]) != want {
			return nil, fmt.Errorf("chunk %d of its record is missing", want)
		}
		if uint64(len(out)+len(chunk)) > length {
			return nil, fmt.Errorf("its record's chunks hold more than the %d bytes its stub says", length)
		}
		out = append(out, chunk...)
		want++
	}
	if uint64(len(out)) != length {
		return nil, fmt.Errorf("its record's chunks hold %d of the %d bytes its stub says", len(out), length)
	}
	return out, nil
}
