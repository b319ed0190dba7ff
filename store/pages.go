package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"
)

// bbolt's page format, read here without bbolt so that a damaged file's
// header pages and freelist are looked at with bounds checks before bbolt
// trusts them (bbolt reads them through its memory map and panics, or
// faults, on nonsense). bbolt writes these structures in the machine's
// byte order.
const (
	pageHeaderLen = 16 // id u64, flags u16, count u16, overflow u32
	metaBodyLen   = 64 // see readMeta

	boltMagic   = 0xED0CDAED
	boltVersion = 2

	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	metaPageFlag     = 0x04
	freelistPageFlag = 0x10

	noFreelist = math.MaxUint64
)

var ne = binary.NativeEndian

// metaPage is one of the file's two header pages.
type metaPage struct {
	err      string // why it is not valid; "" when it is
	pageSize uint32
	root     uint64 // the root bucket's page
	freelist uint64 // the freelist's page, or noFreelist
	hwm      uint64 // pages in use: 0 .. hwm-1
	txid     uint64
}

// readMeta decodes a header page: its page header, then magic u32,
// version u32, page size u32, flags u32, root page u64, root sequence
// u64, freelist page u64, high-water mark u64, txid u64, checksum u64
// (FNV-64a of the 56 bytes before it).
func readMeta(b []byte) metaPage {
	if len(b) < pageHeaderLen+metaBodyLen {
		return metaPage{err: "cut short"}
	}
	m := b[pageHeaderLen : pageHeaderLen+metaBodyLen]
	h := fnv.New64a()
	h.Write(m[:56])
	switch {
	case ne.Uint32(m) != boltMagic:
		return metaPage{err: "not a bbolt header page"}
	case ne.Uint32(m[4:]) != boltVersion:
		return metaPage{err: fmt.Sprintf("bbolt format %d, not %d", ne.Uint32(m[4:]), boltVersion)}
	case ne.Uint64(m[56:]) != h.Sum64():
		return metaPage{err: "checksum mismatch"}
	}
	return metaPage{
		pageSize: ne.Uint32(m[8:]),
		root:     ne.Uint64(m[16:]),
		freelist: ne.Uint64(m[32:]),
		hwm:      ne.Uint64(m[40:]),
		txid:     ne.Uint64(m[48:]),
	}
}

// fileReport is what inspect found.
type fileReport struct {
	size     int64
	pageSize int
	meta     metaPage // the header page bbolt uses
	// fatal is damage that stops the file from being read as it is.
	fatal string
	// writeFatal is damage that only writing would trip on (the
	// freelist): reading the file still works.
	writeFatal string
	// notes are problems bbolt copes with (one bad header page).
	notes []string
	// free are the pages the freelist names.
	free []uint64
}

// inspect reads the header pages and the freelist of a file of size bytes
// (more than 0) with bounds checks, and says whether bbolt can be trusted
// with it.
func inspect(f io.ReaderAt, size int64) fileReport {
	r := fileReport{size: size}
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	m0 := readMeta(buf[:n])
	ps := int(m0.pageSize)
	if m0.err != "" {
		// Find the second header page as bbolt does: at each possible
		// page size.
		for i := 0; i <= 14; i++ {
			pos := int64(1024) << i
			if pos >= size-1024 {
				break
			}
			n, _ := f.ReadAt(buf, pos)
			if m := readMeta(buf[:n]); m.err == "" {
				ps = int(m.pageSize)
				break
			}
		}
	}
	if ps < 1024 || ps > 1<<24 || ps&(ps-1) != 0 {
		r.fatal = fmt.Sprintf("neither of its two header pages is valid (page 0: %s)", m0.err)
		return r
	}
	r.pageSize = ps
	buf = make([]byte, pageHeaderLen+metaBodyLen)
	n, _ = f.ReadAt(buf, int64(ps))
	m1 := readMeta(buf[:n])
	switch {
	case m0.err != "" && m1.err != "":
		r.fatal = fmt.Sprintf("neither of its two header pages is valid (page 0: %s; page 1: %s)", m0.err, m1.err)
		return r
	case m0.err != "":
		r.notes = append(r.notes, fmt.Sprintf("header page 0 is damaged (%s); bbolt uses page 1", m0.err))
		r.meta = m1
	case m1.err != "":
		r.notes = append(r.notes, fmt.Sprintf("header page 1 is damaged (%s); bbolt uses page 0", m1.err))
		r.meta = m0
	case m1.txid > m0.txid:
		r.meta = m1
	default:
		r.meta = m0
	}
	m := r.meta
	if m.pageSize != uint32(ps) {
		r.fatal = fmt.Sprintf("its header pages disagree on the page size (%d and %d)", ps, m.pageSize)
		return r
	}
	if m.hwm < 4 || m.hwm > uint64(math.MaxInt64)/uint64(ps) {
		r.fatal = fmt.Sprintf("its header page says it has %d pages", m.hwm)
		return r
	}
	if need := int64(m.hwm) * int64(ps); size < need {
		r.fatal = fmt.Sprintf("it is %d bytes long but its %d pages reach %d bytes: it was cut short", size, m.hwm, need)
		return r
	}
	if m.root < 2 || m.root >= m.hwm {
		r.fatal = fmt.Sprintf("its root page %d is outside its pages 2..%d", m.root, m.hwm-1)
		return r
	}
	r.writeFatal, r.free = readFreelist(f, ps, m)
	return r
}

// readFreelist reads and checks the freelist page (and its overflow).
func readFreelist(f io.ReaderAt, ps int, m metaPage) (string, []uint64) {
	if m.freelist == noFreelist {
		return "", nil // bbolt rebuilds it by scanning
	}
	if m.freelist < 2 || m.freelist >= m.hwm {
		return fmt.Sprintf("its freelist page %d is outside its pages 2..%d", m.freelist, m.hwm-1), nil
	}
	hdr := make([]byte, pageHeaderLen)
	if _, err := f.ReadAt(hdr, int64(m.freelist)*int64(ps)); err != nil {
		return fmt.Sprintf("its freelist page %d cannot be read: %v", m.freelist, err), nil
	}
	id, flags, count, overflow := ne.Uint64(hdr), ne.Uint16(hdr[8:]), uint64(ne.Uint16(hdr[10:])), uint64(ne.Uint32(hdr[12:]))
	switch {
	case flags != freelistPageFlag:
		return fmt.Sprintf("its freelist page %d is not a freelist page (flags %#x)", m.freelist, flags), nil
	case id != m.freelist:
		return fmt.Sprintf("its freelist page %d says it is page %d", m.freelist, id), nil
	case m.freelist+overflow >= m.hwm:
		return fmt.Sprintf("its freelist page %d runs %d pages past its end", m.freelist, m.freelist+overflow-m.hwm+1), nil
	}
	body := make([]byte, (overflow+1)*uint64(ps)-pageHeaderLen)
	if _, err := f.ReadAt(body, int64(m.freelist)*int64(ps)+pageHeaderLen); err != nil {
		return fmt.Sprintf("its freelist (page %d) cannot be read: %v", m.freelist, err), nil
	}
	if count == 0xFFFF { // the real count is the first element
		count = ne.Uint64(body)
		body = body[8:]
	}
	if count > uint64(len(body)/8) {
		return fmt.Sprintf("its freelist (page %d) claims %d free pages, more than its %d bytes hold", m.freelist, count, len(body)), nil
	}
	free := make([]uint64, count)
	seen := make(map[uint64]bool, count)
	for i := range free {
		p := ne.Uint64(body[i*8:])
		switch {
		case p < 2 || p >= m.hwm:
			return fmt.Sprintf("its freelist names page %d, outside its pages 2..%d", p, m.hwm-1), nil
		case seen[p]:
			return fmt.Sprintf("its freelist names page %d twice", p), nil
		}
		seen[p] = true
		free[i] = p
	}
	return "", free
}
