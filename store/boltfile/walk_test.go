package boltfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// sample builds, once, a bbolt file of the shapes a walk meets: a bucket
// of 30,000 records (two levels of branch pages), a bucket of records
// too big for a page (overflow pages), a bucket holding 300 buckets
// (leaves of buckets under a branch page), one of which holds 5,000
// records (a nested bucket with a branch page), and free pages.
var sample = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "boltfile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sample.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	put := func(b *bolt.Bucket, n int, size int) error {
		for i := range n {
			v := bytes.Repeat([]byte{byte(i)}, size)
			if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), v); err != nil {
				return err
			}
		}
		return nil
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("records"))
		if err != nil {
			return err
		}
		if err := put(b, 30_000, 8); err != nil {
			return err
		}
		big, err := tx.CreateBucket([]byte("big"))
		if err != nil {
			return err
		}
		if err := put(big, 20, 10_000); err != nil {
			return err
		}
		outer, err := tx.CreateBucket([]byte("outer"))
		if err != nil {
			return err
		}
		for i := range 300 {
			in, err := outer.CreateBucket(fmt.Appendf(nil, "inner-%03d", i))
			if err != nil {
				return err
			}
			n := 3
			if i == 150 {
				n = 5_000
			}
			if err := put(in, n, 8); err != nil {
				return err
			}
		}
		return nil
	})
	// A later change leaves the pages it rewrote free.
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("records")).Put(binary.BigEndian.AppendUint64(nil, 20_000), []byte("changed"))
		})
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// branch is a branch page of the sample, and where it is.
type branch struct {
	bucket string
	page   uint64
	parent uint64 // the page pointing at it
	kids   []uint64
}

// branches lists the file's branch pages, in the order a walk from the
// root meets them.
func branches(t *testing.T, b []byte) []branch {
	brs, _ := pages(t, b)
	return brs
}

// pages lists the file's branch pages, in the order a walk from the root
// meets them, and counts its leaves holding buckets.
func pages(t *testing.T, b []byte) (out []branch, bucketLeaves int) {
	t.Helper()
	rep := Inspect(bytes.NewReader(b), int64(len(b)))
	ps := uint64(rep.PageSize)
	var visit func(bucket string, p, parent uint64)
	visit = func(bucket string, p, parent uint64) {
		pg := b[p*ps : (p+1)*ps]
		flags, count := ne.Uint16(pg[8:]), int(ne.Uint16(pg[10:]))
		if overflow := uint64(ne.Uint32(pg[12:])); overflow > 0 {
			pg = b[p*ps : (p+1+overflow)*ps]
		}
		children, problem := pageElements(pg, flags, count)
		if problem != "" {
			t.Fatalf("the sample's page %d: %s", p, problem)
		}
		if flags == BranchPageFlag {
			br := branch{bucket: bucket, page: p, parent: parent}
			for _, c := range children {
				br.kids = append(br.kids, c.page)
			}
			out = append(out, br)
		} else {
			for i := range count {
				if ne.Uint32(pg[PageHeaderLen+i*16:])&bucketLeafFlag != 0 {
					bucketLeaves++ // inline buckets too: the walk cannot know before it reads
					break
				}
			}
		}
		for _, c := range children {
			name := bucket
			if c.name != nil {
				name = c.name(bucket)
			}
			visit(name, c.page, p)
		}
	}
	visit("", rep.Meta.Root, 0)
	return out, bucketLeaves
}

// countingReader counts the pages read through it.
type countingReader struct {
	r     *bytes.Reader
	ps    int64
	pages int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.pages += int((int64(len(p)) + c.ps - 1) / c.ps)
	return c.r.ReadAt(p, off)
}

// TestWalksOfASoundFile: neither walk finds anything in a sound file,
// and WalkBranches, which every open runs, reads a small part of it:
// the branch pages, the leaves holding buckets, and a leaf per level of
// records.
func TestWalksOfASoundFile(t *testing.T) {
	good, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	rep := Inspect(bytes.NewReader(good), int64(len(good)))
	if rep.Fatal != "" || rep.WriteFatal != "" || len(rep.Free) == 0 {
		t.Fatalf("the sample: %+v", rep)
	}
	all := &countingReader{r: bytes.NewReader(good), ps: int64(rep.PageSize)}
	if w := WalkTree(all, rep); w.Cut() || len(w.Problems) > 0 {
		t.Errorf("WalkTree: %q", w.Problems)
	}
	some := &countingReader{r: bytes.NewReader(good), ps: int64(rep.PageSize)}
	if w := WalkBranches(some, rep); w.Cut() || len(w.Problems) > 0 {
		t.Errorf("WalkBranches: %q", w.Problems)
	}
	brs, bucketLeaves := pages(t, good)
	buckets := map[string]bool{}
	for _, br := range brs {
		buckets[br.bucket] = true
	}
	if !buckets["records"] || !buckets["big"] || !buckets["outer"] || !buckets["outer/inner-150"] {
		t.Fatalf("the sample's branch pages are in buckets %v", buckets)
	}
	// Every branch page (and its first child, to know its level), and
	// every leaf holding buckets ("outer" has a few, and the root is
	// one), and no other.
	if limit := 2*len(brs) + bucketLeaves; some.pages > limit {
		t.Errorf("WalkBranches read %d pages, more than the %d branch pages, their first children and the %d leaves holding buckets (WalkTree: %d)", some.pages, len(brs), bucketLeaves, all.pages)
	}
	t.Logf("%d pages in use, %d branch pages, %d leaves holding buckets: WalkTree read %d pages, WalkBranches %d", rep.Meta.Pages, len(brs), bucketLeaves, all.pages, some.pages)
}

// TestWalksFindBranchDamage: a branch page pointing where bbolt's reads
// would go round for ever (at itself, at the page above it, at a page
// already in the tree, round a cycle of two, at a free page) or fault
// (past the end), in a bucket or a nested bucket, is found by both
// walks, naming its bucket; even when its first child is damaged too.
// The copy CopyCut makes of it walks clean, and bbolt reads every record
// in it but the cut ones.
func TestWalksFindBranchDamage(t *testing.T) {
	good, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	rep := Inspect(bytes.NewReader(good), int64(len(good)))
	ps := uint64(rep.PageSize)
	var root, left, right, nested branch
	for _, br := range branches(t, good) {
		switch {
		case br.bucket == "records" && root.page == 0:
			root = br
		case br.bucket == "records" && left.page == 0:
			left = br
		case br.bucket == "records" && right.page == 0:
			right = br
		case br.bucket == "outer/inner-150" && nested.page == 0:
			nested = br
		}
	}
	if right.page == 0 || nested.page == 0 || len(left.kids) < 40 {
		t.Fatal("the sample no longer has two levels of branch pages")
	}
	point := func(b []byte, at branch, i int, to uint64) {
		ne.PutUint64(b[at.page*ps+PageHeaderLen+uint64(i)*16+8:], to)
	}
	for _, d := range []struct {
		name, bucket string
		do           func(b []byte)
	}{
		{"itself", "records", func(b []byte) { point(b, left, 30, left.page) }},
		{"itself, first element", "records", func(b []byte) { point(b, left, 0, left.page) }},
		{"its parent", "records", func(b []byte) { point(b, left, 30, root.page) }},
		{"a page already in the tree", "records", func(b []byte) { point(b, left, 30, left.kids[3]) }},
		{"a free page", "records", func(b []byte) { point(b, left, 30, rep.Free[0]) }},
		{"past the end", "records", func(b []byte) { point(b, left, 30, rep.Meta.Pages+1000) }},
		{"a cycle of two", "records", func(b []byte) { point(b, left, 30, right.page); point(b, right, 0, left.page) }},
		{"itself, under a zeroed first child", "records", func(b []byte) {
			clear(b[left.kids[0]*ps : (left.kids[0]+1)*ps])
			point(b, left, 30, left.page)
		}},
		{"itself, in a nested bucket", "outer/inner-150", func(b []byte) { point(b, nested, 5, nested.page) }},
	} {
		t.Run(d.name, func(t *testing.T) {
			b := append([]byte(nil), good...)
			d.do(b)
			rep := Inspect(bytes.NewReader(b), int64(len(b)))
			for name, walk := range map[string]func(f *bytes.Reader, rep Report) Tree{
				"WalkTree":     func(f *bytes.Reader, rep Report) Tree { return WalkTree(f, rep) },
				"WalkBranches": func(f *bytes.Reader, rep Report) Tree { return WalkBranches(f, rep) },
			} {
				w := walk(bytes.NewReader(b), rep)
				if !w.Cut() || len(w.Problems) == 0 || !strings.Contains(w.Problems[0], fmt.Sprintf("bucket %q: page ", d.bucket)) {
					t.Errorf("%s: %v %q", name, w.Cut(), w.Problems)
				}
			}
			w := WalkTree(bytes.NewReader(b), rep)
			cut, err := CopyCut(bytes.NewReader(b), rep, w, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cb, err := os.ReadFile(cut)
			if err != nil {
				t.Fatal(err)
			}
			// The copy is a tree, but for its empty page, which stands
			// for every page cut off.
			crep := Inspect(bytes.NewReader(cb), int64(len(cb)))
			if crep.Fatal != "" {
				t.Fatalf("the copy: %s", crep.Fatal)
			}
			for _, p := range WalkTree(bytes.NewReader(cb), crep).Problems {
				if !strings.Contains(p, fmt.Sprintf("page %d is referenced by", rep.Meta.Pages)) {
					t.Fatalf("the copy: %s", p)
				}
			}
			db, err := bolt.Open(cut, 0o600, &bolt.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			n := 0
			if err := db.View(func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("records")).ForEach(func(k, v []byte) error { n++; return nil })
			}); err != nil {
				t.Fatal(err)
			}
			if d.bucket == "records" && (n == 0 || n >= 30_000) || d.bucket != "records" && n != 30_000 {
				t.Errorf("bbolt reads %d records of the copy's bucket records", n)
			}
		})
	}
}
