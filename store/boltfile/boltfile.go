// Package boltfile reads a bbolt file's pages as bytes, with bounds
// checks, without bbolt: bbolt reads them through its memory map and
// trusts every number it finds, so a damaged file makes it panic, fault,
// or follow page numbers round a cycle for ever. Inspect looks at the
// header pages and the freelist, WalkTree at every page reachable from
// the root, and CopyCut writes a copy of a file in which the page numbers
// the walk could not follow are cut off, so that bbolt reading the copy
// meets only a tree.
//
// It knows bbolt's page format and nothing of what weft keeps in the
// pages: the store reads its files through it.
package boltfile

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"
)

// bbolt's page format. bbolt writes these structures in the machine's
// byte order.
const (
	// PageHeaderLen is the length of every page's header: id u64,
	// flags u16, element count u16, overflow pages u32. A branch or leaf
	// page's elements follow it, 16 bytes each.
	PageHeaderLen = 16
	// BranchPageFlag marks a branch page of a bucket's B+tree: its
	// elements point at the pages below it.
	BranchPageFlag = 0x01
	// LeafPageFlag marks a leaf page: its elements hold keys and
	// values, or buckets.
	LeafPageFlag = 0x02

	metaPageFlag     = 0x04
	freelistPageFlag = 0x10

	bucketLeafFlag = 0x01 // a leaf element that is a bucket

	metaBodyLen = 64 // see readMeta

	boltMagic   = 0xED0CDAED
	boltVersion = 2

	noFreelist = math.MaxUint64
)

var ne = binary.NativeEndian

// Meta is what one of the file's two header pages says.
type Meta struct {
	err      string // why it is not valid; "" when it is
	PageSize uint32
	Root     uint64 // the root bucket's page
	Freelist uint64 // the freelist's page (math.MaxUint64: none, bbolt rebuilds it)
	Pages    uint64 // pages in use: 0 .. Pages-1 (bbolt's high-water mark)
	TxID     uint64 // the transaction that wrote it
}

// readMeta decodes a header page: its page header, then magic u32,
// version u32, page size u32, flags u32, root page u64, root sequence
// u64, freelist page u64, high-water mark u64, txid u64, checksum u64
// (FNV-64a of the 56 bytes before it).
func readMeta(b []byte) Meta {
	if len(b) < PageHeaderLen+metaBodyLen {
		return Meta{err: "cut short"}
	}
	m := b[PageHeaderLen : PageHeaderLen+metaBodyLen]
	h := fnv.New64a()
	h.Write(m[:56])
	switch {
	case ne.Uint32(m) != boltMagic:
		return Meta{err: "not a bbolt header page"}
	case ne.Uint32(m[4:]) != boltVersion:
		return Meta{err: fmt.Sprintf("bbolt format %d, not %d", ne.Uint32(m[4:]), boltVersion)}
	case ne.Uint64(m[56:]) != h.Sum64():
		return Meta{err: "checksum mismatch"}
	}
	return Meta{
		PageSize: ne.Uint32(m[8:]),
		Root:     ne.Uint64(m[16:]),
		Freelist: ne.Uint64(m[32:]),
		Pages:    ne.Uint64(m[40:]),
		TxID:     ne.Uint64(m[48:]),
	}
}

// Report is what Inspect found.
type Report struct {
	Size     int64
	PageSize int  // 0 when no header page says
	Meta     Meta // the header page bbolt uses
	// Fatal is damage that stops the file from being read as it is.
	Fatal string
	// WriteFatal is damage that only writing would trip on (the
	// freelist): reading the file still works.
	WriteFatal string
	// Notes are problems bbolt copes with (one bad header page).
	Notes []string
	// Free are the pages the freelist names.
	Free []uint64
}

// Inspect reads the header pages and the freelist of a file of size
// bytes (more than 0) with bounds checks, and says whether bbolt can be
// trusted with it.
func Inspect(f io.ReaderAt, size int64) Report {
	r := Report{Size: size}
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	m0 := readMeta(buf[:n])
	ps := int(m0.PageSize)
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
				ps = int(m.PageSize)
				break
			}
		}
	}
	if ps < 1024 || ps > 1<<24 || ps&(ps-1) != 0 {
		r.Fatal = fmt.Sprintf("neither of its two header pages is valid (page 0: %s)", m0.err)
		return r
	}
	r.PageSize = ps
	buf = make([]byte, PageHeaderLen+metaBodyLen)
	n, _ = f.ReadAt(buf, int64(ps))
	m1 := readMeta(buf[:n])
	switch {
	case m0.err != "" && m1.err != "":
		r.Fatal = fmt.Sprintf("neither of its two header pages is valid (page 0: %s; page 1: %s)", m0.err, m1.err)
		return r
	case m0.err != "":
		r.Notes = append(r.Notes, fmt.Sprintf("header page 0 is damaged (%s); bbolt uses page 1", m0.err))
		r.Meta = m1
	case m1.err != "":
		r.Notes = append(r.Notes, fmt.Sprintf("header page 1 is damaged (%s); bbolt uses page 0", m1.err))
		r.Meta = m0
	case m1.TxID > m0.TxID:
		r.Meta = m1
	default:
		r.Meta = m0
	}
	m := r.Meta
	if m.PageSize != uint32(ps) {
		r.Fatal = fmt.Sprintf("its header pages disagree on the page size (%d and %d)", ps, m.PageSize)
		return r
	}
	if m.Pages < 4 || m.Pages > uint64(math.MaxInt64)/uint64(ps) {
		r.Fatal = fmt.Sprintf("its header page says it has %d pages", m.Pages)
		return r
	}
	if need := int64(m.Pages) * int64(ps); size < need {
		r.Fatal = fmt.Sprintf("it is %d bytes long but its %d pages reach %d bytes: it was cut short", size, m.Pages, need)
		return r
	}
	if m.Root < 2 || m.Root >= m.Pages {
		r.Fatal = fmt.Sprintf("its root page %d is outside its pages 2..%d", m.Root, m.Pages-1)
		return r
	}
	r.WriteFatal, r.Free = readFreelist(f, ps, m)
	return r
}

// readFreelist reads and checks the freelist page (and its overflow).
func readFreelist(f io.ReaderAt, ps int, m Meta) (string, []uint64) {
	if m.Freelist == noFreelist {
		return "", nil // bbolt rebuilds it by scanning
	}
	if m.Freelist < 2 || m.Freelist >= m.Pages {
		return fmt.Sprintf("its freelist page %d is outside its pages 2..%d", m.Freelist, m.Pages-1), nil
	}
	hdr := make([]byte, PageHeaderLen)
	if _, err := f.ReadAt(hdr, int64(m.Freelist)*int64(ps)); err != nil {
		return fmt.Sprintf("its freelist page %d cannot be read: %v", m.Freelist, err), nil
	}
	id, flags, count, overflow := ne.Uint64(hdr), ne.Uint16(hdr[8:]), uint64(ne.Uint16(hdr[10:])), uint64(ne.Uint32(hdr[12:]))
	switch {
	case flags != freelistPageFlag:
		return fmt.Sprintf("its freelist page %d is not a freelist page (flags %#x)", m.Freelist, flags), nil
	case id != m.Freelist:
		return fmt.Sprintf("its freelist page %d says it is page %d", m.Freelist, id), nil
	case m.Freelist+overflow >= m.Pages:
		return fmt.Sprintf("its freelist page %d runs %d pages past its end", m.Freelist, m.Freelist+overflow-m.Pages+1), nil
	}
	body := make([]byte, (overflow+1)*uint64(ps)-PageHeaderLen)
	if _, err := f.ReadAt(body, int64(m.Freelist)*int64(ps)+PageHeaderLen); err != nil {
		return fmt.Sprintf("its freelist (page %d) cannot be read: %v", m.Freelist, err), nil
	}
	if count == 0xFFFF { // the real count is the first element
		count = ne.Uint64(body)
		body = body[8:]
	}
	if count > uint64(len(body)/8) {
		return fmt.Sprintf("its freelist (page %d) claims %d free pages, more than its %d bytes hold", m.Freelist, count, len(body)), nil
	}
	free := make([]uint64, count)
	seen := make(map[uint64]bool, count)
	for i := range free {
		p := ne.Uint64(body[i*8:])
		switch {
		case p < 2 || p >= m.Pages:
			return fmt.Sprintf("its freelist names page %d, outside its pages 2..%d", p, m.Pages-1), nil
		case seen[p]:
			return fmt.Sprintf("its freelist names page %d twice", p), nil
		}
		seen[p] = true
		free[i] = p
	}
	return "", free
}
