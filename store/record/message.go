package record

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

// Message record, format 1 (the value in the bolt file's msgs bucket):
//
//	byte 0     format (1)
//	byte 1     role code (model.Role.Code, 1..4)
//	byte 2     flags: bit 0 = digest stored as 32 raw bytes (it was 64 lowercase hex digits)
//	                  bit 1 = parts packed over the content (schema 3)
//	                  bit 2 = a stub: the record is kept in chunks (StubOf, schema 4)
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
	MessageFormat    = 1
	messageHeaderLen = 11
	flagDigestRaw    = 1 << 0
	FlagPartsPacked  = 1 << 1
	flagElsewhere    = 1 << 2 // a stub (StubOf)
	knownFlags       = flagDigestRaw | FlagPartsPacked | flagElsewhere
)

// HeadLen is the length of a head record (PutHead).
const HeadLen = 16

var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// StorableNanos converts t to Unix nanoseconds, or fails when t is outside
// what an int64 of nanoseconds can hold (before 1678 or after 2262, which
// includes the zero time.Time).
func StorableNanos(t time.Time) (int64, bool) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, false
	}
	return t.UnixNano(), true
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

// Parts is how a message's parts are stored (PackParts): packed over
// its content, or the JSON itself.
type Parts struct {
	plan jsonpack.Plan
	doc  []byte
}

// PackParts plans how m's parts are stored: packed over its content,
// when that makes them shorter. Parts as read (m.ReadParts) are written
// packed as they are written (jsonpack.Builder): their JSON, which says
// a text again in each part and in its block, is never made whole.
func PackParts(m *model.Message) Parts {
	if len(m.Parts) > 0 || len(m.ReadParts) == 0 {
		return Parts{plan: jsonpack.Make(m.Content, m.Parts), doc: m.Parts}
	}
	b := jsonpack.NewBuilder(m.Content)
	if model.WriteParts(b, m.ReadParts) {
		if plan, doc, ok := b.Finish(); ok {
			return Parts{plan: plan, doc: doc}
		}
	}
	// An Input or Raw that is not JSON, which encoding/json refuses
	// too.
	return Parts{doc: model.EncodeParts(m.ReadParts)}
}

// AsIs is m's parts stored as they are, not packed.
func AsIs(m *model.Message) Parts { return Parts{doc: m.Parts} }

// len is the length of the parts field's body.
func (p Parts) len() int {
	if p.plan.Packs() {
		return p.plan.Len()
	}
	return len(p.doc)
}

// MessageLen is the exact length AppendMessage writes for m, its parts
// packed as pack says (PackParts).
func MessageLen(m *model.Message, pack Parts) int {
	n := messageHeaderLen + varintLen(int64(m.Tokens))
	n += fieldLen(len(m.Content)) + fieldLen(len(m.Name))
	if rawDigest(m.Digest) {
		n += fieldLen(32)
	} else {
		n += fieldLen(len(m.Digest))
	}
	n += fieldLen(pack.len()) + fieldLen(metaLen(m.Meta))
	return n
}

// AppendMessage appends m's record to dst (which should have room for
// MessageLen(m, pack) bytes), its parts packed as pack says (PackParts
// of m). at is m.CreatedAt in nanos, already checked.
func AppendMessage(dst []byte, m *model.Message, at int64, pack Parts) []byte {
	dst = appendBeforeContent(dst, m, at, pack)
	dst = append(dst, m.Content...)
	return appendAfterContent(dst, m, pack)
}

// appendBeforeContent appends m's record up to its content: the header,
// the tokens and the content's length. The content follows, then
// appendAfterContent: a large record is written from the three without
// its content being copied (MessageSegments).
func appendBeforeContent(dst []byte, m *model.Message, at int64, pack Parts) []byte {
	var flags byte
	if rawDigest(m.Digest) {
		flags |= flagDigestRaw
	}
	if pack.plan.Packs() {
		flags |= FlagPartsPacked
	}
	dst = append(dst, MessageFormat, m.Role.Code(), flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(at))
	dst = binary.AppendVarint(dst, int64(m.Tokens))
	return binary.AppendUvarint(dst, uint64(len(m.Content)))
}

// appendAfterContent appends m's record after its content: the name,
// the digest, the parts and the meta.
func appendAfterContent(dst []byte, m *model.Message, pack Parts) []byte {
	dst = wire.AppendField(dst, m.Name)
	if rawDigest(m.Digest) {
		dst = binary.AppendUvarint(dst, 32)
		dst, _ = hex.AppendDecode(dst, []byte(m.Digest))
	} else {
		dst = wire.AppendField(dst, m.Digest)
	}
	dst = binary.AppendUvarint(dst, uint64(pack.len()))
	if pack.plan.Packs() {
		dst = pack.plan.Append(dst, pack.doc)
	} else {
		dst = append(dst, pack.doc...)
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

// MessageSegments is m's record as three slices whose concatenation is
// what AppendMessage writes: the bytes before the content, the content
// itself (m.Content's own bytes, not a copy, which bbolt only reads),
// and the bytes after it.
func MessageSegments(m *model.Message, at int64, pack Parts) [3][]byte {
	return [3][]byte{
		appendBeforeContent(nil, m, at, pack),
		unsafe.Slice(unsafe.StringData(m.Content), len(m.Content)),
		appendAfterContent(nil, m, pack),
	}
}

// messageHeader checks the fixed part of a record and returns a reader positioned
// after the tokens.
func messageHeader(v []byte) (role model.Role, flags byte, at int64, tokens int64, r wire.Reader, err error) {
	if len(v) < messageHeaderLen {
		return "", 0, 0, 0, r, wire.ErrShort
	}
	if v[0] != MessageFormat {
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
	at = int64(binary.BigEndian.Uint64(v[3:]))
	r = wire.Reader{B: v[messageHeaderLen:]}
	tokens = r.Varint()
	return role, flags, at, tokens, r, r.Err
}

// ContentOf returns the content field of a record without copying it.
func ContentOf(v []byte) ([]byte, error) {
	_, flags, _, _, r, err := messageHeader(v)
	if err != nil {
		return nil, err
	}
	if flags&flagElsewhere != 0 {
		return nil, errors.New("a large record's stub read as its record")
	}
	c := r.Field()
	return c, r.Err
}

// HeadOf reads a message's head from its record: the header, and whether
// it has parts, without copying any field.
func HeadOf(v []byte) (model.Head, error) {
	_, flags, at, tokens, r, err := messageHeader(v)
	if err != nil {
		return model.Head{}, err
	}
	h := model.Head{At: at, Role: v[1], Tokens: uint32(min(max(tokens, 0), math.MaxUint32))}
	if flags&flagElsewhere != 0 {
		_, h.Flags, err = StubInfo(v)
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

// DecodeMessage decodes a record into a message that owns all its bytes.
func DecodeMessage(v []byte, seq uint64) (model.Message, error) {
	role, flags, at, tokens, r, err := messageHeader(v)
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
		if flags&FlagPartsPacked == 0 {
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

// PutHead writes h as a head record, HeadLen bytes: created_at (Unix
// nanoseconds, 8 bytes), tokens (4), role code, head flags and two
// bytes kept zero, big-endian.
func PutHead(dst []byte, h model.Head) {
	binary.BigEndian.PutUint64(dst, uint64(h.At))
	binary.BigEndian.PutUint32(dst[8:], h.Tokens)
	dst[12] = h.Role
	dst[13] = h.Flags
	dst[14], dst[15] = 0, 0
}

// GetHead reads a head record PutHead wrote.
func GetHead(src []byte) model.Head {
	_ = src[15]
	return model.Head{
		At:     int64(binary.BigEndian.Uint64(src)),
		Tokens: binary.BigEndian.Uint32(src[8:]),
		Role:   src[12],
		Flags:  src[13],
	}
}

// StubOf is the stub of a record whose first bytes are first (its
// header and tokens at least), whose length is length and whose head
// flags are headFlags.
func StubOf(first []byte, length int, headFlags byte) []byte {
	_, n := binary.Varint(first[messageHeaderLen:]) // tokens: just encoded
	stub := make([]byte, 0, messageHeaderLen+n+binary.MaxVarintLen64+1)
	stub = append(stub, first[:messageHeaderLen+n]...)
	stub[2] |= flagElsewhere
	stub = binary.AppendUvarint(stub, uint64(length))
	return append(stub, headFlags)
}

// IsStub reports whether record v is a stub of one kept in chunks.
func IsStub(v []byte) bool {
	return len(v) >= messageHeaderLen && v[0] == MessageFormat && v[2]&flagElsewhere != 0
}

// StubInfo reads a stub: the whole record's length and its head flags.
func StubInfo(v []byte) (length uint64, headFlags byte, err error) {
	_, _, _, _, r, err := messageHeader(v)
	if err != nil {
		return 0, 0, err
	}
	length = r.Uvarint()
	if r.Err != nil || len(r.B) != 1 {
		return 0, 0, errors.New("a large record's stub is damaged")
	}
	return length, r.B[0], nil
}
