package boltfile

import (
	"fmt"
	"io"
)

// maxProblems bounds what a walk reports.
const maxProblems = 50

// Tree is what a walk of the file's pages found.
type Tree struct {
	// Problems say what is wrong with the pages, one line each, naming
	// the page, the page that points at it and the bucket it belongs to.
	Problems []string
	// cuts are the file offsets of the page numbers (in a branch
	// element, a bucket's value or the header page's root) that point
	// at a page the walk could not follow: out of range, on the
	// freelist, reached before, of the wrong type or with elements
	// outside it.
	cuts []int64
	// rootCut is set when the root bucket's own page is such a page.
	rootCut bool
}

// Cut reports whether some page number in the file points at a page the
// walk could not follow: bbolt would follow it regardless, and read
// nonsense, fault, or go round a cycle of pages for ever. CopyCut makes a
// copy of the file that bbolt can read instead.
func (t Tree) Cut() bool { return len(t.cuts) > 0 || t.rootCut }

// WalkTree follows every page reachable from the root bucket of a file
// Inspect found no fatal damage in, reading them with bounds checks, and
// reports pages out of range or referenced twice (a cycle among them), on
// the freelist, of the wrong type, whose header names another page, or
// whose elements reach outside them, naming the bucket they belong to. It
// never follows a page twice, and reads each page at most once, so a
// cycle cannot trap it.
func WalkTree(f io.ReaderAt, rep Report) Tree { return walk(f, rep, false) }

// WalkBranches is WalkTree over the pages bbolt descends through, cheap
// enough to run on every open: it reads the branch pages, the leaves
// that hold buckets, and under each branch page its first leaf, which
// says that its siblings are leaves of records too. Their numbers are
// checked without reading them: in range, not free, and neither a page
// met before nor met again. So whatever would send bbolt round a cycle
// of pages (a branch page pointing at itself, at a page above it or
// already in the tree, at a free page) or past the file's end is found,
// and a damaged leaf of records is left to the reads that meet it. A
// file whose freelist cannot be read (or that has none) is walked whole:
// a free page's old contents could be a branch.
func WalkBranches(f io.ReaderAt, rep Report) Tree {
	full := rep.WriteFatal != "" || rep.Meta.Freelist == noFreelist
	return walk(f, rep, !full)
}

// walk is WalkTree, or WalkBranches when branches.
func walk(f io.ReaderAt, rep Report, branches bool) Tree {
	var w Tree
	if rep.Fatal != "" {
		return w // the header pages cannot be trusted to start from
	}
	ps, hwm := uint64(rep.PageSize), rep.Meta.Pages
	type ref struct {
		page, from uint64
		at         int64  // where the page number is in the file; -1 for the root
		bucket     string // the bucket the page belongs to, "" for the root
		unread     bool   // a leaf of records, checked without reading it
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
		if len(w.Problems) < maxProblems {
			w.Problems = append(w.Problems, msg)
		} else if len(w.Problems) == maxProblems {
			w.Problems = append(w.Problems, "more damaged pages: only the first are listed")
		}
	}
	seen := map[uint64]uint64{} // page -> the page that referenced it
	for _, p := range rep.Free {
		seen[p] = 0
	}
	stack := []ref{{rep.Meta.Root, 0, -1, "", false}}
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
		if r.unread {
			continue
		}
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
		case flags != BranchPageFlag && flags != LeafPageFlag:
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
		// A branch's children are all on one level: leaves of records
		// when the first that reads as a page is one.
		unread := branches && flags == BranchPageFlag && leavesOfRecords(f, rep, children)
		// Followed in order, so that of two references to one page the
		// first keeps it.
		for i := len(children) - 1; i >= 0; i-- {
			c := children[i]
			bucket := r.bucket
			if c.name != nil {
				bucket = c.name(r.bucket)
			}
			stack = append(stack, ref{c.page, r.page, int64(r.page*ps) + int64(c.at), bucket, unread})
		}
	}
	return w
}

// leavesOfRecords reports whether the first of a branch page's children
// that reads as a page (in range, naming itself, a branch or a leaf) is
// a leaf holding no buckets. Looking further than the first is for a
// damaged first child; when none of the first few reads as a page, they
// are all read.
func leavesOfRecords(f io.ReaderAt, rep Report, children []child) bool {
	ps := uint64(rep.PageSize)
	buf := make([]byte, ps)
	for _, c := range children[:min(len(children), 4)] {
		if c.page < 2 || c.page >= rep.Meta.Pages {
			continue
		}
		if _, err := f.ReadAt(buf, int64(c.page*ps)); err != nil {
			continue
		}
		id, flags, count := ne.Uint64(buf), ne.Uint16(buf[8:]), int(ne.Uint16(buf[10:]))
		switch {
		case id != c.page:
		case flags == BranchPageFlag:
			return false
		case flags == LeafPageFlag:
			// A leaf holding buckets (or with more elements than its
			// first page holds) is read, and so are its siblings, for
			// the buckets' roots.
			if PageHeaderLen+count*16 > len(buf) {
				return false
			}
			for i := range count {
				if ne.Uint32(buf[PageHeaderLen+i*16:])&bucketLeafFlag != 0 {
					return false
				}
			}
			return true
		}
	}
	return false
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
	if PageHeaderLen+count*16 > len(buf) {
		return nil, fmt.Sprintf("%d elements do not fit in it", count)
	}
	var children []child
	for i := range count {
		e := PageHeaderLen + i*16
		if flags == BranchPageFlag {
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
		if eflags&bucketLeafFlag == 0 {
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
		if len(in) < PageHeaderLen {
			return nil, fmt.Sprintf("element %d is an inline bucket of %d bytes", i, len(v))
		}
		if f := ne.Uint16(in[8:]); f != LeafPageFlag {
			return nil, fmt.Sprintf("element %d is an inline bucket whose page is not a leaf (flags %#x)", i, f)
		}
		inner, problem := pageElements(in, LeafPageFlag, int(ne.Uint16(in[10:])))
		if problem != "" {
			return nil, fmt.Sprintf("element %d (an inline bucket): %s", i, problem)
		}
		if len(inner) > 0 {
			return nil, fmt.Sprintf("element %d is an inline bucket holding buckets", i)
		}
	}
	return children, ""
}
