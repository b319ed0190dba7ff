package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"weft/model"
	"weft/store/boltfile"
	"weft/store/record"
)

// SalvageReport says what Salvage copied and what it could not read.
type SalvageReport struct {
	Sessions int `json:"sessions"`
	Messages int `json:"messages"`
	// Placeholders counts the messages that could not be read but were
	// followed by readable ones: each is stored as a system message saying
	// it was lost (Meta "weft.salvage": "lost"), so seqs, IDs and the
	// operations' targets keep their meaning.
	Placeholders int `json:"placeholders"`
	Ops          int `json:"operations"`
	ImportKeys   int `json:"import_keys"`
	Sources      int `json:"sources"`
	// Skipped says what could not be read, one line each, naming the
	// session and the record.
	Skipped []string `json:"skipped"`
}

// Salvage copies every session, message, operation, import key, pending
// preference and source mapping that can be read from the database at src
// (schema 1 or 2, damaged or not; opened read-only) into a new file at dst,
// created with the current schema. dst must not exist. What cannot be
// read is skipped and listed in the report: nothing src does makes it
// panic, nor keeps it going round a cycle of pages (a file with damaged
// pages is read from a copy in which they are cut off, made next to dst
// and removed after). A session whose record cannot be read is copied under a new
// record (times and counts from its messages); its record's message count
// and tokens always match what was copied, so the new file passes Check.
func Salvage(src, dst string) (SalvageReport, error) {
	var rep SalvageReport
	if _, err := os.Lstat(dst); err == nil {
		return rep, fmt.Errorf("%s already exists: salvage writes a new file, give a path that does not exist", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rep, err
	}
	db, schema, err := openDamaged(src)
	if err != nil {
		return rep, err
	}
	defer func() { _ = db.Close() }()
	// Damaged pages are read past in a copy made next to dst, which has
	// room for the file's records.
	pages, copied, done, err := damagedPages(src, filepath.Dir(dst))
	if err != nil {
		return rep, fmt.Errorf("salvaging %s: %w", src, err)
	}
	defer done()
	if copied != nil {
		db = copied
		if schema = fileSchema(db, src); schema > currentSchema {
			return rep, tooNew(src, schema)
		}
	}
	var lay layout = layout2{}
	if schema == 1 {
		lay = layout1{}
	}
	out, err := Open(dst, Options{NoCreate: false})
	if err != nil {
		return rep, err
	}
	out.db.NoSync = true // one sync at the end
	c := newCopier(db, src, lay, out, false)
	err = c.copyAll()
	if err == nil {
		out.db.NoSync = false
		err = out.db.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(dst)
		return rep, fmt.Errorf("salvaging %s into %s: %w", src, dst, err)
	}
	r := c.rep
	rep = SalvageReport{
		Sessions: r.sessions, Messages: r.messages, Placeholders: r.placeholders,
		Ops: r.ops, ImportKeys: r.keys, Sources: r.sources, Skipped: r.skipped,
	}
	if len(pages) > 0 {
		skipped := make([]string, 0, len(pages)+len(r.skipped))
		for _, p := range pages {
			skipped = append(skipped, p+": what it holds is not read")
		}
		rep.Skipped = append(skipped, r.skipped...)
	}
	if rep.Skipped == nil {
		rep.Skipped = []string{}
	}
	return rep, nil
}

// damagedTimeout is how long Check and Salvage wait for another process
// to let go of the file (tests shorten it).
var damagedTimeout = defaultTimeout

// openDamaged opens a file read-only for Check and Salvage: without the
// checks that make Open refuse a damaged file (reads are guarded anyway),
// and says which schema it looks like.
func openDamaged(path string) (*bolt.DB, uint32, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, 0, err
	} else if fi.IsDir() {
		return nil, 0, fmt.Errorf("%s is a folder, not a database file", path)
	}
	var db *bolt.DB
	err := guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: damagedTimeout})
		return err
	})
	if err != nil {
		var d *DamagedError
		if errors.As(err, &d) {
			return nil, 0, d
		}
		return nil, 0, openError(path, err)
	}
	schema := fileSchema(db, path)
	if schema > currentSchema {
		_ = db.Close()
		return nil, 0, tooNew(path, schema)
	}
	return db, schema, nil
}

// fileSchema says which schema an open file looks like; one that cannot be
// read is taken to be the current one.
func fileSchema(db *bolt.DB, path string) uint32 {
	schema := currentSchema
	_ = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			if v, _, err := readSchema(tx, path); err == nil {
				schema = v
			} else if tx.Bucket(bktThreads) != nil {
				schema = 1
			}
			return nil
		})
	})
	return schema
}

// damagedPages walks the pages of the file at path (held open, and
// locked, as db) and, when some cannot be followed, returns what was
// found and a database over a copy of the file in which they are cut off
// (boltfile.CopyCut, made in dir), to read instead of db: bbolt follows a page
// number wherever it points, round a cycle for ever, or until the stack
// overflows. done closes and removes the copy. A file whose header pages
// cannot be trusted is not walked (its reads are guarded).
func damagedPages(path, dir string) (problems []string, copied *bolt.DB, done func(), err error) {
	done = func() {}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, done, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, done, err
	}
	if fi.Size() == 0 {
		return nil, nil, done, nil
	}
	rep := boltfile.Inspect(f, fi.Size())
	w := boltfile.WalkTree(f, rep)
	if !w.Cut() {
		return w.Problems, nil, done, nil
	}
	copied, done, err = openCopy(path, f, rep, w, dir)
	if err != nil {
		return w.Problems, nil, func() {}, err
	}
	return w.Problems, copied, done, nil
}

// openCopy opens, read-only, a copy of the file at path (f) in which the
// page numbers the walk could not follow are cut off (boltfile.CopyCut,
// made in dir). done closes and removes it.
func openCopy(path string, f io.ReaderAt, rep boltfile.Report, w boltfile.Tree, dir string) (db *bolt.DB, done func(), err error) {
	cp, err := boltfile.CopyCut(f, rep, w, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("its records cannot be read past the damaged pages: copying them: %w", err)
	}
	err = guard(path, func() error {
		var err error
		db, err = bolt.Open(cp, 0o600, &bolt.Options{ReadOnly: true, Timeout: damagedTimeout})
		return err
	})
	if err != nil {
		_ = os.Remove(cp)
		return nil, nil, fmt.Errorf("its records cannot be read past the damaged pages: opening their copy: %w", err)
	}
	return db, func() { _ = db.Close(); _ = os.Remove(cp) }, nil
}

// msgCopier copies one session's messages.
type msgCopier struct {
	c     *copier
	p     place
	id    string
	limit uint64 // the record's message count; 0 when unknown

	next          uint64 // the next seq to copy
	copied        uint64 // seqs written, placeholders included
	tokens        int
	first, latest time.Time
	batch         []model.Message
	batchSize     int
	why           string // why the messages since copied+1 are missing
}

// run copies the messages, seq after seq. A panic while reading (a
// damaged page) costs the record it happened at: the scan starts again
// after it, in a new transaction.
func (mc *msgCopier) run() error {
	c := mc.c
	end := mc.limit
	if end == 0 || !c.strict {
		// The last stored seq, when the record's count is unknown or
		// may be wrong; a wild one (a damaged key) is not believed, nor
		// is a read that fails (end stays as it was).
		_ = c.view(func(tx *bolt.Tx) error {
			b, prefix := c.lay.records(tx, mc.p, bktMsgs)
			if b == nil {
				return nil
			}
			var k []byte
			if len(prefix) == numLen {
				k, _ = last(b, be32(prefix))
			} else {
				k, _ = b.Cursor().Last()
			}
			if len(k) == 8 && be64(k) <= mc.limit+1<<20 {
				end = max(end, be64(k))
			}
			return nil
		})
	}
	mc.next = 1
	for mc.next <= end {
		err := c.view(func(tx *bolt.Tx) error {
			b, prefix := c.lay.records(tx, mc.p, bktMsgs)
			if b == nil {
				mc.next = end + 1
				return nil
			}
			cur := b.Cursor()
			for k, v := cur.Seek(append(bytes.Clone(prefix), put64(mc.next)...)); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
				rest := k[len(prefix):]
				if len(rest) != 8 || be64(rest) < mc.next || be64(rest) > end {
					if err := c.problem("session %q: a message key %x is out of place: skipped", mc.id, rest); err != nil {
						return err
					}
					continue
				}
				seq := be64(rest)
				full := v
				var err error
				if len(prefix) == numLen { // an older layout has no stubs
					full, err = whole(tx, be32(prefix), seq, v)
				}
				m := model.Message{}
				if err == nil {
					m, err = record.DecodeMessage(full, seq)
				}
				if err != nil {
					mc.why = err.Error()
					if c.strict {
						return fmt.Errorf("session %q: message %d: %v", mc.id, seq, err)
					}
					continue
				}
				if err := mc.add(m); err != nil {
					return err
				}
			}
			mc.next = end + 1
			return nil
		})
		if err == nil {
			break
		}
		var d *DamagedError
		if c.strict || !errors.As(err, &d) {
			return err
		}
		mc.why = d.Detail
		mc.next++
	}
	if err := mc.flush(); err != nil {
		return err
	}
	if mc.copied < max(mc.limit, end) {
		why := mc.why
		if why == "" {
			why = "not in the file"
		}
		return c.problem("session %q: messages %d..%d cannot be read (%s): not copied", mc.id, mc.copied+1, max(mc.limit, end), why)
	}
	return nil
}

// add copies a message, after placeholders for the ones missing before it.
func (mc *msgCopier) add(m model.Message) error {
	if m.Seq > mc.copied+1 {
		why := mc.why
		if why == "" {
			why = "not in the file"
		}
		if err := mc.c.problem("session %q: messages %d..%d cannot be read (%s): stored as placeholders", mc.id, mc.copied+1, m.Seq-1, why); err != nil {
			return err
		}
		at := mc.latest
		if at.IsZero() {
			at = m.CreatedAt
		}
		for seq := mc.copied + 1; seq < m.Seq; seq++ {
			if err := mc.append(placeholder(seq, at, mc.c.srcPath)); err != nil {
				return err
			}
			mc.c.rep.placeholders++
		}
	}
	mc.why = ""
	mc.next = m.Seq + 1
	mc.c.rep.messages++
	return mc.append(m)
}

// placeholder stands for a message that could not be read.
func placeholder(seq uint64, at time.Time, path string) model.Message {
	content := fmt.Sprintf("[message %d could not be read from the damaged file %s]", seq, path)
	return model.Message{
		ID: model.MessageID(seq), Seq: seq, Role: model.RoleSystem, Content: content, CreatedAt: at,
		Digest: model.ContentDigest(model.RoleSystem, content),
		Meta:   map[string]string{"weft.salvage": "lost"},
	}
}

func (mc *msgCopier) append(m model.Message) error {
	mc.batch = append(mc.batch, m)
	mc.batchSize += record.MessageLen(&m, record.AsIs(&m)) // at most: parts as they are
	mc.copied = m.Seq
	mc.tokens += m.Tokens
	if mc.first.IsZero() {
		mc.first = m.CreatedAt
	}
	mc.latest = m.CreatedAt
	if mc.batchSize >= flushAt/4 {
		return mc.flush()
	}
	return nil
}

// flush queues the batch for the destination.
func (mc *msgCopier) flush() error {
	if len(mc.batch) == 0 {
		return nil
	}
	batch, id := mc.batch, mc.id
	size := mc.batchSize
	mc.batch, mc.batchSize = nil, 0
	return mc.c.write(size, func(tx *Tx) error { return tx.AppendMessages(id, batch) })
}
