package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
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

// maxPageProblems bounds what walk reports.
const maxPageProblems = 50

// pageWalk is what walk found.
type pageWalk struct {
	problems []string
	// cuts are the file offsets of the page numbers (in a branch
	// element, a bucket's value or the header page's root) that point
	// at a page walk could not follow: out of range, on the freelist,
	// reached before, of the wrong type or with elements outside it.
	cuts []int64
	// rootCut is set when the root bucket's own page is such a page.
	rootCut bool
}

// walk follows every page reachable from the root bucket, reading them
// with bounds checks, and reports pages out of range or referenced twice
// (a cycle among them), of the wrong type, whose header names another
// page, or whose elements reach outside them, naming the bucket they
// belong to. It never follows a page twice, and reads each page at most
// once, so a cycle cannot trap it. Check runs bbolt's own checks only
// when this finds nothing: bbolt follows page numbers blindly (a branch
// page pointing at itself recurses until the stack overflows, which no
// recover catches), in a goroutine of its own where a fault would end
// the process.
func walk(f io.ReaderAt, rep fileReport) pageWalk {
	var w pageWalk
	if rep.fatal != "" {
		return w // the header pages cannot be trusted to start from
	}
	ps, hwm := uint64(rep.pageSize), rep.meta.hwm
	type ref struct {
		page, from uint64
		at         int64  // where the page number is in the file; -1 for the root
		bucket     string // the bucket the page belongs to, "" for the root
	}
	var r ref
	report := func(format string, args ...any) {
		if r.at < 0 {
			w.rootCut = true
		} else {
			w.cuts = append(w.cuts, r.at)
		}
		msg := fmt.Sprintf(format, args...)
		if r.bucket != "" {
			msg = fmt.Sprintf("bucket %q: %s", r.bucket, msg)
		}
		if len(w.problems) < maxPageProblems {
			w.problems = append(w.problems, msg)
		} else if len(w.problems) == maxPageProblems {
			w.problems = append(w.problems, "more damaged pages: only the first are listed")
		}
	}
	seen := map[uint64]uint64{} // page -> the page that referenced it
	for _, p := range rep.free {
		seen[p] = 0
	}
	stack := []ref{{rep.meta.root, 0, -1, ""}}
	for len(stack) > 0 {
		r = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r.page < 2 || r.page >= hwm {
			report("page %d (referenced by page %d) is outside the file's pages 2..%d", r.page, r.from, hwm-1)
			continue
		}
		if from, ok := seen[r.page]; ok {
			if from == 0 {
				report("page %d (referenced by page %d) is on the freelist", r.page, r.from)
			} else {
				report("page %d is referenced by pages %d and %d", r.page, from, r.from)
			}
			continue
		}
		seen[r.page] = max(r.from, 1)
		buf := make([]byte, ps)
		if _, err := f.ReadAt(buf, int64(r.page*ps)); err != nil {
			report("page %d cannot be read: %v", r.page, err)
			continue
		}
		id, flags, count, overflow := ne.Uint64(buf), ne.Uint16(buf[8:]), int(ne.Uint16(buf[10:])), uint64(ne.Uint32(buf[12:]))
		switch {
		case id != r.page:
			report("page %d (referenced by page %d) says it is page %d", r.page, r.from, id)
			continue
		case flags != branchPageFlag && flags != leafPageFlag:
			report("page %d (referenced by page %d) is neither a branch nor a leaf (flags %#x)", r.page, r.from, flags)
			continue
		case r.page+overflow >= hwm:
			report("page %d runs %d pages past the file's end", r.page, r.page+overflow-hwm+1)
			continue
		}
		for i := uint64(1); i <= overflow; i++ {
			seen[r.page+i] = r.page
		}
		if overflow > 0 {
			buf = make([]byte, (overflow+1)*ps)
			if _, err := f.ReadAt(buf, int64(r.page*ps)); err != nil {
				report("page %d cannot be read: %v", r.page, err)
				continue
			}
		}
		children, problem := pageElements(buf, flags, count)
		if problem != "" {
			report("page %d: %s", r.page, problem)
			continue
		}
		// Followed in order, so that of two references to one page the
		// first keeps it.
		for i := len(children) - 1; i >= 0; i-- {
			c := children[i]
			bucket := r.bucket
			if c.name != nil {
				bucket = c.name(r.bucket)
			}
			stack = append(stack, ref{c.page, r.page, int64(r.page*ps) + int64(c.at), bucket})
		}
	}
	return w
}

// child is a page a branch or leaf page points to.
type child struct {
	page uint64
	at   int                 // where its number is in the parent page
	name func(string) string // a bucket's name under its parent's; nil for a branch's child
}

// pageElements checks a branch or leaf page's elements lie inside it and
// returns the pages it points to: a branch's children, the roots of the
// buckets a leaf holds (inline buckets are checked in place).
func pageElements(buf []byte, flags uint16, count int) ([]child, string) {
	if pageHeaderLen+count*16 > len(buf) {
		return nil, fmt.Sprintf("%d elements do not fit in it", count)
	}
	var children []child
	for i := range count {
		e := pageHeaderLen + i*16
		if flags == branchPageFlag {
			pos, ksize := int(ne.Uint32(buf[e:])), int(ne.Uint32(buf[e+4:]))
			if e+pos+ksize > len(buf) || pos < 0 {
				return nil, fmt.Sprintf("element %d's key lies outside it", i)
			}
			children = append(children, child{page: ne.Uint64(buf[e+8:]), at: e + 8})
			continue
		}
		eflags, pos, ksize, vsize := ne.Uint32(buf[e:]), int(ne.Uint32(buf[e+4:])), int(ne.Uint32(buf[e+8:])), int(ne.Uint32(buf[e+12:]))
		if e+pos+ksize+vsize > len(buf) || pos < 0 {
			return nil, fmt.Sprintf("element %d lies outside it", i)
		}
		if eflags&1 == 0 {
			continue // a key and value
		}
		v := buf[e+pos+ksize : e+pos+ksize+vsize]
		if len(v) < 16 {
			return nil, fmt.Sprintf("element %d is a bucket of %d bytes", i, len(v))
		}
		if root := ne.Uint64(v); root != 0 {
			name := string(buf[e+pos : e+pos+ksize])
			children = append(children, child{page: root, at: e + pos + ksize, name: func(parent string) string {
				if parent == "" {
					return name
				}
				return parent + "/" + name
			}})
			continue
		}
		// An inline bucket: a leaf page inside the value.
		in := v[16:]
		if len(in) < pageHeaderLen {
			return nil, fmt.Sprintf("element %d is an inline bucket of %d bytes", i, len(v))
		}
		if f := ne.Uint16(in[8:]); f != leafPageFlag {
			return nil, fmt.Sprintf("element %d is an inline bucket whose page is not a leaf (flags %#x)", i, f)
		}
		inner, problem := pageElements(in, leafPageFlag, int(ne.Uint16(in[10:])))
		if problem != "" {
			return nil, fmt.Sprintf("element %d (an inline bucket): %s", i, problem)
		}
		if len(inner) > 0 {
			return nil, fmt.Sprintf("element %d is an inline bucket holding buckets", i)
		}
	}
	return children, ""
}

// readCopy writes the pages of a file walk found damaged pages in (f, as
// inspect saw it) to a new file in dir (the system's temporary folder
// when ""), in which every page number walk could not follow points
// instead at an empty leaf page added after the others, and whose header
// pages say so. Reading the copy, bbolt meets only a tree: the records
// the damaged pages held are missing from it, and the rest read as they
// are. It returns the copy's path; the caller removes it.
func readCopy(f io.ReaderAt, rep fileReport, w pageWalk, dir string) (string, error) {
	ps, hwm := int64(rep.pageSize), int64(rep.meta.hwm)
	// The header page in use, to keep its fields but the root and the
	// number of pages.
	var body []byte
	for _, p := range []int64{0, 1} {
		b := make([]byte, pageHeaderLen+metaBodyLen)
		if n, _ := f.ReadAt(b, p*ps); n == len(b) {
			if m := readMeta(b); m.err == "" && m.txid == rep.meta.txid {
				body = b[pageHeaderLen:]
				break
			}
		}
	}
	if body == nil {
		return "", errors.New("its header page cannot be read again")
	}
	out, err := os.CreateTemp(dir, "weft-damaged-*.db")
	if errors.Is(err, fs.ErrNotExist) && dir != "" {
		out, err = os.CreateTemp("", "weft-damaged-*.db") // dir is yet to be made
	}
	if err != nil {
		return "", err
	}
	path := out.Name()
	fail := func(err error) (string, error) {
		_ = out.Close()
		_ = os.Remove(path)
		return "", err
	}
	if _, err := io.Copy(out, io.NewSectionReader(f, 0, hwm*ps)); err != nil {
		return fail(err)
	}
	empty := make([]byte, ps)
	ne.PutUint64(empty, uint64(hwm))
	ne.PutUint16(empty[8:], leafPageFlag)
	if _, err := out.WriteAt(empty, hwm*ps); err != nil {
		return fail(err)
	}
	for _, at := range w.cuts {
		if _, err := out.WriteAt(ne.AppendUint64(nil, uint64(hwm)), at); err != nil {
			return fail(err)
		}
	}
	if w.rootCut {
		ne.PutUint64(body[16:], uint64(hwm))
	}
	ne.PutUint64(body[40:], uint64(hwm)+1)
	h := fnv.New64a()
	h.Write(body[:56])
	ne.PutUint64(body[56:], h.Sum64())
	for _, p := range []int64{0, 1} {
		hdr := make([]byte, pageHeaderLen)
		ne.PutUint64(hdr, uint64(p))
		ne.PutUint16(hdr[8:], metaPageFlag)
		if _, err := out.WriteAt(append(hdr, body...), p*ps); err != nil {
			return fail(err)
		}
	}
	if err := out.Close(); err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return path, nil
}
