package boltstore

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
	"unsafe"

	"weft/model"
	"weft/store/internal/wire"
	"weft/store/jsonpack"
)

// Message record, format 1 (the value in the msgs bucket):
//
//	byte 0     format (1)
//	byte 1     role code (model.Role.Code, 1..4)
//	byte 2     flags: bit 0 = digest stored as 32 raw bytes (it was 64 lowercase hex digits)
//	                  bit 1 = parts packed over the content (schema 3)
//	                  bit 2 = a stub: the record is kept in chunks (bigrecord.go, schema 4)
//	bytes 3-10 created_at, Unix nanoseconds, int64 big-endian
//	varint     tokens (signed, zig-zag)
//	uvarint n, n bytes   content
//	uvarint n, n bytes   name
//	uvarint n, n bytes   digest
//	uvarint n, n bytes   parts (n = 0: none): verbatim JSON, or with bit 1
//	                     packed over the content (store/jsonpack)
//	uvarint n, n bytes   meta (n = 0: none): uvarint count, then count pairs of
//	                     uvarint-length-prefixed key and value, keys sorted
//
// The ID and seq are not stored: the seq is the key and the ID is
// model.MessageID(seq). Content comes first among the variable fields so
// ScanContent finds it after two varints without decoding the rest.
//
// A message's parts say its text again (each part's text, and the
// source block it was read from as the client wrote it): packed, the
// text is stored once, in the content, and the parts are given back byte
// for byte when the message is read. Parts that packing does not make
// shorter are stored as they are.
const (
	msgFormat1      = 1
	msgHeaderLen    = 11
	flagDigestRaw   = 1 << 0
	flagPartsPacked = 1 << 1
	knownFlags      = flagDigestRaw | flagPartsPacked | flagElsewhere
)

// Head records: 16 bytes, 1024 to a chunk.
const (
	headLen       = 16
	headsPerChunk = 1024
	chunkLen      = headLen * headsPerChunk
)

var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// storableNanos converts t to Unix nanoseconds, or fails when t is outside
// what an int64 of nanoseconds can hold (before 1678 or after 2262, which
// includes the zero time.Time).
func storableNanos(t time.Time) (int64, bool) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, false
	}
	return t.UnixNano(), true
}

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

// rawDigest reports whether d is 64 lowercase hex digits (a SHA-256 as
// model.ContentDigest writes it), which are stored as 32 bytes.
func rawDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	var bad byte
	for i := 0; i < len(d); i++ {
		bad |= notLowerHex[d[i]]
	}
	return bad == 0
}

// notLowerHex is 1 for every byte that is not a lowercase hex digit: one
// branch-free loop checks a digest.
var notLowerHex = func() (t [256]byte) {
	for i := range t {
		if !('0' <= i && i <= '9' || 'a' <= i && i <= 'f') {
			t[i] = 1
		}
	}
	return t
}()

func uvarintLen(n int) int {
	l := 1
	for x := uint64(n); x >= 0x80; x >>= 7 {
		l++
	}
	return l
}

func varintLen(v int64) int {
	l := 1
	for x := uint64(v<<1) ^ uint64(v>>63); x >= 0x80; x >>= 7 {
		l++
	}
	return l
}

func fieldLen(n int) int { return uvarintLen(n) + n }

// metaLen is the length of the meta field body (0 for no meta).
func metaLen(m map[string]string) int {
	if len(m) == 0 {
		return 0
	}
	n := uvarintLen(len(m))
	for k, v := range m {
		n += fieldLen(len(k)) + fieldLen(len(v))
	}
	return n
}

// packParts plans how m's parts are stored: packed over its content,
// when that makes them shorter.
func packParts(m *model.Message) jsonpack.Plan { return jsonpack.Make(m.Content, m.Parts) }

// partsLen is the length of the parts field's body.
func partsLen(m *model.Message, pack jsonpack.Plan) int {
	if pack.Packs() {
		return pack.Len()
	}
	return len(m.Parts)
}

// encodedLen is the exact length encodeMessage writes for m, its parts
// packed as pack says (packParts).
func encodedLen(m *model.Message, pack jsonpack.Plan) int {
	n := msgHeaderLen + varintLen(int64(m.Tokens))
	n += fieldLen(len(m.Content)) + fieldLen(len(m.Name))
	if rawDigest(m.Digest) {
		n += fieldLen(32)
	} else {
		n += fieldLen(len(m.Digest))
	}
	n += fieldLen(partsLen(m, pack)) + fieldLen(metaLen(m.Meta))
	return n
}

// encodeMessage appends m's record to dst (which should have room for
// encodedLen(m, pack) bytes), its parts packed as pack says (packParts
// of m). at is m.CreatedAt in nanos, already checked.
func encodeMessage(dst []byte, m *model.Message, at int64, pack jsonpack.Plan) []byte {
	dst = appendBeforeContent(dst, m, at, pack)
	dst = append(dst, m.Content...)
	return appendAfterContent(dst, m, pack)
}

// appendBeforeContent appends m's record up to its content: the header,
// the tokens and the content's length. The content follows, then
// appendAfterContent: a large record is written from the three without
// its content being copied (recordSegments).
func appendBeforeContent(dst []byte, m *model.Message, at int64, pack jsonpack.Plan) []byte {
	var flags byte
	if rawDigest(m.Digest) {
		flags |= flagDigestRaw
	}
	if pack.Packs() {
		flags |= flagPartsPacked
	}
	dst = append(dst, msgFormat1, m.Role.Code(), flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(at))
	dst = binary.AppendVarint(dst, int64(m.Tokens))
	return binary.AppendUvarint(dst, uint64(len(m.Content)))
}

// appendAfterContent appends m's record after its content: the name,
// the digest, the parts and the meta.
func appendAfterContent(dst []byte, m *model.Message, pack jsonpack.Plan) []byte {
	dst = wire.AppendField(dst, m.Name)
	if rawDigest(m.Digest) {
		dst = binary.AppendUvarint(dst, 32)
		dst, _ = hex.AppendDecode(dst, []byte(m.Digest))
	} else {
		dst = wire.AppendField(dst, m.Digest)
	}
	dst = binary.AppendUvarint(dst, uint64(partsLen(m, pack)))
	if pack.Packs() {
		dst = pack.Append(dst, m.Parts)
	} else {
		dst = append(dst, m.Parts...)
	}
	dst = binary.AppendUvarint(dst, uint64(metaLen(m.Meta)))
	if len(m.Meta) > 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.Meta)))
		for _, k := range slices.Sorted(maps.Keys(m.Meta)) {
			dst = wire.AppendField(dst, k)
			dst = wire.AppendField(dst, m.Meta[k])
		}
	}
	return dst
}

// recordSegments is m's record as three slices whose concatenation is
// what encodeMessage writes: the bytes before the content, the content
// itself (m.Content's own bytes, not a copy, which bbolt only reads),
// and the bytes after it.
func recordSegments(m *model.Message, at int64, pack jsonpack.Plan) [3][]byte {
	return [3][]byte{
		appendBeforeContent(nil, m, at, pack),
		unsafe.Slice(unsafe.StringData(m.Content), len(m.Content)),
		appendAfterContent(nil, m, pack),
	}
}

// header checks the fixed part of a record and returns a reader positioned
// after the tokens.
func header(v []byte) (role model.Role, flags byte, at int64, tokens int64, r wire.Reader, err error) {
	if len(v) < msgHeaderLen {
		return "", 0, 0, 0, r, wire.ErrShort
	}
	if v[0] != msgFormat1 {
		return "", 0, 0, 0, r, fmt.Errorf("unknown format %d", v[0])
	}
	role = model.RoleFromCode(v[1])
	if role == "" {
		return "", 0, 0, 0, r, fmt.Errorf("unknown role code %d", v[1])
	}
	flags = v[2]
	if flags&^knownFlags != 0 {
		return "", 0, 0, 0, r, fmt.Errorf("unknown flags %#x", flags)
	}
	at = int64(be64(v[3:]))
	r = wire.Reader{B: v[msgHeaderLen:]}
	tokens = r.Varint()
	return role, flags, at, tokens, r, r.Err
}

// contentOf returns the content field of a record without copying it.
func contentOf(v []byte) ([]byte, error) {
	_, flags, _, _, r, err := header(v)
	if err != nil {
		return nil, err
	}
	if flags&flagElsewhere != 0 {
		return nil, errors.New("a large record's stub read as its record")
	}
	c := r.Field()
	return c, r.Err
}

// headOf reads a message's head from its record: the header, and whether
// it has parts, without copying any field.
func headOf(v []byte) (model.Head, error) {
	_, flags, at, tokens, r, err := header(v)
	if err != nil {
		return model.Head{}, err
	}
	h := model.Head{At: at, Role: v[1], Tokens: uint32(min(max(tokens, 0), math.MaxUint32))}
	if flags&flagElsewhere != 0 {
		_, h.Flags, err = stubInfo(v)
		return h, err
	}
	r.Field() // content
	r.Field() // name
	r.Field() // digest
	if len(r.Field()) > 0 {
		h.Flags |= model.HeadHasParts
	}
	return h, r.Err
}

// decodeMessage decodes a record into a message that owns all its bytes.
func decodeMessage(v []byte, seq uint64) (model.Message, error) {
	role, flags, at, tokens, r, err := header(v)
	if err != nil {
		return model.Message{}, err
	}
	if flags&flagElsewhere != 0 {
		return model.Message{}, errors.New("a large record's stub read as its record")
	}
	m := model.Message{
		ID:        model.MessageID(seq),
		Seq:       seq,
		Role:      role,
		CreatedAt: time.Unix(0, at).UTC(),
		Tokens:    int(tokens),
	}
	m.Content = string(r.Field())
	m.Name = string(r.Field())
	d := r.Field()
	if flags&flagDigestRaw != 0 {
		if r.Err == nil && len(d) != 32 {
			return model.Message{}, fmt.Errorf("raw digest of %d bytes", len(d))
		}
		m.Digest = hex.EncodeToString(d)
	} else {
		m.Digest = string(d)
	}
	if p := r.Field(); len(p) > 0 {
		if flags&flagPartsPacked == 0 {
			m.Parts = append([]byte(nil), p...)
		} else if m.Parts, err = jsonpack.Unpack(p, m.Content); err != nil {
			return model.Message{}, fmt.Errorf("parts: %w", err)
		}
	}
	if mb := r.Field(); len(mb) > 0 {
		mr := wire.Reader{B: mb}
		n := mr.Uvarint()
		if n > uint64(len(mb))/2 {
			return model.Message{}, fmt.Errorf("meta claims %d entries in %d bytes", n, len(mb))
		}
		m.Meta = make(map[string]string, n)
		for range n {
			k := mr.Field()
			val := mr.Field()
			if mr.Err != nil {
				break
			}
			m.Meta[string(k)] = string(val)
		}
		if mr.Err == nil && len(mr.B) != 0 {
			mr.Err = fmt.Errorf("%d stray bytes after meta", len(mr.B))
		}
		if mr.Err != nil {
			return model.Message{}, fmt.Errorf("meta: %w", mr.Err)
		}
	}
	if r.Err != nil {
		return model.Message{}, r.Err
	}
	if len(r.B) != 0 {
		return model.Message{}, fmt.Errorf("%d stray bytes at the end", len(r.B))
	}
	return m, nil
}

func putHead(dst []byte, h model.Head) {
	binary.BigEndian.PutUint64(dst, uint64(h.At))
	binary.BigEndian.PutUint32(dst[8:], h.Tokens)
	dst[12] = h.Role
	dst[13] = h.Flags
	dst[14], dst[15] = 0, 0
}

func getHead(src []byte) model.Head {
	_ = src[15]
	return model.Head{
		At:     int64(binary.BigEndian.Uint64(src)),
		Tokens: binary.BigEndian.Uint32(src[8:]),
		Role:   src[12],
		Flags:  src[13],
	}
}
