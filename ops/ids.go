package ops

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// IDs for sessions and operations: 16 characters of lowercase Crockford
// base32, 48 bits of milliseconds then 32 bits that are random for the
// first ID in a millisecond and counted up after it, so IDs made by one
// process are unique and sort in creation order.
type idGen struct {
	mu     sync.Mutex
	lastMs uint64
	seq    uint32
}

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

func (g *idGen) next(now time.Time) string {
	g.mu.Lock()
	ms := uint64(now.UnixMilli())
	if ms <= g.lastMs {
		ms = g.lastMs
		g.seq++
		if g.seq == 0 { // 2^32 IDs in one millisecond: borrow the next one
			ms++
		}
	} else {
		var b [4]byte
		_, _ = rand.Read(b[:])
		g.seq = binary.BigEndian.Uint32(b[:]) >> 1 // room to count up
	}
	g.lastMs = ms
	v := ms<<32 | uint64(g.seq)
	g.mu.Unlock()
	var out [16]byte
	for i := 15; i >= 0; i-- {
		out[i] = crockford[v&31]
		v >>= 5
	}
	return string(out[:])
}
