package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/boltfile"
	"weft/store/record"
)

// damage is one way of damaging a file: it changes b (the file's bytes)
// and returns what is left.
type damage struct {
	name string
	do   func(b []byte) []byte
	// tree marks damage to the B+tree's branch pages that bbolt's reads
	// would follow for ever (or until the stack overflows, which ends
	// the process): Open must refuse such a file, and Check and Salvage,
	// which walk the pages first, read past it.
	tree bool
}

// pristine builds, once, a real weft file: sessions of every shape (one
// spanning hundreds of pages and chunks), operations, import keys,
// preferences, a source mapping. bbolt lays out the pages of a
// transaction that writes several buckets in an order of its own (a map's),
// so the file is then copied a bucket per transaction, which lays it out
// the same way every run, and changed a few times so the freelist holds
// pages: the same damage hits the same record every run.
var pristine = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "weft-damage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weft.db")
	s, err := Open(path, Options{})
	if err != nil {
		return nil, err
	}
	writeCurrent(&testing.T{}, s, fixture())
	if err := s.Close(); err != nil {
		return nil, err
	}
	src, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	out := filepath.Join(dir, "pristine.db")
	dst, err := bolt.Open(out, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	err = src.View(func(stx *bolt.Tx) error {
		return stx.ForEach(func(name []byte, sb *bolt.Bucket) error {
			return dst.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket(name)
				if err != nil {
					return err
				}
				b.FillPercent = 1.0
				if err := b.SetSequence(sb.Sequence()); err != nil {
					return err
				}
				return sb.ForEach(func(k, v []byte) error { return b.Put(k, v) })
			})
		})
	})
	for i := 0; err == nil && i < 20; i++ {
		err = dst.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bktSessions)
			info, _, err := record.Decode("small", b.Get([]byte("small")))
			if err != nil {
				return err
			}
			info.Record(t0.Add(time.Duration(i)*time.Minute), "operator", "touched")
			return b.Put([]byte("small"), record.Append(nil, 3, &info))
		})
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(out)
})

// damages are the corruption patterns: truncations, zeroed pages, bit
// flips and overwritten bytes in the header pages, the freelist, the root
// page and data pages. The seed is fixed, so every run tries the same.
func damages(b []byte) []damage {
	rep := boltfile.Inspect(bytesReader(b), int64(len(b)))
	ps := rep.PageSize
	hwm := int(rep.Meta.Pages)
	r := rand.New(rand.NewPCG(10, 10))
	var out []damage
	for _, n := range []int{0, 100, ps, 2 * ps, 3*ps + 17, len(b) / 3, len(b) / 2, len(b) - ps, len(b) - 1} {
		out = append(out, damage{name: fmt.Sprintf("truncate to %d bytes", n), do: func(b []byte) []byte { return b[:n] }})
	}
	zero := func(pages ...int) damage {
		return damage{name: fmt.Sprintf("zero page %v", pages), do: func(b []byte) []byte {
			for _, p := range pages {
				clear(b[p*ps : (p+1)*ps])
			}
			return b
		}}
	}
	out = append(out, zero(0), zero(1), zero(0, 1), zero(int(rep.Meta.Freelist)), zero(int(rep.Meta.Root)))
	for range 6 {
		out = append(out, zero(2+r.IntN(hwm-2)))
	}
	flip := func(what string, off, bit int) damage {
		return damage{name: fmt.Sprintf("flip bit %d at byte %d (%s)", bit, off, what), do: func(b []byte) []byte {
			b[off] ^= 1 << bit
			return b
		}}
	}
	// The header pages: magic, page size, root, freelist, high-water
	// mark, txid, checksum; the active one and the other.
	for _, page := range []int{0, 1} {
		for _, field := range []int{0, 8, 16, 32, 40, 48, 56} {
			out = append(out, flip(fmt.Sprintf("header page %d", page), page*ps+boltfile.PageHeaderLen+field, r.IntN(8)))
		}
	}
	fl := int(rep.Meta.Freelist) * ps
	out = append(out, flip("freelist flags", fl+8, 0), flip("freelist count", fl+10, 3), flip("freelist entry", fl+boltfile.PageHeaderLen+1, 2))
	root := int(rep.Meta.Root) * ps
	out = append(out, flip("root page flags", root+8, 1), flip("root page count", root+10, 4), flip("root page element", root+boltfile.PageHeaderLen+4, 1))
	for range 40 {
		off := 2*ps + r.IntN(len(b)-2*ps)
		out = append(out, flip("data", off, r.IntN(8)))
	}
	out = append(out, branchDamages(b)...)
	for range 12 {
		off := 2*ps + r.IntN(len(b)-2*ps-64)
		out = append(out, damage{name: fmt.Sprintf("overwrite 64 bytes at %d", off), do: func(b []byte) []byte {
			for i := range 64 {
				b[off+i] = byte(r.Uint32())
			}
			return b
		}})
	}
	return out
}

// branchPage is a branch page of a bucket's B+tree.
type branchPage struct {
	bucket string
	page   int
	parent int // the bucket's root leaf (the top bucket's page) for a bucket's root
	kids   []int
}

// branchPages lists the file's branch pages, in the order a walk from
// the top bucket meets them.
func branchPages(b []byte) []branchPage {
	rep := boltfile.Inspect(bytesReader(b), int64(len(b)))
	ps := rep.PageSize
	var out []branchPage
	var visit func(bucket string, p, parent int)
	visit = func(bucket string, p, parent int) {
		pg := b[p*ps:]
		flags, count := ne.Uint16(pg[8:]), int(ne.Uint16(pg[10:]))
		switch {
		case flags == boltfile.BranchPageFlag:
			bp := branchPage{bucket, p, parent, nil}
			for i := range count {
				bp.kids = append(bp.kids, int(ne.Uint64(pg[boltfile.PageHeaderLen+i*16+8:])))
			}
			out = append(out, bp)
			for _, k := range bp.kids {
				visit(bucket, k, p)
			}
		case bucket == "": // the top bucket's leaf: the buckets' roots
			for i := range count {
				e := boltfile.PageHeaderLen + i*16
				pos, ks := int(ne.Uint32(pg[e+4:])), int(ne.Uint32(pg[e+8:]))
				if root := int(ne.Uint64(pg[e+pos+ks:])); root != 0 {
					visit(string(pg[e+pos:e+pos+ks]), root, p)
				}
			}
		}
	}
	visit("", int(rep.Meta.Root), 0)
	return out
}

// branchDamages are damage to branch pages of the messages' B+tree (two
// levels of branch pages: a root over two) and of the time index's (one):
// an element pointing at its own page, at the page above it, at another
// page already in the tree, at a free page, past the file's end, and two
// branch pages pointing at each other. The messages' first branch page
// below the root holds the first of session "long"'s messages, so every
// pattern costs that session messages; the others are left whole,
// except by the cycle.
func branchDamages(b []byte) []damage {
	rep := boltfile.Inspect(bytesReader(b), int64(len(b)))
	ps := rep.PageSize
	var msgs, left, right, bytime branchPage
	for _, bp := range branchPages(b) {
		switch {
		case bp.bucket == "msgs" && msgs.page == 0:
			msgs = bp
		case bp.bucket == "msgs" && left.page == 0:
			left = bp
		case bp.bucket == "msgs" && right.page == 0:
			right = bp
		case bp.bucket == "bytime" && bytime.page == 0:
			bytime = bp
		}
	}
	if right.page == 0 || bytime.page == 0 || len(left.kids) < 40 {
		panic("the fixture's messages no longer fill two levels of branch pages")
	}
	point := func(name string, at branchPage, i, to int) damage {
		return damage{name: fmt.Sprintf("%s: bucket %s's branch page %d element %d points at page %d", name, at.bucket, at.page, i, to), tree: true, do: func(b []byte) []byte {
			ne.PutUint64(b[at.page*ps+boltfile.PageHeaderLen+i*16+8:], uint64(to))
			return b
		}}
	}
	return []damage{
		point("itself", left, 30, left.page),
		point("itself, first element", left, 0, left.page),
		point("its parent", left, 30, msgs.page),
		point("a page already in the tree", left, 30, left.kids[3]),
		point("a free page", left, 30, int(rep.Free[0])),
		point("past the end", left, 30, int(rep.Meta.Pages)+1000),
		point("the time index's root", left, 30, bytime.page),
		point("itself", bytime, 5, bytime.page),
		{name: fmt.Sprintf("a cycle: bucket msgs's branch pages %d and %d point at each other", left.page, right.page), tree: true, do: func(b []byte) []byte {
			ne.PutUint64(b[left.page*ps+boltfile.PageHeaderLen+30*16+8:], uint64(right.page))
			ne.PutUint64(b[right.page*ps+boltfile.PageHeaderLen+8:], uint64(left.page))
			return b
		}},
	}
}

// returns runs fn and fails the test if it does not return within d: a
// read that loops over damaged pages must not hang the suite.
func returns[T any](t *testing.T, d time.Duration, what string, fn func() T) (T, bool) {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v, true
	case <-time.After(d):
		t.Errorf("%s did not return within %v", what, d)
		var zero T
		return zero, false
	}
}

// TestDamagedBranchPages: Check and Salvage of a file whose B+tree's
// branch pages point where they must not (round a cycle, at a free page,
// past the end) return, name the damaged page and its bucket and the
// session whose records it held, and copy every session that can be
// read, whole.
func TestDamagedBranchPages(t *testing.T) {
	t.Parallel()
	good, err := pristine()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pristinePath := filepath.Join(dir, "pristine.db")
	if err := os.WriteFile(pristinePath, good, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(pristinePath, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_, whole := readEverything(s)
	s.Close()
	for i, d := range branchDamages(good) {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, fmt.Sprintf("damaged-%02d.db", i))
			if err := os.WriteFile(path, d.do(append([]byte(nil), good...)), 0o600); err != nil {
				t.Fatal(err)
			}
			type result struct {
				findings []Finding
				err      error
			}
			res, ok := returns(t, 20*time.Second, d.name+": Check", func() result {
				f, err := Check(path)
				return result{f, err}
			})
			if !ok {
				return
			}
			if res.err != nil {
				t.Fatalf("%s: Check: %v", d.name, res.err)
			}
			bucket := strings.Fields(strings.SplitN(d.name, "bucket ", 2)[1])[0]
			bucket = strings.TrimSuffix(bucket, "'s")
			var page, session bool
			for _, f := range res.findings {
				page = page || strings.Contains(f.Problem, fmt.Sprintf("bucket %q: page ", bucket))
				session = session || f.Session == "long"
			}
			if !page || !session {
				t.Errorf("%s: Check names the damaged page and bucket %v, session \"long\" %v: %q", d.name, page, session, res.findings)
			}
			out := filepath.Join(dir, fmt.Sprintf("salvaged-%02d.db", i))
			type salvaged struct {
				rep SalvageReport
				err error
			}
			sv, ok := returns(t, 20*time.Second, d.name+": Salvage", func() salvaged {
				rep, err := Salvage(path, out)
				return salvaged{rep, err}
			})
			if !ok {
				return
			}
			if sv.err != nil {
				t.Fatalf("%s: Salvage: %v", d.name, sv.err)
			}
			if sv.rep.Sessions != 4 || len(sv.rep.Skipped) == 0 || !strings.Contains(sv.rep.Skipped[0], fmt.Sprintf("bucket %q: page ", bucket)) {
				t.Errorf("%s: Salvage: %d sessions, skipped %q", d.name, sv.rep.Sessions, sv.rep.Skipped)
			}
			if f, err := Check(out); err != nil || len(f) > 0 {
				t.Errorf("%s: the salvaged file does not check clean: %v, %v", d.name, f, err)
			}
			s, err := Open(out, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, after := readEverything(s)
			for _, id := range []string{"sorted", "small", "empty"} {
				if bucket == "msgs" && strings.HasPrefix(d.name, "a cycle") && id != "empty" {
					continue // the second branch page's first records are lost too
				}
				if !slices.Equal(after[id], whole[id]) {
					t.Errorf("%s: session %s holds %d records in the damaged file's salvage, %d in the file", d.name, id, len(after[id]), len(whole[id]))
				}
			}
		})
	}
}

// ne is the byte order bbolt writes its pages in.
var ne = binary.NativeEndian

// TestOpenRefusesDamagedBranchPages: a file whose branch pages point
// where bbolt's reads would follow them for ever (round a cycle, at a
// free page, at a page already in the tree) or fault (past the end) is
// refused by Open, read-only and read-write, with an error that names
// the damaged page and its bucket and says to run weft check and weft
// salvage; none is opened to be read.
func TestOpenRefusesDamagedBranchPages(t *testing.T) {
	t.Parallel()
	good, err := pristine()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, d := range branchDamages(good) {
		path := filepath.Join(dir, fmt.Sprintf("damaged-%02d.db", i))
		if err := os.WriteFile(path, d.do(append([]byte(nil), good...)), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, ro := range []bool{true, false} {
			err, ok := returns(t, 20*time.Second, d.name+": Open", func() error {
				s, err := Open(path, Options{ReadOnly: ro, Timeout: time.Second})
				if err == nil {
					s.Close()
				}
				return err
			})
			if !ok {
				continue
			}
			var de *DamagedError
			if !errors.As(err, &de) {
				t.Errorf("%s (read-only %v): Open: %v, want the file refused as damaged", d.name, ro, err)
				continue
			}
			for _, want := range []string{path + " is damaged", `bucket "`, ": page ", "weft check --db " + path, "weft salvage --db " + path} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s (read-only %v): Open's error does not say %q: %v", d.name, ro, want, err)
				}
			}
		}
	}
}

type bytesReader []byte

func (b bytesReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, errors.New("EOF")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errors.New("EOF")
	}
	return n, nil
}

// readEverything reads every session's every record through the Tx
// methods, returning the errors met and, for each session read without
// one, what it holds (its messages' digests and its operations' IDs).
func readEverything(s *Store) ([]error, map[string][]string) {
	var errs []error
	failed := false
	note := func(err error) {
		// Not found is an answer, not a failure: a session without
		// messages has no message 1.
		if err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
			failed = true
		}
	}
	var ids []string
	note(s.view(func(tx *Tx) error {
		all, bad := tx.AllSessions()
		errs = append(errs, bad...)
		for _, x := range all {
			ids = append(ids, x.ID)
		}
		return nil
	}))
	readable := map[string][]string{}
	for _, id := range ids {
		failed = false
		var held []string
		// One transaction per read: a damaged page ends the transaction
		// it is met in.
		reads := []func(tx *Tx) error{
			func(tx *Tx) error { _, err := tx.Session(id); return err },
			func(tx *Tx) error { _, err := tx.Heads(id); return err },
			func(tx *Tx) error { _, err := tx.LastSeq(id); return err },
			func(tx *Tx) error {
				return tx.Messages(id, 1, 1<<62, func(m model.Message) error { held = append(held, m.Digest); return nil })
			},
			func(tx *Tx) error { return tx.ScanContent(id, func(uint64, []byte) bool { return true }) },
			func(tx *Tx) error { return tx.TimeAscend(id, time.Time{}, func(uint64, int64) bool { return true }) },
			func(tx *Tx) error {
				return tx.TimeAscend(id, t0.Add(time.Hour), func(uint64, int64) bool { return true })
			},
			func(tx *Tx) error {
				ops, err := tx.Ops(id)
				for _, op := range ops {
					held = append(held, op.ID)
					if _, err := tx.OpSession(op.ID); err != nil && !errors.Is(err, ErrNotFound) {
						return err
					}
				}
				return err
			},
			func(tx *Tx) error { _, err := tx.Prefs(id); return err },
			func(tx *Tx) error { _, _, err := tx.ImportKey(id, id+"\x003"); return err },
			func(tx *Tx) error { _, err := tx.Message(id, 1); return err },
		}
		for _, read := range reads {
			note(s.view(read))
		}
		if !failed {
			readable[id] = held
		}
	}
	note(s.view(func(tx *Tx) error { tx.SourceSession("claude-code:abc"); return nil }))
	return errs, readable
}

// writeSomething makes the writes a session's edits make.
func writeSomething(s *Store) error {
	return s.update(func(tx *Tx) error {
		if err := tx.PutSession(model.Session{ID: "written", Title: "new"}); err != nil {
			return err
		}
		if err := tx.AppendMessages("written", []model.Message{msg(1, model.RoleUser, "hello", t0)}); err != nil {
			return err
		}
		last, err := tx.LastSeq("small")
		if err != nil {
			return err
		}
		if err := tx.AppendMessages("small", []model.Message{msg(last+1, model.RoleUser, "more", t0.Add(time.Hour))}); err != nil {
			return err
		}
		return tx.PutOp("small", model.Op{ID: "new-op", Type: model.OpTag, CreatedAt: t0})
	})
}

// TestDamagedFiles damages a real file in every way damages has, and
// for each: Check reports the damage, Salvage copies what can be read
// into a file that opens and checks clean, and opening the damaged file
// (read-only and read-write), reading everything in it and writing to it
// let no panic escape and no fault kill the process, with every error
// naming the file. (bbolt follows a damaged page number wherever it
// points, so what a pattern costs may differ between machines; that
// nothing escapes may not.)
func TestDamagedFiles(t *testing.T) {
	t.Parallel()
	good, err := pristine()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var st damageStats
	patterns := damages(good)
	t.Run("patterns", func(t *testing.T) {
		for i, d := range patterns {
			path := filepath.Join(dir, fmt.Sprintf("damaged-%02d.db", i))
			if err := os.WriteFile(path, d.do(append([]byte(nil), good...)), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
				t.Parallel()
				st.pattern(t, d.name, d.tree, path, filepath.Join(dir, fmt.Sprintf("salvaged-%02d.db", i)))
			})
		}
	})
	t.Logf("%d patterns × read-only and read-write: %d opens refused, %d opened with read errors, %d read cleanly",
		len(patterns), st.openErrs, st.readErrs, st.clean)
	t.Logf("errors met reading and writing: %d panics or faults caught, %d other damage, %d corrupt records, %d others",
		st.caught, st.damagedErrs, st.corruptErrs, st.otherErrs)
	t.Logf("Check: %d patterns with findings, %d without; Salvage: %d files written (%d sessions, %d placeholders), %d refused",
		st.checked, st.unchecked, st.salvaged, st.salvagedSessions, st.placeholders, st.unsalvaged)
}

type damageStats struct {
	mu                                          sync.Mutex
	openErrs, readErrs, clean                   int
	caught, damagedErrs, corruptErrs, otherErrs int
	checked, unchecked, salvaged, unsalvaged    int
	salvagedSessions, placeholders              int
}

// pattern runs one damaged file through Check, Salvage and Open, which
// refuses damage to the tree (see damage.tree).
func (st *damageStats) pattern(t *testing.T, name string, tree bool, path, out string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic escaped: %v", name, r)
		}
	}()
	findings, err := Check(path)
	if err != nil {
		t.Errorf("%s: Check: %v", name, err)
	}
	if testing.Verbose() {
		for _, f := range findings {
			t.Logf("%s: check: %.200s", name, f)
		}
	}
	if len(findings) > 0 {
		st.add(&st.checked, 1)
	} else {
		st.add(&st.unchecked, 1)
	}
	rep, err := Salvage(path, out)
	if err != nil {
		st.add(&st.unsalvaged, 1)
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Salvage error does not name the file: %v", name, err)
		}
		if testing.Verbose() {
			t.Logf("%s: salvage: %.200v", name, err)
		}
	} else {
		st.add(&st.salvaged, 1)
		st.add(&st.salvagedSessions, rep.Sessions)
		st.add(&st.placeholders, rep.Placeholders)
		if testing.Verbose() {
			t.Logf("%s: salvage: %d sessions, %d messages (%d placeholders), %d ops; skipped %.300q", name, rep.Sessions, rep.Messages, rep.Placeholders, rep.Ops, rep.Skipped)
		}
		if f, err := Check(out); err != nil || len(f) > 0 {
			t.Errorf("%s: the salvaged file does not check clean: %v, %v", name, f, err)
		}
	}
	var before map[string][]string
	for _, ro := range []bool{true, false} {
		s, err := Open(path, Options{ReadOnly: ro, Timeout: time.Second})
		if err == nil && tree {
			// Reading it could overflow the stack, which ends the
			// process.
			s.Close()
			t.Errorf("%s (read-only %v): Open took a file whose branch pages bbolt would follow for ever", name, ro)
			continue
		}
		if err != nil {
			if testing.Verbose() {
				t.Logf("%s (read-only %v): Open: %.200v", name, ro, err)
			}
			st.add(&st.openErrs, 1)
			if !strings.Contains(err.Error(), path) {
				t.Errorf("%s (read-only %v): Open error does not name the file: %v", name, ro, err)
			}
			if len(findings) == 0 && !strings.Contains(name, "truncate to 0") {
				t.Errorf("%s: Open refused the file but Check found nothing: %v", name, err)
			}
			continue
		}
		errs, readable := readEverything(s)
		if ro {
			before = readable
		} else if err := writeSomething(s); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
		s.Close()
		for _, err := range errs {
			st.classify(err)
			if !strings.Contains(err.Error(), path) {
				t.Errorf("%s (read-only %v): error does not name the file: %v", name, ro, err)
			}
			if testing.Verbose() {
				t.Logf("%s (read-only %v): %.200v", name, ro, err)
			}
		}
		if len(errs) > 0 {
			st.add(&st.readErrs, 1)
			if len(findings) == 0 {
				t.Errorf("%s: reading met errors but Check found nothing: %v", name, errs[0])
			}
		} else {
			st.add(&st.clean, 1)
		}
	}
	// Every session read whole from the damaged file is in the salvaged
	// one, whole.
	if len(before) > 0 {
		s, err := Open(out, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("%s: opening the salvaged file: %v", name, err)
		}
		defer s.Close()
		_, after := readEverything(s)
		for id, held := range before {
			if !slices.Equal(after[id], held) {
				t.Errorf("%s: session %s was readable (%d records) but the salvaged file has %d", name, id, len(held), len(after[id]))
			}
		}
	}
}

// add adds n to one of the counts.
func (st *damageStats) add(count *int, n int) {
	st.mu.Lock()
	*count += n
	st.mu.Unlock()
}

func (st *damageStats) classify(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var de *DamagedError
	switch {
	case errors.As(err, &de) && de.panicked:
		st.caught++
	case errors.As(err, &de):
		st.damagedErrs++
	case errors.Is(err, ErrCorrupt):
		st.corruptErrs++
	default:
		st.otherErrs++
	}
}

// TestScanContentStaysInTheFile: a record whose length fields were
// damaged so that its content would reach past the file is refused by
// ScanContent, which hands its slices to callers that read them on other
// goroutines, where a fault could not be caught.
func TestScanContentStaysInTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "weft.db")
	s := openT(t, path)
	putSession(t, s, "s")
	var ms []model.Message
	for i := range 200 {
		ms = append(ms, msg(uint64(i+1), model.RoleUser, fmt.Sprintf("marker-%03d %s", i+1, strings.Repeat("x", 100)), t0))
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms) })
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Find message 150's leaf element; make its value and its content's
	// length claim a gigabyte.
	found := false
	for p := 2; p*4096 < len(b) && !found; p++ {
		page := b[p*4096 : (p+1)*4096]
		if ne.Uint16(page[8:]) != boltfile.LeafPageFlag {
			continue
		}
		for i := range int(ne.Uint16(page[10:])) {
			e := boltfile.PageHeaderLen + i*16
			pos, ksize, vsize := int(ne.Uint32(page[e+4:])), int(ne.Uint32(page[e+8:])), int(ne.Uint32(page[e+12:]))
			if e+pos+ksize+vsize > len(page) {
				continue
			}
			v := page[e+pos+ksize : e+pos+ksize+vsize]
			if !strings.Contains(string(v), "marker-150 ") {
				continue
			}
			ne.PutUint32(page[e+12:], 1<<30)
			// The content's length is the uvarint after the 11-byte
			// header and the tokens' varint (one byte here).
			copy(v[12:], binary.AppendUvarint(nil, 1<<29))
			found = true
			break
		}
	}
	if !found {
		t.Fatal("message 150 is not in the file")
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	n := 0
	err = ro.view(func(tx *Tx) error {
		return tx.ScanContent("s", func(uint64, []byte) bool { n++; return true })
	})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Record != "message 150" {
		t.Errorf("ScanContent over the damaged record: %v", err)
	}
	if n != 149 {
		t.Errorf("ScanContent handed out %d contents before the damaged one, want 149", n)
	}
}

// TestReadSlicesAreInTheMap: a read transaction's contents are slices of
// bbolt's memory map, which inMap relies on to keep ScanContent's slices
// within the file (see inMap). If a bbolt upgrade copied values out,
// inMap would let everything through; this fails first.
func TestReadSlicesAreInTheMap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weft.db")
	s := openT(t, path)
	defer s.Close()
	putSession(t, s, "s")
	var ms []model.Message
	for i := range 50 {
		ms = append(ms, msg(uint64(i+1), model.RoleUser, fmt.Sprintf("message %d %s", i+1, strings.Repeat("y", 200)), t0))
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.AppendMessages("s", ms) })
	n := 0
	err := s.view(func(tx *Tx) error {
		start := tx.tx.DB().Info().Data
		end := start + uintptr(tx.tx.Size())
		return tx.ScanContent("s", func(seq uint64, content []byte) bool {
			n++
			p := uintptr(unsafe.Pointer(unsafe.SliceData(content)))
			if p < start || p+uintptr(len(content)) > end {
				t.Errorf("message %d's content is at %#x, outside the map [%#x, %#x): bbolt no longer hands out slices of its map, and inMap checks nothing", seq, p, start, end)
				return false
			}
			if !tx.inMap(content) {
				t.Errorf("message %d's content is in the map, and inMap says it is not", seq)
			}
			return true
		})
	})
	if err != nil || n != len(ms) {
		t.Fatalf("scanned %d of %d: %v", n, len(ms), err)
	}
}

// TestSalvageDamagedBranchPageIntoNewFolder: the copy Salvage reads a
// file with damaged pages from is made next to its output, and in the
// system's temporary folder when that folder is yet to be made.
func TestSalvageDamagedBranchPageIntoNewFolder(t *testing.T) {
	t.Parallel()
	good, err := pristine()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "damaged.db")
	if err := os.WriteFile(path, branchDamages(good)[0].do(append([]byte(nil), good...)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "new", "folder", "salvaged.db")
	rep, err := Salvage(path, out)
	if err != nil || rep.Sessions != 4 {
		t.Fatalf("Salvage into a new folder: %+v, %v", rep, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("the output's folder holds %d files, want the output alone", len(entries))
	}
}
