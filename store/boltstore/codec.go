package boltstore

import (
	"encoding/binary"

	"weft/store/record"
)

// Head records (record.HeadLen bytes each), 1024 to a chunk.
const (
	headsPerChunk = 1024
	chunkLen      = record.HeadLen * headsPerChunk
)

func put64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func be64(b []byte) uint64  { return binary.BigEndian.Uint64(b) }
func put32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func be32(b []byte) uint32  { return binary.BigEndian.Uint32(b) }

// timeKey is a bytime key: the nanos with the sign bit flipped, so that
// negative times sort before positive ones bytewise, then the seq.
func putTimeKey(dst []byte, at int64, seq uint64) {
	binary.BigEndian.PutUint64(dst, uint64(at)^(1<<63))
	binary.BigEndian.PutUint64(dst[8:], seq)
}

func timeKey(at int64, seq uint64) []byte {
	k := make([]byte, 16)
	putTimeKey(k, at, seq)
	return k
}

func parseTimeKey(k []byte) (at int64, seq uint64, ok bool) {
	if len(k) != 16 {
		return 0, 0, false
	}
	return int64(be64(k) ^ (1 << 63)), be64(k[8:]), true
}
